# The corpus of real Inductor bugs (label real): each case a user's script in models/ with a bug from
# PyTorch's issue tracker embedded in a model of 150 to 400 aten operators (the script's opening
# comment names the issue), how it fails on PyTorch 2.6's CPU, and the most operators its minimized
# graph may keep: no more than PyTorch's own minifier keeps on the same case (its figures from
# bench/real_bugs_comparison.py, docs/benchmarks.md "Real bugs").
import collections
import os

HERE = os.path.dirname(os.path.abspath(__file__))

Case = collections.namedtuple("Case", "model kind graph exception_type raised_at max_ops ci")
# kind: the failure's kind in minify's verdicts: exception, crash (a signal) or accuracy.
# graph: which graph of the script's torch.compile run fails: forward or backward (a training step).
# exception_type, raised_at: the exception's signature (failure_signature.h), for an exception.
# ci: run by `ctest` on every build (README command B); the others with -DMINIFYD_REAL_BUGS_ALL=ON.
CASES = {
    "outer_loop_keyerror": Case("outer_loop_keyerror_188228.py", "exception", "forward", "KeyError",
                                "torch/_inductor/loop_body.py:get_read_expr", 12, True),
    "heap_overflow": Case("heap_overflow_local_buffer_159154.py", "crash", "forward", None, None, 20, True),
}
# TORCHDYNAMO_REPRO_LEVEL for the script's run that writes minifier_launcher.py, as PyTorch's
# test_minifier sets it: 2 dumps it when compiling or running raises, 3 before compiling (a run that
# kills the process leaves nothing behind otherwise), 4 checks accuracy.
REPRO_LEVEL = {"exception": "2", "crash": "3", "accuracy": "4"}


def model_path(case):
    return os.path.join(HERE, "models", case.model)
