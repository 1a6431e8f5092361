# Two bugs in one graph: a relu (the injected compile error) and, elsewhere, a log1p (an injected
# accuracy bug, a failure of another kind under --accuracy). The original fails at compile time; a
# candidate without the relu but with the log1p fails differently and must not be taken for the same bug.
import torch


def make():
    torch.manual_seed(0)

    def two_bugs(x):
        y = torch.sin(x) * 2
        z = torch.relu(y) + 1
        w = torch.log1p(torch.cos(x).abs()) * 3
        return (z, w)

    return two_bugs, [torch.randn(64, 32)]
