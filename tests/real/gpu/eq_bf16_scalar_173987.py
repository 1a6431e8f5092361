# Issue #173987  https://github.com/pytorch/pytorch/issues/173987
# "Inductor produces different results from eager for aten.eq with BF16 tensor and FP32 scalar"
# Observed (CUDA, reported 2026-01-31, labelled high priority): eq(bf16_tensor, 3.14) differs between
#   eager and inductor. Eager rounds the Python scalar to bf16 (3.140625) before comparing; inductor
#   compares the fp32-upcast tensor against 3.14 (never equal) -> elements equal to bf16(3.14) are
#   True in eager, False in compiled.
# Fix PR #175807 "[inductor] Fix BF16/FP16 scalar comparison to match eager" merged ~2026-03-02,
#   after the 2.11 branch cut (~2026-02-17) -> expected to reproduce on 2.11 (unless cherry-picked).
# The issue used random data (mismatch only when an element happens to equal bf16(3.14)); here
#   some elements are set to 3.14 explicitly so the repro is deterministic.
# Reproduces on PyTorch 2.11.0+cu130, NVIDIA H200 (2026-11-26): REPRODUCED eq(bf16,3.14): 255/24576 elements differ (eager True=255, compiled True=0), max abs diff 1
import torch

import probe

NAME = "eq_bf16_scalar_173987"


def fn(x):
    return torch.ops.aten.eq(x, 3.14)


def main():
    probe.setup(NAME)
    x = torch.randn([3, 1, 64, 128], dtype=torch.bfloat16, device="cuda")
    x.view(-1)[::97] = 3.14  # stored as bf16 3.140625
    eager = fn(x)
    comp = probe.compiled(fn, x)
    n_e = int(eager.sum().item())
    n_c = int(comp.sum().item())
    mism = int((eager != comp).sum().item())
    print(f"eager True count={n_e}  compiled True count={n_c}  mismatches={mism}/{x.numel()}")
    probe.report(mism > 0, f"eq(bf16,3.14): {mism}/{x.numel()} elements differ (eager True={n_e}, "
                 f"compiled True={n_c}), max abs diff 1")


if __name__ == "__main__":
    main()
