# Issue #174172  https://github.com/pytorch/pytorch/issues/174172
# "[Inconsistency] TorchInductor produce differnt results with eager about the copysign operator"
# Observed (CUDA, reported 2026-02-03 on a Feb-2026 main build, i.e. the 2.11 cycle):
#   torch.ops.aten.copysign(x, -0.0) under torch.compile(backend="inductor") returns +|x|
#   (6/6 elements mismatched, max abs diff ~3.5) while eager returns -|x|.
# Root cause: Triton's scalar_constant() drops the sign of a -0.0 literal. Fix PR #176035
#   (opened 2026-02-28, i.e. after the 2.11 branch cut of ~2026-02-17) -> expected to reproduce on 2.11.
# Reproduces on PyTorch 2.11.0+cu130, NVIDIA H200 (2026-11-26): REPRODUCED copysign(x,-0.0) sign wrong in 6/6 elements, max abs diff 5.288
import torch

import probe

NAME = "copysign_negzero_174172"


def fn(x):
    # -0.0 is a compile-time constant inside the graph (as in the aten call)
    return torch.ops.aten.copysign(x, -0.0)


def main():
    probe.setup(NAME)
    x = torch.randn(6, device="cuda")
    eager, comp, diff = probe.eager_vs_compiled(fn, x)
    sign_mismatch = int((torch.signbit(eager) != torch.signbit(comp)).sum().item())
    probe.report(sign_mismatch > 0,
                 f"copysign(x,-0.0) sign wrong in {sign_mismatch}/6 elements, max abs diff {diff:.4g}", diff)


if __name__ == "__main__":
    main()
