# Issue #188225  https://github.com/pytorch/pytorch/issues/188225
# "[inductor] `index_propagation` `ValueError: The argument 'nan' is not comparable`"
#   (2026-06-26, open; fix PR #188337 still open).
# Observed: compiling softmax(arccosh(log2(atan2(ones, ones)))) - a graph that constant-folds to
#   NaN - crashes in inductor codegen: InductorError: ValueError: The argument 'nan' is not
#   comparable (sympy Max/Min on a NaN constant in torch/_inductor/index_propagation.py). Eager
#   returns a NaN tensor. The issue repro ran on CPU; the failing code (index propagation over
#   ops.constant) is device-independent, so the same graph is compiled on CUDA here.
# Kind: compile-time exception. Index propagation of constant max/min predates 2.11 -> expected
#   to reproduce on 2.11 (not verified against 2.11 itself).
# Reproduces on PyTorch 2.11.0+cu130, NVIDIA H200 (2026-11-26): REPRODUCED InductorError: ValueError: The argument 'nan' is not comparable.
import torch

import probe

NAME = "index_prop_nan_188225"

_sm = torch.nn.Softmax(dim=-1).eval()


def model():
    t0 = torch.ones([2, 2], device="cuda")
    t1 = torch.atan2(t0, t0)
    t2 = torch.log2(t1)
    t3 = torch.arccosh(t2)
    return _sm(t3)


def main():
    probe.setup(NAME)
    eager = model()
    print("eager OK:", eager.tolist())
    try:
        with torch.no_grad():
            comp = torch.compile(model, backend="inductor")()
        torch.cuda.synchronize()
    except Exception as e:
        key = probe.key_line(e, "not comparable")
        if "not comparable" in key or isinstance(e, ValueError):
            probe.result(True, f"{type(e).__name__}: {key[:200]}")
        probe.result(False, f"(different exception {type(e).__name__}: {probe.key_line(e)[:200]})")
    same = torch.equal(torch.isnan(eager), torch.isnan(comp))
    probe.result(False, f"compiled ran ({'NaN pattern matches eager' if same else 'NaN pattern differs'})")


if __name__ == "__main__":
    main()
