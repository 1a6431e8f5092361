# Issue #175154  https://github.com/pytorch/pytorch/issues/175154
# "[inductor/aot_eager] interpolate under torch.compile produces incorrect result when mode is `nearest`"
#   (open, high priority; reported 2026-02-17 on torch 2.11.0.dev20260209). Follow-up #198201
#   (2026-09-22, open): "interpolate(mode='nearest') resamples a spatial dimension whose size is unchanged".
# Observed: F.interpolate(x, scale_factor=1.3, mode='nearest') on x=[[[[1,2]]]] gives [1,2] in eager
#   but [1,1] compiled: eager treats a spatial dim whose output size == input size as identity,
#   while the decomposition / inductor lowering resamples it with floor(i / scale).
# The issue repro is CPU; the CUDA eager kernel (UpSampleNearest2d.cu) has the same identity rule
#   (`height1 == height2 ? h2 : ...` and a full copy when sizes are equal), so the mismatch shows on
#   CUDA too. Fix attempts (#178513, #184848) are from 2026-03..05, after 2.11 -> expected on 2.11.
# Reproduces on PyTorch 2.11.0+cu130, NVIDIA H200 (2026-11-26): REPRODUCED nearest interpolate with same-size dim differs from eager in 2/2 cases, max abs diff 4
import torch
import torch.nn.functional as F

import probe

NAME = "interp_nearest_samesize_175154"


def f1(x):
    return F.interpolate(x, scale_factor=1.3, mode="nearest")


def f2(x):
    return F.interpolate(x, scale_factor=(1.3, 1.5), mode="nearest")


def main():
    probe.setup(NAME)
    cases = [
        ("scale=1.3 on [[[[1,2]]]] (issue #175154)", f1,
         torch.tensor([[[[1.0, 2.0]]]], device="cuda")),
        ("scale=(1.3,1.5) on 3x4 arange (issue #198201)", f2,
         torch.arange(12, dtype=torch.float32, device="cuda").reshape(1, 1, 3, 4)),
    ]
    worst = 0.0
    bad = []
    for label, fn, x in cases:
        torch._dynamo.reset()
        eager = fn(x)
        comp = probe.compiled(fn, x)
        if eager.shape != comp.shape:
            bad.append(label)
            print(label, "shape mismatch", eager.shape, comp.shape)
            continue
        d = (eager - comp).abs().max().item()
        print(label, "\n  eager   :", eager.flatten().tolist(), "\n  compiled:", comp.flatten().tolist())
        worst = max(worst, d)
        if d > 0:
            bad.append(label)
    probe.report(bad, f"nearest interpolate with same-size dim differs from eager in {len(bad)}/2 cases, "
                 f"max abs diff {worst:.4g}", worst)


if __name__ == "__main__":
    main()
