# Six linear layers with elementwise stages between them and one relu (in the fourth stage): Inductor
# calls the matmuls as extern kernels and fuses each stage into a C++ kernel of its own, so the kernel
# the relu bug breaks holds a few nodes of the graph's 40.
import torch

STAGES = 6
RELU_IN = 3


def fn(x, *weights):
    for stage, weight in enumerate(weights):
        x = torch.sin(x @ weight) * 1.01 + 0.5
        if stage == RELU_IN:
            x = torch.relu(x)
        x = torch.tanh(x)
    return (x,)


def make():
    torch.manual_seed(0)
    return fn, [torch.randn(32, 64)] + [torch.randn(64, 64) / 8 for _ in range(STAGES)]
