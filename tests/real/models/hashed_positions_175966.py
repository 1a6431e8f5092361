# Real Inductor GPU bug: pytorch/pytorch#175966 (duplicate report #183901)
#   https://github.com/pytorch/pytorch/issues/175966
#   "Silently incorrect results for torch.arange + Inductor"
#   An int64 arange times an int64 tensor: the Triton kernel Inductor generates computes the product in
#   int32, so arange(0, 11) * 10**9 wraps from the fourth element on; eager gives 0, 1e9, ..., 1e10.
#   Open on 2.11 (reproduced on PyTorch 2.11.0+cu130, H200: tests/real/gpu/arange_int64_overflow_175966.py).
# Failure kind: accuracy (silent wrong numbers; this script turns it into an AssertionError).
# What the user sees under torch 2.11 on CUDA:
#   AssertionError: compiled differs from eager: output max abs diff ... (positions 3 and later hash to other
#   buckets, so their phases and everything after them differ)
# Pattern embedded: hashed positional phases (position * a large odd multiplier, mod a period, as in hashed
#   position encoders), whose sines and cosines are projected and added to the token embeddings, then four
#   pre-norm attention blocks and a classifier head over 12 tokens. (Looked up in an embedding table instead,
#   the wrapped buckets read outside the table: a CUDA illegal memory access where the read lands outside
#   mapped memory, other rows' values where it does not.)
# Forward graph handed to Inductor: 263 aten call_function nodes (PyTorch 2.6, CPU).
# Set REALBUG_DISABLE=1 to reduce the multiplier mod the period first (the same buckets, no product past
# int32): then compiled matches eager. It runs on the GPU when there is one; on the CPU the bug does not
# show (Inductor's C++ kernels keep the product in int64).
import math
import os

import torch
import torch.nn as nn

from user_model import AttentionMLPBlock, check_compiled

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
BUGGY_HASH = os.environ.get("REALBUG_DISABLE") != "1"
MULTIPLIER = 1_000_000_007


class ScaledDotBlock(AttentionMLPBlock):
    def scores(self, q, k):
        return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


class HashedPositionTransformer(nn.Module):
    def __init__(self, vocab=100, d=32, buckets=509, classes=4, depth=4):
        super().__init__()
        self.buckets = buckets
        self.tokens = nn.Embedding(vocab, d)
        self.positions = nn.Linear(2, d)
        self.blocks = nn.Sequential(*[ScaledDotBlock(d) for _ in range(depth)])
        self.head = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, classes))

    def forward(self, ids):
        multiplier = MULTIPLIER if BUGGY_HASH else MULTIPLIER % self.buckets
        positions = torch.arange(0, ids.shape[-1], device=ids.device, dtype=torch.int64) * torch.tensor(
            [multiplier], dtype=torch.int64, device=ids.device)
        phase = positions.remainder(self.buckets).to(torch.float32) * (2 * math.pi / self.buckets)
        h = self.tokens(ids) + self.positions(torch.stack([phase.sin(), phase.cos()], dim=-1))
        return self.head(self.blocks(h).mean(dim=1))


def make():
    torch.manual_seed(0)
    model = HashedPositionTransformer().eval().to(DEVICE)
    ids = torch.randint(0, 100, (4, 12), device=DEVICE)
    return model, [ids]


if __name__ == "__main__":
    check_compiled(*make())
