# A 200-operator elementwise chain with one relu (operator 120), as the Inductor issue's benchmark has it.
import torch

RELU_AT = 120


def chain(x, relu_at):
    for i in range(200):
        if i == relu_at:
            x = torch.relu(x)
        elif i % 2:
            x = torch.sin(x)
        else:
            x = x * 1.01
    return (x,)


def make():
    torch.manual_seed(0)
    # 64x512: large enough that Inductor's C++ kernel runs in an OpenMP parallel region, where
    # runtime_error's `throw` aborts the process.
    return (lambda x: chain(x, RELU_AT)), [torch.randn(64, 512)]
