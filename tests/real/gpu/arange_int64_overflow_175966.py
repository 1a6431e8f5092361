# Issue #175966  https://github.com/pytorch/pytorch/issues/175966
# "Silently incorrect results for torch.arange + Inductor" (2026-02-27, open, labels pt2: ubn,
#  PT2-Bug-Bash). Duplicate report #183901 "torch.compile produces int32-overflowed results for
#  int64 arange multiplication on CUDA" (repro agent confirmed on 2.13.0.dev20260514 / H100).
# Observed (CUDA): arange(0, 11, dtype=int64) * tensor([10**9], int64) gives
#   [0, 1e9, 2e9, -1294967296, -294967296, ...] under inductor: the product is computed in int32
#   in the generated Triton kernel; eager/aot_eager give [0, 1e9, ..., 1e10].
# Reported during the 2.11 cycle and still open months later -> expected to reproduce on 2.11.
# Reproduces on PyTorch 2.11.0+cu130, NVIDIA H200 (2026-11-26): REPRODUCED int64 arange*1e9 overflowed in compiled kernel (8/11 wrong), max abs diff 8589934592
import torch

import probe

NAME = "arange_int64_overflow_175966"


def kek(x):
    return torch.arange(0, 11, device=x.device, dtype=torch.int64) * torch.tensor(
        [int(1e9)], dtype=torch.int64, device=x.device
    )


def main():
    probe.setup(NAME)
    x = torch.zeros(1, device="cuda")
    eager, comp, d = probe.eager_vs_compiled(kek, x)
    n = int((eager != comp).sum().item())
    probe.report(not torch.equal(eager, comp),
                 f"int64 arange*1e9 overflowed in compiled kernel ({n}/11 wrong), max abs diff {d}", d)


if __name__ == "__main__":
    main()
