# One query of PyTorch's minifier in isolated mode (bench/functorch_minifier.py), run in a fresh
# interpreter as after_aot's isolate mode runs each candidate: loads a candidate saved with
# torch.save((GraphModule, inputs)) and evaluates it under a case's fault model, where the crash and
# hang faults are real: the process segfaults, aborts or hangs while the faulty node runs.
#   functorch_isolated_query.py CASE CANDIDATE.pt
# Prints "ready" once loaded (the parent's timeout starts there), then the failure as JSON (null
# when the candidate passes); exits 0 when it passes, FAILED_EXIT when it fails without dying.
import ctypes
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "run"))
import cases  # noqa: E402

FAILED_EXIT = 10  # apart from 1, which an uncaught Python exception would give


def act_out(fault):
    """Makes this process fail the way the faulty plugin makes its worker fail."""
    if fault == "segfault":
        ctypes.memset(0, 1, 1)  # a write through a null pointer: SIGSEGV
    elif fault == "abort":
        os.abort()
    elif fault == "hang":
        while True:
            time.sleep(3600)
    # throw: the fault model reports it as an exception, and this process exits FAILED_EXIT


def main():
    case_name, candidate = sys.argv[1:]
    gm, inputs = torch.load(candidate)
    print("ready", flush=True)
    failure = cases.CASES[case_name].check.evaluate(gm, inputs, on_fault=act_out)
    print(json.dumps(failure.to_json() if failure else None), flush=True)
    sys.exit(FAILED_EXIT if failure else 0)


if __name__ == "__main__":
    main()
