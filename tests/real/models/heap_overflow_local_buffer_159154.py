# Real Inductor bug: pytorch/pytorch#159154
#   https://github.com/pytorch/pytorch/issues/159154
#   "`torch.compile` generates wrong code that leads to corrupted memory"
#   (CPP backend outer-loop fusion allocates the function-local buffer for exp(-L*x) with the size of the
#   innermost dim only (32 floats) while the fused inner loops write 1*32*32 floats into it.)
# Failure kind: crash (heap overflow in the generated C++ kernel corrupts the malloc heap).
# What the user sees under torch 2.6 CPU (Debian's python3-torch 2.6.0): the process dies in the compiled
#   forward (the next malloc/free, often inside the following oneDNN convolution), nondeterministically one of
#     free(): corrupted unsorted chunks / free(): chunks in smallbin corrupted / corrupted double-linked list /
#     malloc(): smallbin double linked list corrupted   -> SIGABRT, exit status 134
#     (no message)                                       -> SIGSEGV, exit status 139
#   Crashes in 5/5 runs with UCX_HANDLE_ERRORS=none (set below). Without it, the UCX library that Debian's
#   torch loads installs a SIGSEGV handler which calls free() inside the handler and deadlocks on the
#   corrupted heap's lock: the run then HANGS (3 of 5 runs hung past `timeout 120`). Run with
#   UCX_HANDLE_ERRORS=bt to see that.
# Pattern embedded: a temperature-scaled spatial softmax of a 1-channel heatmap (B, 1, 32, 32) written with
#   einsum as in the report (the temperature is an input, as Ls is there), between a conv trunk and a head.
# Forward graph handed to Inductor: 169 call_function nodes (one graph).
# Set REALBUG_DISABLE=1 to normalise with softmax over the flattened map instead (same math): then the
# model compiles, runs, matches eager and exits cleanly.
import os

os.environ.setdefault("UCX_HANDLE_ERRORS", "none")  # must precede `import torch`; see above (crash, not hang)

import torch
import torch.nn as nn

from user_model import ConvNormAct as ConvBNAct, check_compiled

BUGGY_NORMALISATION = os.environ.get("REALBUG_DISABLE") != "1"


def heatmap_normalise(heat, temperature):
    """exp(-t_i * heat_i) / sum(exp(-t_i * heat_i)) for each sample i."""
    if BUGGY_NORMALISATION:
        arr = -torch.einsum("i...,i->i...", heat, temperature)
        e = torch.exp(arr)
        total = torch.einsum("i...->i", e)
        return torch.einsum("i,i...->i...", 1 / total, e)
    b = heat.shape[0]
    return torch.softmax(-heat.reshape(b, -1) * temperature[:, None], dim=1).reshape(heat.shape)


class HeatmapPoolNet(nn.Module):
    def __init__(self, width=16, classes=10):
        super().__init__()
        self.trunk = nn.Sequential(ConvBNAct(3, width), ConvBNAct(width, width), ConvBNAct(width, width))
        self.to_heat = nn.Conv2d(width, 1, 1)
        self.refine = nn.Sequential(ConvBNAct(width, width), ConvBNAct(width, 2 * width),
                                    ConvBNAct(2 * width, 2 * width), ConvBNAct(2 * width, 2 * width))
        self.head = nn.Sequential(nn.LayerNorm(2 * width), nn.Linear(2 * width, width), nn.GELU(), nn.Linear(width, classes))

    def forward(self, images, temperature):
        f = self.trunk(images)
        heat = self.to_heat(f)                                   # (B, 1, H, W)
        w = heatmap_normalise(heat, temperature)                 # (B, 1, H, W), sums to 1 per sample
        g = self.refine(f * (1 + w * w.shape[-1] * w.shape[-2]))
        pooled = (g * w).sum(dim=(2, 3))
        return self.head(pooled), w


def make():
    torch.manual_seed(0)
    model = HeatmapPoolNet().eval()
    images = torch.randn(5, 3, 32, 32)
    temperature = torch.ones(5)  # per-sample sharpness of the attention heatmap
    return model, [images, temperature]


if __name__ == "__main__":
    check_compiled(*make(), names=("logits", "heatmap"))
