# A user's program for `minify capture`: torch.compile splits f at its graph break into two graphs,
# the relu in the second, where Inductor's injected relu bug strikes.
#   python3 two_graphs.py [BUG [ROWS]]
# BUG: cpp.inject_relu_bug_TESTING_ONLY (runtime_error, the default; compile_error; accuracy) or none.
# ROWS (default 256): the inputs' rows; at 256 (and torch using two threads or more: OMP_NUM_THREADS) the
# relu's C++ loop runs in an OpenMP parallel region,
# where runtime_error's `throw 1` aborts the process (SIGABRT); at 8 it runs serially, and Inductor's
# binding turns it into `RuntimeError: unhandled error` (exit 1).
import sys

import torch
import torch._inductor.config

BUG = sys.argv[1] if len(sys.argv) > 1 else "runtime_error"
ROWS = int(sys.argv[2]) if len(sys.argv) > 2 else 256


def f(x, w):
    y = torch.sin(x) @ w
    torch._dynamo.graph_break()
    return torch.relu(y) * 2 + 1


if BUG != "none":
    torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = BUG
torch.manual_seed(0)
x, w = torch.randn(ROWS, 64), torch.randn(64, 64)
print(f"two_graphs: {BUG}, {ROWS} rows", flush=True)
out = torch.compile(f)(x, w)
print(f"two_graphs: sum {out.sum().item():.3f}", flush=True)
