# Real Inductor bug: pytorch/pytorch#188228
#   https://github.com/pytorch/pytorch/issues/188228
#   "[inductor] CPP backend `KeyError: 'bufN'` in outer-loop fusion (`loop_body.get_read_expr`)"
#   (deterministic form of the repro from the thread / #196570: an attention mask built with
#   torch.full + an index_put mutation, added to 2-D scores and soft-maxed).
# Failure kind: exception at compile time (CPP backend, default config).
# What the user sees under torch 2.6 CPU:
#   torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:
#   KeyError: 'buf10'
#   (raised by torch/_inductor/loop_body.py get_read_expr, called from cpp.py outer-loop fusion's
#   local-buffer promotion: the promoted buffer is a mutation output whose users read the buffer it mutates).
# The bug needs the mask to be built per block (one consumer) and the scores to be 2-D (no batch dim).
# Forward graph handed to Inductor: 189 call_function nodes (one graph).
# Set REALBUG_DISABLE=1 to build the (identical, all-zero) mask with torch.zeros instead: then it compiles
# and matches eager.
import math
import os

import torch
import torch.nn as nn

from user_model import AttentionMLPBlock, check_compiled

BUGGY_MASK = os.environ.get("REALBUG_DISABLE") != "1"


class SetAttentionBlock(AttentionMLPBlock):
    """Pre-norm self-attention over an unbatched set of tokens (N, D), then an MLP."""

    def attention_mask(self, n):
        if BUGGY_MASK:
            mask = torch.full((n, n), -10000.0)
            mask[torch.arange(n).unsqueeze(0), torch.arange(n).unsqueeze(1)] = 0  # every pair may attend
            return mask
        return torch.zeros(n, n)

    def scores(self, q, k):
        return q @ k.t() / math.sqrt(q.shape[-1]) + self.attention_mask(q.shape[0])


class PointSetNet(nn.Module):
    def __init__(self, cin=6, d=32, depth=3, classes=4):
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(cin, d), nn.ReLU(), nn.Linear(d, d))
        self.blocks = nn.ModuleList(SetAttentionBlock(d) for _ in range(depth))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Sequential(nn.Linear(d, d), nn.SiLU(), nn.Linear(d, classes))

    def forward(self, points):
        x = self.embed(points)
        for block in self.blocks:
            x = block(x)
        x = self.norm(x)
        return self.head(x).log_softmax(dim=-1), x.mean(dim=0)


def make():
    torch.manual_seed(0)
    model = PointSetNet().eval()
    points = torch.randn(16, 6)
    return model, [points]


if __name__ == "__main__":
    check_compiled(*make(), names=("log-probs", "mean"))
