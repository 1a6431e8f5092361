# worker/accuracy.cpp's compare_outputs in Python, for the fault model: compiled outputs agree with
# eager if allclose, or else if their RMSE against the fp64 reference is within a multiple of
# eager's own (eager's imprecision is tolerated). Outputs are flat lists of leaves.
import math

import torch

TOLERANCE = 1e-3  # atol and rtol of allclose, as the worker's AccuracyOptions


def _as_real_double(tensor):
    real = torch.view_as_real(tensor.resolve_conj()) if tensor.is_complex() else tensor
    return real.detach().to(torch.float64)


def _rmse(reference, value):
    if reference.numel() == 0:
        return 0.0
    return (_as_real_double(reference) - _as_real_double(value)).pow(2).mean().sqrt().item()


def _tensor_agrees(index, ref, res, fp64s, strict):
    if ref.shape != res.shape:
        return False
    if not (ref.is_floating_point() or ref.is_complex()):
        # `accuracy` ignores bools and ints (a float error quantised into a flipped bool is not
        # what it minimises); `strict-accuracy` compares them exactly.
        return not strict or torch.equal(ref, res.to(ref.dtype))
    if torch.allclose(_as_real_double(ref), _as_real_double(res), TOLERANCE, TOLERANCE, equal_nan=True):
        return True
    if index >= len(fp64s) or not isinstance(fp64s[index], torch.Tensor):
        return False
    rmse_eager, rmse_compiled = _rmse(fp64s[index], ref), _rmse(fp64s[index], res)
    multiplier = 3.0 if res.dtype in (torch.float16, torch.bfloat16) else 2.0
    # A NaN eager RMSE: eager cannot compute this stably itself, nothing to hold the compiled graph to.
    return math.isnan(rmse_eager) or rmse_compiled <= multiplier * rmse_eager + TOLERANCE / 10


def outputs_agree(eager, compiled, fp64, strict):
    """eager, compiled: flat output lists; fp64: eager's outputs in float64, or None when unavailable."""
    if len(eager) != len(compiled):
        return False
    fp64s = fp64 if fp64 is not None else []
    for index, (ref, res) in enumerate(zip(eager, compiled)):
        if isinstance(ref, torch.Tensor) and isinstance(res, torch.Tensor):
            if not _tensor_agrees(index, ref, res, fp64s, strict):
                return False
        elif isinstance(ref, torch.Tensor) or isinstance(res, torch.Tensor) or ref != res:
            return False
    return True
