# The 200-operator chain with one relu, on the GPU: Inductor generates Triton kernels for it.
import torch

from chain200 import RELU_AT, chain


def make():
    torch.manual_seed(0)
    return (lambda x: chain(x, RELU_AT)), [torch.randn(64, 512, device="cuda")]
