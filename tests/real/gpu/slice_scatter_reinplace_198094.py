# Issue #198094  https://github.com/pytorch/pytorch/issues/198094
# "[inductor] Scatter result reinplaced into a graph input that a later, unrelated mutation
#  overwrites: y = slice_scatter(x, src); x.zero_(); return y returns zeros" (2026-09-22, open).
# Observed (CUDA): eager returns [0, 1, 2, 3, 4, 5, -6, -5, ...], inductor returns all zeros:
#   the reinplacing pass writes the functional slice_scatter result into x's buffer because a
#   copy_ epilogue into x exists, and the later x.zero_() then overwrites the returned value.
#   Same for `y = diagonal_scatter(x, x.diagonal()); x.fill_(2); return y` (returns all 2s).
# The scatter reinplacing (#116789, 2024) and its can_inplace rule predate 2.11; fix PR #198096 is
#   still open -> expected to reproduce on 2.11 (likely, not verified against 2.11 itself).
# Reproduces on PyTorch 2.11.0+cu130, NVIDIA H200 (2026-11-26): REPRODUCED returned scatter result overwritten by later input mutation (slice_scatter+zero_, diagonal_scatter+fill_), max abs diff 23
import torch

import probe

NAME = "slice_scatter_reinplace_198094"


def fn_slice(x, src):
    y = torch.slice_scatter(x, src[1:3], dim=0, start=1, end=3)  # fresh tensor in eager
    x.zero_()
    return y


def fn_diag(x):
    y = torch.diagonal_scatter(x, x.diagonal())  # value-wise no-op, fresh tensor in eager
    x.fill_(2)
    return y


def main():
    probe.setup(NAME)
    bad = []
    worst = 0.0

    torch._dynamo.reset()
    x = torch.arange(24, dtype=torch.int64, device="cuda").reshape(4, 6)
    src = torch.arange(-12, 12, dtype=torch.int64, device="cuda").reshape(4, 6)
    xe, xc = x.clone(), x.clone()
    e = fn_slice(xe, src.clone())
    c = probe.compiled(fn_slice, xc, src.clone())
    print("slice_scatter  eager   :", e.flatten().tolist()[:8])
    print("slice_scatter  compiled:", c.flatten().tolist()[:8])
    d = (e - c).abs().max().item()
    worst = max(worst, float(d))
    if not torch.equal(e, c) or not torch.equal(xe, xc):
        bad.append("slice_scatter+zero_")

    torch._dynamo.reset()
    x = torch.randn(5, 5, device="cuda")
    xe, xc = x.clone(), x.clone()
    e = fn_diag(xe)
    c = probe.compiled(fn_diag, xc)
    d = (e - c).abs().max().item()
    print("diagonal_scatter eager[0]   :", e[0].tolist())
    print("diagonal_scatter compiled[0]:", c[0].tolist())
    worst = max(worst, float(d))
    if not torch.allclose(e, c) or not torch.allclose(xe, xc):
        bad.append("diagonal_scatter+fill_")

    probe.report(bad, f"returned scatter result overwritten by later input mutation ({', '.join(bad)}), "
                 f"max abs diff {worst:.4g}", worst)


if __name__ == "__main__":
    main()
