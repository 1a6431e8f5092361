# Real bug: pytorch/pytorch#180164
#   https://github.com/pytorch/pytorch/issues/180164
#   "torch.compile silently zeroes x.grad for the pattern slice_scatter(x, y, dim=K).sum(dim=K)
#    -- backward is wrong, forward is correct" (same family: #180771 slice_scatter backward).
# Failure kind: accuracy, BACKWARD only (forward output matches eager).
# What the user sees under torch 2.6 CPU (default inductor, no config flags): after
#   loss = model(x).sum(); loss.backward()
# the gradient of the `slots` parameter (the `self` argument of slice_scatter, reduced with
# .sum(dim=1) right after) differs from eager (rows that pass through unchanged get a
# wrong gradient); all other parameter gradients match.  The script raises
#   AssertionError: compiled differs from eager: grad of slots max abs diff 0.3127
# Backward graph handed to Inductor: 182 aten call_function nodes (forward: 97).
import sys
import torch
import torch.nn as nn

from user_model import AttentionMLPBlock, check_compiled

D = 32
B = 4
T = 6
S = 8   # memory slots
K = 2   # slots overwritten by pooled encoder features


class Block(AttentionMLPBlock):
    def scores(self, q, k):                                        # (B, T, T)
        return q @ k.transpose(1, 2) / q.shape[-1] ** 0.5


class SlotModel(nn.Module):
    def __init__(self, buggy=True):
        super().__init__()
        self.buggy = buggy
        self.inp = nn.Linear(16, D)
        self.enc = nn.Sequential(Block(D))
        self.to_slot = nn.Linear(D, D)
        self.slots = nn.Parameter(torch.randn(B, S, D) * 0.1)   # learned slot memory
        self.head = nn.Sequential(nn.LayerNorm(D), nn.Linear(D, D), nn.GELU(), nn.Linear(D, 10))

    def forward(self, x):
        h = self.enc(self.inp(x))                                  # (B, T, D)
        summary = self.to_slot(h[:, :K] + h[:, -K:])               # (B, K, D)
        if self.buggy:
            # write the summaries into the first K slots, then pool the slots (the bug)
            pooled = torch.slice_scatter(self.slots, summary, dim=1, start=0, end=K).sum(dim=1)
        else:
            pooled = torch.cat([summary, self.slots[:, K:]], dim=1).sum(dim=1)
        return self.head(pooled)


def make(buggy=True):
    torch.manual_seed(0)
    model = SlotModel(buggy)
    x = torch.randn(B, T, 16)
    return model, [x]


if __name__ == "__main__":
    check_compiled(*make("--no-bug" not in sys.argv), rtol=1e-4, backward=True)
