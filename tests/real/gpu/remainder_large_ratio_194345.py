# Issue #194345  https://github.com/pytorch/pytorch/issues/194345
# "[inductor][cuda] `torch.remainder` / `torch.fmod` wrong results under `torch.compile` on CUDA for
#  large |a/b| ratios" (2026-08-21, open; seen on 2.13.0+cu130 and 2.15.0.dev20260820).
# Observed: remainder(1e10, 1e-20) eager=2.64e-21 compiled=166.87; remainder(65504, 6e-8) wrong;
#   remainder/fmod(3.4e38, 1.4e-45) compiled gives -inf/NaN; bf16 remainder(3.39e38, 9.2e-41) wrong.
#   Eager CUDA uses fmod (+ sign fix); inductor's float remainder/fmod lowering goes through
#   a - b * (a / b)-style arithmetic that loses everything when |a/b| is huge.
# The lowering is long-standing (unchanged across 2.13/2.15) -> expected to reproduce on 2.11.
# Reproduces on PyTorch 2.11.0+cu130, NVIDIA H200 (2026-11-26): REPRODUCED 5/5 cases wrong; first: remainder(1e+10,1e-20,float32)->166.87 vs 2.64181e-21
import math

import torch

import probe

NAME = "remainder_large_ratio_194345"


def main():
    probe.setup(NAME)
    cases = [
        (torch.remainder, 1e10, 1e-20, torch.float32),
        (torch.remainder, 65504.0, 6e-8, torch.float32),
        (torch.remainder, 3.4e38, 1.4e-45, torch.float32),
        (torch.fmod, 3.4e38, 1.4e-45, torch.float32),
        (torch.remainder, 3.39e38, 9.2e-41, torch.bfloat16),
    ]
    bad = []
    for fn, a, b, dtype in cases:
        x = torch.tensor([a], dtype=dtype, device="cuda")
        y = torch.tensor([b], dtype=dtype, device="cuda")
        e = fn(x, y)
        torch._dynamo.reset()
        c = probe.compiled(fn, x, y)
        ev, cv = e.float().item(), c.float().item()
        yv = abs(y.float().item())
        ok = (math.isnan(ev) and math.isnan(cv)) or (
            math.isfinite(cv) and abs(ev - cv) <= max(1e-3 * abs(ev), 1e-2 * yv, 1e-44))
        print(f"{fn.__name__}({a}, {b}) {dtype}: eager={ev!r} compiled={cv!r} {'ok' if ok else 'MISMATCH'}")
        if not ok:
            bad.append(f"{fn.__name__}({a:g},{b:g},{str(dtype).replace('torch.', '')})->{cv:g} vs {ev:g}")
    probe.report(bad, f"{len(bad)}/5 cases wrong; first: {bad[0] if bad else ''}",
                 clean="compiled matches eager in all 5 cases")


if __name__ == "__main__":
    main()
