# Real Inductor bug: pytorch/pytorch#188225
#   https://github.com/pytorch/pytorch/issues/188225
#   "[inductor] `index_propagation` `ValueError: The argument 'nan' is not comparable`"
#   A softmax over a tensor that Inductor folds to a NaN constant (arccosh of a log2 below 1): index
#   propagation evaluates the constant max/min with sympy, which cannot compare NaN, and the compile fails.
#   Eager gives NaN. Open on 2.11 (fix PR #188337 unmerged; reproduced on PyTorch 2.11.0+cu130, H200:
#   tests/real/gpu/index_prop_nan_188225.py).
# Failure kind: exception at compile time.
# What the user sees under torch 2.11 on CUDA (and 2.6 on the CPU):
#   torch._inductor.exc.InductorError: ValueError: The argument 'nan' is not comparable.
# Pattern embedded: an attention model whose logits get a fixed angular prior computed from constant
#   tensors (atan2 of the unit grid, its log2 distance and an arccosh warp, normalised by a softmax and
#   made finite by nan_to_num where it is undefined), three pre-norm attention blocks and a head.
# Forward graph handed to Inductor: 247 aten call_function nodes (291 nodes; PyTorch 2.6, CPU).
# Set REALBUG_DISABLE=1 to clamp the warp's argument into arccosh's domain: then it compiles and matches
# eager. It runs on the GPU when there is one; the bug shows on the CPU too (PyTorch 2.6 there: the same
# ValueError, raised in sympy), wherever the prior's softmax has at most 7 columns, which Inductor unrolls.
import math
import os

import torch
import torch.nn as nn

from user_model import AttentionMLPBlock, check_compiled

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
BUGGY_PRIOR = os.environ.get("REALBUG_DISABLE") != "1"


def angular_prior(n, device):
    """(n, n) weights from the angle of the unit grid; NaN where the warp is undefined becomes 0."""
    grid = torch.ones([n, n], device=device)
    distance = torch.log2(torch.atan2(grid, grid))
    if not BUGGY_PRIOR:
        distance = distance.clamp(min=1.0)
    return torch.nan_to_num(torch.softmax(torch.arccosh(distance), dim=-1), nan=0.0)


class PriorAttentionBlock(AttentionMLPBlock):
    def scores(self, q, k):
        return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + angular_prior(q.shape[-2], q.device)


class PriorTransformer(nn.Module):
    def __init__(self, din=16, d=32, classes=4, depth=3):
        super().__init__()
        self.inp = nn.Linear(din, d)
        self.blocks = nn.Sequential(*[PriorAttentionBlock(d) for _ in range(depth)])
        self.head = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, classes))

    def forward(self, x):
        return self.head(self.blocks(self.inp(x)).mean(dim=1))


def make():
    torch.manual_seed(0)
    model = PriorTransformer().eval().to(DEVICE)
    x = torch.randn(4, 6, 16, device=DEVICE)
    return model, [x]


if __name__ == "__main__":
    check_compiled(*make())
