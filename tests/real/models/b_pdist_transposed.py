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

D = 24


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


class DiverseEncoder(nn.Module):
    """Encoder whose output is rescaled by how spread out its feature channels are."""

    def __init__(self, buggy=True):
        super().__init__()
        self.buggy = buggy
        self.inp = nn.Linear(12, D)
        self.pre = nn.Sequential(Block(D), Block(D), Block(D))
        self.post = nn.Sequential(Block(D), Block(D), Block(D), Block(D))
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


def main():
    buggy = "--no-bug" not in sys.argv
    model, (x,) = make(buggy)
    with torch.no_grad():
        ref = model(x)
        out = torch.compile(model)(x)      # raises under torch 2.6 when buggy
    if not torch.allclose(out, ref, rtol=1e-4, atol=1e-4):
        raise AssertionError(
            f"compiled differs from eager: output max abs diff {(out - ref).abs().max().item():.4g}")
    print("OK: compiled matches eager")


if __name__ == "__main__":
    main()
