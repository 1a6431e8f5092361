# Real bug: pytorch/pytorch#167197
#   https://github.com/pytorch/pytorch/issues/167197
#   "[inductor] nn.LPPool1d cannot convert float infinity to integer when norm_type=float('inf')"
#   (lp_pool with p=inf lowers to pow(x, inf); Inductor's pow lowering calls int() on the exponent).
# Failure kind: exception at compile time (lowering), forward.
# What the user sees under torch 2.6 CPU (default inductor, no config flags), under no_grad:
#   torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:
#   LoweringException: OverflowError: cannot convert float infinity to integer
#     target: aten.pow.Tensor_Scalar
# Eager runs fine (L-inf pooling).  Forward graph handed to Inductor: 163 aten call_function nodes.
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F

from user_model import ResConvBlock, check_compiled

C = 16


class AudioNet(nn.Module):
    def __init__(self, buggy=True):
        super().__init__()
        self.stem = nn.Conv1d(1, C, 5, padding=2)
        self.pre = nn.Sequential(ResConvBlock(C, C, dims=1), ResConvBlock(C, C, dims=1))
        # L-infinity pooling over time (the bug); the control uses L-4 pooling
        self.pool = nn.LPPool1d(norm_type=float("inf") if buggy else 4.0, kernel_size=2, stride=2)
        self.post = nn.Sequential(ResConvBlock(C, C, dims=1), ResConvBlock(C, C, dims=1))
        self.ln = nn.LayerNorm(C)
        self.fc1 = nn.Linear(C, 32)
        self.fc2 = nn.Linear(32, 6)

    def forward(self, x):
        x = self.pre(F.relu(self.stem(x)))
        x = self.post(self.pool(x))
        x = self.ln(x.mean(dim=2))
        return self.fc2(F.gelu(self.fc1(x)))


def make(buggy=True):
    torch.manual_seed(0)
    model = AudioNet(buggy).eval()
    x = torch.randn(4, 1, 64)
    return model, [x]


if __name__ == "__main__":
    check_compiled(*make("--no-bug" not in sys.argv), rtol=1e-4)
