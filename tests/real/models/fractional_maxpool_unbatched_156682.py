# Real Inductor bug: pytorch/pytorch#156682
#   https://github.com/pytorch/pytorch/issues/156682
#   "[inductor] `F.fractional_max_pool2d` throws `AssertionError` on Inductor when input `rank=3`"
#   Inductor's fractional_max_pool2d lowering assumes a batched (N, C, H, W) input; an unbatched (C, H, W)
#   input gives its index a rank the layout's strides do not have (fixed by pytorch/pytorch#156912, 2025-07).
# Failure kind: exception at compile time (an assertion with an empty message, in torch/_inductor/ir.py
#   Layout indexer: `assert len(index) == len(self.stride)`).
# What the user sees under torch 2.6 CPU (deterministic):
#   torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:
#   AssertionError:
#   (The issue's own tiny repro, a (1, 2, 2) input pooled to (1, 1), raises a different error on 2.6:
#   LoweringException: ZeroDivisionError: division by zero.)
# Pattern embedded: a conv feature extractor run on one unbatched image (C, H, W), as conv layers allow,
#   with nn.FractionalMaxPool2d in the middle; an MLP head after it.
# Inductor config: torch._inductor.config.fallback_random = True (as in the report) so that compiled and
#   eager draw the same pooling samples and can be compared when the bug is disabled; the bug does not need it.
# Forward graph handed to Inductor: 162 call_function nodes (one graph).
# Set REALBUG_DISABLE=1 to pool a batched view (x[None] ... [0]) instead: then it compiles and matches eager.
import functools
import os

import torch
import torch._inductor.config
import torch.nn as nn

from user_model import ConvNormAct, ResidualMLP, check_compiled

torch._inductor.config.fallback_random = True
BUGGY_UNBATCHED_POOL = os.environ.get("REALBUG_DISABLE") != "1"


ConvAct = functools.partial(ConvNormAct, act=nn.SiLU, norm=False)   # 3x3 conv + SiLU


class SingleImageNet(nn.Module):
    def __init__(self, width=16, d=64, classes=10):
        super().__init__()
        self.stem = nn.Sequential(ConvAct(3, width), ConvAct(width, width), ConvAct(width, width))
        self.pool = nn.FractionalMaxPool2d(2, output_size=(12, 12))
        self.body = nn.Sequential(ConvAct(width, width), ConvAct(width, width), nn.AdaptiveAvgPool2d(4))
        self.proj = nn.Linear(width * 16, d)
        self.head = nn.Sequential(ResidualMLP(d), ResidualMLP(d), ResidualMLP(d), ResidualMLP(d), ResidualMLP(d),
                                  nn.LayerNorm(d), nn.Linear(d, classes))

    def forward(self, image):                      # (3, H, W), no batch dimension
        f = self.stem(image)
        f = self.pool(f) if BUGGY_UNBATCHED_POOL else self.pool(f[None])[0]
        f = self.body(f)
        return self.head(self.proj(f.flatten()))


def make():
    torch.manual_seed(0)
    model = SingleImageNet().eval()
    image = torch.randn(3, 24, 24)
    return model, [image]


if __name__ == "__main__":
    check_compiled(*make())
