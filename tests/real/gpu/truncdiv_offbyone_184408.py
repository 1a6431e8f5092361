# Issue #184408  https://github.com/pytorch/pytorch/issues/184408
# "`torch.div(rounding_mode='trunc')` produces off-by-one results under `torch.compile` on CUDA"
#   (2026-05-19, open, high priority).
# Observed (CUDA): a=[14.999999, 26.999999, 13.999999], b=[3,3,7] -> eager [4, 8, 1], compiled
#   [5, 9, 2]; a=[148, 1073, 2112], b=[37, 37, 33] (exact quotients 4, 29, 64) -> compiled rounds
#   below the true value. Cause: trunc(a / b) uses Triton's approximate fp32 division; the floor
#   path was switched to div_rn (#177926, 2026-03, also after 2.11) but trunc was not.
# Fix PRs (#184680, #186252, #198028) are all 2026-05..09 -> expected to reproduce on 2.11.
# Reproduces on PyTorch 2.11.0+cu130, NVIDIA H200 (2026-11-26): REPRODUCED trunc division off by one in 6/6 elements, max abs diff 1
import torch

import probe

NAME = "truncdiv_offbyone_184408"


def div_trunc(a, b):
    return torch.div(a, b, rounding_mode="trunc")


def main():
    probe.setup(NAME)
    cases = [
        ("near-integer", torch.tensor([14.999999, 26.999999, 13.999999], device="cuda"),
         torch.tensor([3.0, 3.0, 7.0], device="cuda")),
        ("exact-integer", torch.tensor([148.0, 1073.0, 2112.0], device="cuda"),
         torch.tensor([37.0, 37.0, 33.0], device="cuda")),
    ]
    compiled = torch.compile(div_trunc, backend="inductor")
    worst = 0.0
    nbad = 0
    for label, a, b in cases:
        e = div_trunc(a, b)
        c = probe.call(compiled, a.clone(), b.clone())
        print(f"{label}: eager={e.tolist()} compiled={c.tolist()}")
        worst = max(worst, (e - c).abs().max().item())
        nbad += int((e != c).sum().item())
    probe.report(nbad, f"trunc division off by one in {nbad}/6 elements, max abs diff {worst:.4g}", worst)


if __name__ == "__main__":
    main()
