# Real bug: pytorch/pytorch#170939
#   https://github.com/pytorch/pytorch/issues/170939
#   (regression test test_pdist_fallback_continuous in test/inductor/test_cpu_repro.py:
#    F.pdist on a permuted, non-contiguous input)
# Failure kind: exception at compile time (lowering of the aten._pdist_forward fallback), forward.
# What the user sees under torch 2.6 CPU (default inductor, no config flags), under no_grad:
#   torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:
#   LoweringException: RuntimeError: _pdist_forward requires contiguous input
#     target: aten._pdist_forward.default
# Eager runs fine (eager pdist makes its own contiguous copy); an explicit .contiguous()
# does not help under torch 2.6, so the --no-bug control computes the same mean distance by hand.
# Forward graph handed to Inductor: 159 aten call_function nodes.
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F

from user_model import ResidualMLP, check_compiled

D = 24


class DiverseEncoder(nn.Module):
    """Encoder whose output is rescaled by how spread out its feature channels are."""

    def __init__(self, buggy=True):
        super().__init__()
        self.buggy = buggy
        self.inp = nn.Linear(12, D)
        self.pre = nn.Sequential(ResidualMLP(D), ResidualMLP(D), ResidualMLP(D))
        self.post = nn.Sequential(ResidualMLP(D), ResidualMLP(D), ResidualMLP(D), ResidualMLP(D))
        self.head = nn.Sequential(nn.LayerNorm(D), nn.Linear(D, D), nn.GELU(), nn.Linear(D, 5))

    def forward(self, x):
        h = self.pre(self.inp(x))                       # (N, D)
        chans = h.permute(1, 0)                         # (D, N): one row per feature channel
        if self.buggy:
            spread = F.pdist(chans).mean()              # mean pairwise channel distance
        else:                                           # same quantity without pdist
            dist = (chans[:, None, :] - chans[None, :, :]).norm(dim=-1)
            spread = dist.sum() / (chans.shape[0] * (chans.shape[0] - 1))
        h = h / (1.0 + spread)
        return self.head(self.post(h))


def make(buggy=True):
    torch.manual_seed(0)
    model = DiverseEncoder(buggy).eval()
    x = torch.randn(10, 12)
    return model, [x]


if __name__ == "__main__":
    check_compiled(*make("--no-bug" not in sys.argv), rtol=1e-4)
