# Real Inductor bug: pytorch/pytorch#143566 (left shift; its twin for right shift is #143555)
#   https://github.com/pytorch/pytorch/issues/143566
#   "[Inductor] [CPU] [silent] `bitwise_left_shift` outputs wrong results compared with eager"
#   Eager gives 0 for an int64 shifted left by >= 64 bits; the C++ kernel Inductor generates uses a plain
#   `a << b`, which x86 reduces mod 64 (1000 << 64 == 1000). Fixed by pytorch/pytorch#143635 (Dec 2024),
#   which torch 2.6 does not have.
# Failure kind: accuracy (silent wrong numbers; this script turns it into an AssertionError).
# What the user sees under torch 2.6 CPU (deterministic):
#   AssertionError: compiled differs from eager: output max abs diff 1.588 (hash buckets differ, so the embedding
#   rows and everything after them differ)
# Pattern embedded: feature hashing: 24 features are quantised to 3-bit codes and packed into one int64 with
#   codes << (3 * i), i = 0..23 (shifts up to 69, past 63), summed, taken mod the table size and looked up in
#   an embedding table; an MLP on the raw features before, residual MLP blocks after.
# Forward graph handed to Inductor: 161 call_function nodes (one graph).
# Set REALBUG_DISABLE=1 to zero the codes whose shift is >= 64 explicitly (what eager does anyway): then it
# compiles and matches eager.
import os

import torch
import torch.nn as nn

from user_model import ResidualMLP, check_compiled

BUGGY_PACKING = os.environ.get("REALBUG_DISABLE") != "1"


def pack_codes(codes, bits=3):
    """Packs (B, n) small integer codes into one int64 per row."""
    shifts = torch.arange(codes.shape[-1], device=codes.device) * bits
    if BUGGY_PACKING:
        packed = codes << shifts
    else:
        packed = torch.where(shifts < 64, codes << shifts.clamp(max=63), torch.zeros_like(codes))
    return packed.sum(dim=-1)


class HashedCrossNet(nn.Module):
    def __init__(self, din=24, d=32, buckets=1021, classes=3):
        super().__init__()
        self.buckets = buckets
        self.dense = nn.Sequential(nn.Linear(din, d), nn.ReLU(), nn.Linear(d, d),
                                   ResidualMLP(d), ResidualMLP(d), ResidualMLP(d))
        self.table = nn.Embedding(buckets, d)
        self.blocks = nn.Sequential(ResidualMLP(d), ResidualMLP(d), ResidualMLP(d), ResidualMLP(d))
        self.head = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, classes))

    def forward(self, x):
        codes = (torch.sigmoid(x) * 8).long().clamp(0, 7)           # (B, 24) int64 3-bit codes
        bucket = pack_codes(codes).remainder(self.buckets)           # (B,) hashed feature cross
        h = self.dense(x) + self.table(bucket)
        return self.head(self.blocks(h))


def make():
    torch.manual_seed(0)
    model = HashedCrossNet().eval()
    x = torch.randn(16, 24) * 2
    return model, [x]


if __name__ == "__main__":
    check_compiled(*make())
