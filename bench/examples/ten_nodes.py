# A 10-node graph (2 placeholders, 7 operators, the output) for the per-query overhead benchmark.
import torch


def make():
    def fn(x, y):
        a = torch.relu(x)
        b = a * y
        c = b + 1.0
        d = torch.sigmoid(c)
        e = d - x
        f = torch.tanh(e)
        return (f.sum(dim=0),)
    return fn, [torch.randn(8, 8), torch.randn(8, 8)]
