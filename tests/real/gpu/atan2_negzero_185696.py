# Issue #185696  https://github.com/pytorch/pytorch/issues/185696
# "[Inductor] torch.atan2 yields incorrect result for x=0.0 with float16 on CUDA (loses signed zero)"
#   (open; reported 2026-05-30 on 2.13.0.dev20260521+cu130).
# Observed: torch.atan2(x, -x) with x = +0.0 gives pi (3.1406 fp16) in eager but 0.0 compiled
#   (max abs diff 3.1406): Triton's unary minus lowers `-x` to `0 - x`, which turns +0.0 into +0.0
#   instead of -0.0. Fix PRs #185834 (2026-06) / #194878 (2026-08) are well after 2.11, and the
#   `-x` codegen for neg is old -> expected to reproduce on 2.11.
# Reproduces on PyTorch 2.11.0+cu130, NVIDIA H200 (2026-11-26): REPRODUCED atan2(x,-x) at x=+0.0 wrong for float16,float32, max abs diff 3.142
import torch

import probe

NAME = "atan2_negzero_185696"


def fn(x):
    return torch.atan2(x, -x)


def main():
    probe.setup(NAME)
    worst = 0.0
    bad = []
    for dtype in (torch.float16, torch.float32):
        torch._dynamo.reset()
        x = torch.tensor([0.0, 5.960464477539063e-08, -5.960464477539063e-08], dtype=dtype, device="cuda")
        eager = fn(x)
        comp = probe.compiled(fn, x)
        d = (eager.float() - comp.float()).abs().max().item()
        print(dtype, "eager:", eager.tolist(), "compiled:", comp.tolist(), "diff", d)
        worst = max(worst, d)
        if d > 1e-3:
            bad.append(str(dtype).replace("torch.", ""))
    probe.report(bad, f"atan2(x,-x) at x=+0.0 wrong for {','.join(bad)}, max abs diff {worst:.4g}", worst)


if __name__ == "__main__":
    main()
