# Real Inductor bug: pytorch/pytorch#181624
#   https://github.com/pytorch/pytorch/issues/181624
#   "`InductorError: AssertionError` in `simplify_and_reorder` during scheduler node fusion for model with
#   `unfold → scaled_dot_product_attention → roll → LayerNorm`"
#   (torch/_inductor/ir.py, ComputedBuffer.simplify_and_reorder:
#    `assert all(isinstance(f, Expr) for f in extra_indexing_expr)`, reached from the CPP backend's
#    fuse -> recompute_size_and_body when the LayerNorm + nan_to_num node is fused with its producer.)
# Failure kind: exception at compile time (an assertion with an empty message).
# What the user sees under torch 2.6 CPU (deterministic):
#   torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:
#   AssertionError:
# Pattern embedded: windowed self-attention over a feature vector: hardswish features (B, F) are cut into
#   overlapping windows with unfold, attended with scaled_dot_product_attention, rolled, LayerNorm-ed over
#   the window and cleaned with nan_to_num; an MLP encoder before it and an MLP head after it.
# Forward graph handed to Inductor: 161 call_function nodes (one graph).
# Set REALBUG_DISABLE=1 to drop the nan_to_num (a no-op here: the values are finite): then it compiles and
# matches eager.
import functools
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

from user_model import ResidualMLP, check_compiled

BUGGY_CLEANUP = os.environ.get("REALBUG_DISABLE") != "1"


class WindowAttention(nn.Module):
    def __init__(self, window):
        super().__init__()
        self.window = window
        self.norm = nn.LayerNorm([window])

    def forward(self, feats):                                   # (B, F)
        w = F.hardswish(feats).unfold(1, self.window, 1)         # (B, F - window + 1, window)
        w = F.scaled_dot_product_attention(w, w, w)
        w = self.norm(torch.roll(w, 1, 2))
        if BUGGY_CLEANUP:
            w = torch.nan_to_num(w)
        return w.flatten(1)                                      # (B, (F - window + 1) * window)


Block = functools.partial(ResidualMLP, act=F.silu)   # residual MLP blocks with SiLU


class WindowAttentionNet(nn.Module):
    def __init__(self, din=20, d=32, window=4, classes=6):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(din, d), Block(d), Block(d), Block(d))
        self.attend = WindowAttention(window)
        self.proj = nn.Linear((d - window + 1) * window, d)
        self.head = nn.Sequential(Block(d), Block(d), Block(d), nn.LayerNorm(d), nn.Linear(d, classes))

    def forward(self, x):
        h = self.encoder(x)
        h = h + self.proj(self.attend(h))
        return self.head(h)


def make():
    torch.manual_seed(0)
    model = WindowAttentionNet().eval()
    x = torch.randn(8, 20)
    return model, [x]


if __name__ == "__main__":
    check_compiled(*make())
