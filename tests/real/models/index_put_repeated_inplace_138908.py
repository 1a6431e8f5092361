# Real Inductor bug: pytorch/pytorch#138908
#   https://github.com/pytorch/pytorch/issues/138908
#   "Output mismatch between torch.compile and eager mode"  (y[x] += y[x] with repeated indices in x)
#   Inductor's index_put lowering scatters the values lazily: when the values read the tensor being updated
#   (self) and an index repeats, the second write reads the already-updated row, so the update is applied
#   twice. Fixed later by realizing the values first (pytorch/pytorch#139366); torch 2.6 lacks that fix.
# Failure kind: accuracy (silent wrong numbers; this script turns it into an AssertionError).
# What the user sees under torch 2.6 CPU (deterministic):
#   AssertionError: compiled differs from eager: memory norms max abs diff 2.536; memory max abs diff 1.294
#   (the mutated memory input, and the per-slot norms computed from it, differ from eager: a slot written by
#   several samples gets the update applied again on top of the already-updated row)
# Pattern embedded: a slot-memory layer updates its memory (an input, mutated in place) with
#   memory[ids] = memory[ids] * decay + (1 - decay) * update[ids], ids = each sample's argmax slot, so ids
#   repeat (16 samples, 8 slots); an MLP encoder before it and a residual MLP head after it.
# Forward graph handed to Inductor: 155 call_function nodes (one graph; the in-place update of the input is
# kept in the graph as a copy_ into it).
# Set REALBUG_DISABLE=1 to compute the same new memory out of place (torch.where over a one-hot of the written
# slots) without mutating the input: then compiled matches eager. (Writing that result back with
# memory.copy_ hits a different Inductor bug on 2.6: the earlier gather memory[ids] then reads the
# updated memory; so the disabled path does not mutate.)
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

from user_model import ResidualMLP, check_compiled

BUGGY_UPDATE = os.environ.get("REALBUG_DISABLE") != "1"


class SlotMemoryNet(nn.Module):
    def __init__(self, din=24, d=32, slots=8, classes=5, decay=0.9):
        super().__init__()
        self.decay = decay
        self.encoder = nn.Sequential(nn.Linear(din, 2 * d), nn.LayerNorm(2 * d), nn.GELU(), nn.Linear(2 * d, d),
                                     ResidualMLP(d), ResidualMLP(d))
        self.slot_keys = nn.Parameter(torch.randn(slots, d))
        self.fuse = nn.Linear(2 * d, d)
        self.head = nn.Sequential(ResidualMLP(d), ResidualMLP(d), ResidualMLP(d), nn.LayerNorm(d), nn.Linear(d, classes))

    def forward(self, x, memory):
        h = self.encoder(x)                                            # (B, d)
        logits = h @ self.slot_keys.t() / math.sqrt(h.shape[-1])       # (B, slots)
        assign = logits.softmax(dim=-1)
        ids = logits.argmax(dim=-1)                                    # (B,), repeats: B > slots
        read = memory[ids]                                             # (B, d), memory before this step
        z = self.fuse(torch.cat([h, read], dim=-1))
        update = (assign.t() @ h) / (assign.sum(dim=0)[:, None] + 1e-6)  # (slots, d)
        if BUGGY_UPDATE:
            memory[ids] = memory[ids] * self.decay + (1 - self.decay) * update[ids]
        else:  # same values, out of place (the memory input is left untouched)
            written = F.one_hot(ids, memory.shape[0]).sum(dim=0).bool()[:, None]
            memory = torch.where(written, memory * self.decay + (1 - self.decay) * update, memory)
        return self.head(z), memory.norm(dim=-1)                       # logits, per-slot memory norm


def make():
    torch.manual_seed(0)
    model = SlotMemoryNet().eval()
    x = torch.randn(16, 24)
    memory = torch.randn(8, 32)
    return model, [x, memory]


if __name__ == "__main__":
    check_compiled(*make(), names=("logits", "memory norms"), mutated={1: "memory"})
