# Real bug: pytorch/pytorch#143978
#   https://github.com/pytorch/pytorch/issues/143978
#   "torch.compile() returns a different value (NaN vs 1)"  (rsqrt -> angle -> atan -> sin;
#    fixed upstream by PR #186018 "[inductor] Preserve NaNs for CPU libm calls": the generated C++
#    is built with -fno-math-errno, so GCC rewrites std::sin(std::atan(x)) and a NaN input yields
#    1 instead of NaN).
# Failure kind: accuracy, forward.
# What the user sees under torch 2.6 CPU (default inductor, no config flags), under no_grad:
#   AssertionError: compiled differs from eager: output max abs diff 0.211
# The gate below is NaN wherever the pre-activation is negative (rsqrt of a negative number);
# eager keeps the NaN and nan_to_num turns it into 0, compiled code produces 1 there, so the
# rest of the network sees different values.
# Forward graph handed to Inductor: 157 aten call_function nodes.
import sys
import torch
import torch.nn as nn

from user_model import ResidualMLP, check_compiled

D = 32


class PhaseGate(nn.Module):
    """Gate derived from the phase of 1/sqrt(h); NaNs (negative h) are mapped to 0."""

    def __init__(self, d, buggy=True):
        super().__init__()
        self.buggy = buggy
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        h = self.proj(x)
        if self.buggy:
            g = torch.sin(torch.atan(torch.angle(torch.rsqrt(h))))
        else:
            g = torch.sin(torch.atan(torch.angle(torch.rsqrt(h.abs() + 1e-6))))
        g = torch.nan_to_num(g, nan=0.0)
        return x * (1.0 + g)


class Net(nn.Module):
    def __init__(self, buggy=True):
        super().__init__()
        self.inp = nn.Linear(16, D)
        self.pre = nn.Sequential(ResidualMLP(D), ResidualMLP(D), ResidualMLP(D))
        self.gate = PhaseGate(D, buggy)
        self.post = nn.Sequential(ResidualMLP(D), ResidualMLP(D), ResidualMLP(D))
        self.out = nn.Sequential(nn.LayerNorm(D), nn.Linear(D, D), nn.GELU(), nn.Linear(D, 8))

    def forward(self, x):
        return self.out(self.post(self.gate(self.pre(self.inp(x)))))


def make(buggy=True):
    torch.manual_seed(0)
    model = Net(buggy).eval()
    x = torch.randn(8, 16)
    return model, [x]


if __name__ == "__main__":
    check_compiled(*make("--no-bug" not in sys.argv), rtol=1e-4, equal_nan=True)
