# Real bug: pytorch/pytorch#148058
#   https://github.com/pytorch/pytorch/issues/148058
#   (regression test test_issue_148058 in test/inductor/test_cpu_repro.py:
#    F.gumbel_softmax(hard=True) followed by torch.scatter with a constant index tensor)
# Failure kind: exception at compile time (Inductor codegen), forward.
# What the user sees under torch 2.6 CPU, under no_grad:
#   torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:
#   AttributeError: 'int' object has no attribute 'find'
# Config: torch._inductor.config.fallback_random = True (set below) so that, once the bug is
# gone, eager and compiled draw the same gumbel noise and can be compared; the failure does not
# depend on it.  Forward graph handed to Inductor: 161 aten call_function nodes.
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch._inductor.config as inductor_config

from user_model import ResidualMLP, check_compiled

inductor_config.fallback_random = True

D, E = 32, 8   # width, number of experts


class HardRouter(nn.Module):
    """Hard gumbel routing over E experts; expert 1 (shared expert) is always switched on."""

    def __init__(self, buggy=True):
        super().__init__()
        self.buggy = buggy
        self.gate = nn.Linear(D, E)
        self.experts = nn.Linear(D, E * D)
        self.register_buffer("shared", F.one_hot(torch.tensor(1), E).float())

    def forward(self, x):
        route = F.gumbel_softmax(self.gate(x), tau=1.0, hard=True)              # (N, E) one-hot
        if self.buggy:
            idx = torch.ones(x.shape[0], 2, dtype=torch.long)
            route = torch.scatter(route, dim=1, index=idx, src=torch.ones_like(route))
        else:
            route = torch.maximum(route, self.shared)
        out = self.experts(x).view(x.shape[0], E, D)
        return x + (route.unsqueeze(-1) * out).sum(dim=1) / route.sum(dim=1, keepdim=True)


class MoENet(nn.Module):
    def __init__(self, buggy=True):
        super().__init__()
        self.inp = nn.Linear(16, D)
        self.pre = nn.Sequential(ResidualMLP(D), ResidualMLP(D), ResidualMLP(D))
        self.router = HardRouter(buggy)
        self.post = nn.Sequential(ResidualMLP(D), ResidualMLP(D), ResidualMLP(D))
        self.head = nn.Sequential(nn.LayerNorm(D), nn.Linear(D, 4))

    def forward(self, x):
        return self.head(self.post(self.router(self.pre(self.inp(x)))))


def make(buggy=True):
    torch.manual_seed(0)
    model = MoENet(buggy).eval()
    x = torch.randn(6, 16)
    return model, [x]


if __name__ == "__main__":
    check_compiled(*make("--no-bug" not in sys.argv), rtol=1e-4)
