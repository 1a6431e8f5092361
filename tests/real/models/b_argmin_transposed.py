# Real bug: pytorch/pytorch#197739
#   https://github.com/pytorch/pytorch/issues/197739
#   "[torch.compile] torch.compile returns incorrect argmin index for non-contiguous (transposed)
#    tensor"  (same root cause as #183082 "Inductor CPU returns wrong argmax after sin_() and
#    transpose": the CPU codegen reports the physical loop position instead of the logical index
#    when a full argmin/argmax reduces a transposed view).
# Failure kind: accuracy, forward.
# What the user sees under torch 2.6 CPU (default inductor, no config flags), under no_grad:
#   AssertionError: compiled differs from eager: argmin index 33 vs eager 21 ...
# (the logits output matches; only the flat class-major argmin index is wrong).
# Forward graph handed to Inductor: 156 aten call_function nodes.
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F

from user_model import ResConvBlock, check_compiled

B, C, H, W, NCLS = 6, 8, 12, 12, 10


class Classifier(nn.Module):
    def __init__(self, buggy=True):
        super().__init__()
        self.buggy = buggy
        self.stem = ResConvBlock(3, C)
        self.b1 = ResConvBlock(C, 2 * C)
        self.b2 = ResConvBlock(2 * C, 2 * C)
        self.norm = nn.LayerNorm(2 * C)
        self.fc1 = nn.Linear(2 * C, 32)
        self.fc_mid = nn.Linear(32, 32)
        self.fc2 = nn.Linear(32, NCLS)
        self.temp = nn.Parameter(torch.tensor(0.5))

    def forward(self, x):
        x = self.stem(x)
        x = F.max_pool2d(self.b1(x), 2)
        x = self.b2(x)
        feat = self.norm(x.mean(dim=(2, 3)))
        logits = self.fc2(F.gelu(self.fc_mid(F.gelu(self.fc1(feat)))))                  # (B, NCLS)
        scores = logits.t() + self.temp                            # class-major view (NCLS, B)
        if self.buggy:
            worst = scores.argmin()                                # flat index into (NCLS, B)
        else:
            worst = scores.contiguous().view(-1).argmin()
        return logits, worst


def make(buggy=True):
    torch.manual_seed(0)
    model = Classifier(buggy).eval()
    x = torch.randn(B, 3, H, W)
    return model, [x]


if __name__ == "__main__":
    check_compiled(*make("--no-bug" not in sys.argv), names=("logits", "argmin index"), rtol=1e-4)
