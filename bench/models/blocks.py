# A stack of transformer-like blocks as a user writes them (pre-norm attention and an MLP with a relu,
# residuals), for the speed benchmark (docs/benchmarks.md): the MLPs' relus are where Inductor's
# injected relu bugs land. MINIFYD_BENCH_DEVICE=cuda puts it on the GPU.
import os

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.up, self.down = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        batch, length, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).reshape(batch, length, 3, self.heads, dim // self.heads).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        attention = torch.softmax(q @ k.transpose(-2, -1) / (dim // self.heads) ** 0.5, dim=-1)
        x = x + self.proj((attention @ v).transpose(1, 2).reshape(batch, length, dim))
        return x + self.down(torch.relu(self.up(self.norm2(x))))


class Blocks(nn.Module):
    def __init__(self, dim=64, heads=4, depth=6):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return (self.norm(self.blocks(x)),)


def make():
    torch.manual_seed(0)
    device = os.environ.get("MINIFYD_BENCH_DEVICE", "cpu")
    model = Blocks().eval().to(device)
    return model, [torch.randn(2, 32, 64, device=device)]
