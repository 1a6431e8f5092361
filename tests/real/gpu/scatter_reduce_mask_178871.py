# Issue #178871  https://github.com/pytorch/pytorch/issues/178871
# "Incorrect output for non-power-of-2-sized fusion of scalar broadcast and scatter-add"
#   (reported 2026-03-31, high priority, silent correctness, CUDA).
# Observed: when inductor fuses `x + bias` (scalar broadcast) with scatter_reduce(sum) into a 1x1
#   output, the generated kernel calls tl.atomic_add with mask=None (constant-index path), so the
#   XBLOCK - N out-of-range threads also add `bias`: compiled - eager == (next_pow2(N) - N) * bias,
#   non-zero for every non-power-of-2 N.
# Fix PR #179833 ("Fix missing mask on tl.atomic_add for constant-index stores") is from 2026-04,
#   after the 2.11 release -> expected to reproduce on 2.11.
# Reproduces on PyTorch 2.11.0+cu130, NVIDIA H200 (2026-11-26): REPRODUCED scatter_reduce(sum) into 1x1 output wrong for N=[3, 5, 7, 17], max abs diff 0.3055
import torch

import probe

NAME = "scatter_reduce_mask_178871"


def f(x, bias, idx):
    src = x + bias  # scalar broadcast fused with scatter by inductor
    out = torch.zeros(1, 1, device=x.device, dtype=x.dtype)
    return out.scatter_reduce(0, idx.unsqueeze(-1).expand_as(src), src, "sum", include_self=True)


def main():
    probe.setup(NAME)
    bad = []
    worst = 0.0
    for N in (3, 5, 7, 17):
        x = torch.randn(N, 1, device="cuda")
        bias = torch.tensor([0.020368], device="cuda")
        idx = torch.zeros(N, dtype=torch.long, device="cuda")
        ref = f(x, bias, idx)
        torch.compiler.reset()
        test = probe.compiled(f, x, bias, idx, fullgraph=True, dynamic=False)
        d = abs(test.item() - ref.item())
        print(f"N={N}: eager={ref.item():.6f} compiled={test.item():.6f} diff={d:.6f}")
        worst = max(worst, d)
        if d > 1e-4:
            bad.append(N)
    probe.report(bad, f"scatter_reduce(sum) into 1x1 output wrong for N={bad}, max abs diff {worst:.4g}", worst)


if __name__ == "__main__":
    main()
