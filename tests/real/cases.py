# The corpus of real Inductor bugs (label real): each case a user's script in models/ with a bug from
# PyTorch's issue tracker embedded in a model of 150 to 400 aten operators (the script's opening
# comment names the issue), how it fails on PyTorch 2.6's CPU, and the most operators its minimized
# graph may keep: no more nodes than PyTorch's own minifier keeps on the same case (its figures from
# bench/real_bugs_comparison.py, docs/benchmarks.md "Real bugs"; None where it was not measured yet).
import collections
import os

HERE = os.path.dirname(os.path.abspath(__file__))

Case = collections.namedtuple("Case", "model kind check graph exception_type raised_at peer_nodes ci device bisect",
                              defaults=("cpu", None))
# kind: the failure's kind in minify's verdicts: exception, crash (a signal), cuda_error or accuracy.
# check: minify's option for an accuracy bug (--accuracy; --strict-accuracy where an integer output is
#   the wrong one, which --accuracy ignores), None for the others.
# graph: which graph of the script's torch.compile run fails: forward or backward (a training step).
# exception_type, raised_at: the exception's signature (failure_signature.h), for an exception.
# peer_nodes: the nodes (placeholders and output included, as PyTorch counts them) that PyTorch's own
#   minifier ends at from the same minifier_launcher.py: the most a minimized graph may have.
# ci: the routes (test_real.py) that `ctest` runs on every build (README command B), chosen by cost so
#   that CI stays under 50 minutes while covering every kind and every route (one route a case); the others
#   run with -DMINIFYD_EXTENDED_TESTS=ON.
# bisect: (stage, subsystem) that `minify run --bisect` must name for the minimized graph (docs/bisect.md): what
#   PyTorch's CompilerBisector names on the user's script (bench/bisect_comparison.py, docs/benchmarks.md
#   "Bisect"); None where it was not measured. The capture and launcher routes check it.
# device: where the script's model runs: cpu (its test sees no GPU), or cuda (PyTorch 2.11's Triton bugs on
#   the GPU machine, docs/gpu.md; the test skips where torch sees no GPU). A cuda case's script runs on the
#   CPU where there is no GPU, as a user's would, and its bug does not show there unless the case says so.
ROUTES = ("capture", "launcher", "export")
LOWERINGS, POST_GRAD = ("inductor", "lowerings"), ("inductor", "post_grad_passes")
CASES = {
    "outer_loop_keyerror": Case("outer_loop_keyerror_188228.py", "exception", None, "forward", "KeyError",
                                "torch/_inductor/loop_body.py:get_read_expr", 12, ("capture",), bisect=LOWERINGS),
    # CompilerBisector dies of it (its probes run in the user's process): the bisect is ours alone.
    "heap_overflow": Case("heap_overflow_local_buffer_159154.py", "crash", None, "forward", None, None, 16, ("launcher",),
                          bisect=LOWERINGS),
    # CompilerBisector: post_grad_passes, the pass reinplace_inplaceable_ops.
    "index_put_inplace": Case("index_put_repeated_inplace_138908.py", "accuracy", "--accuracy", "forward", None, None,
                              12, ("capture",), bisect=POST_GRAD),
    "slice_scatter_backward": Case("b_slice_scatter_sum_bw.py", "accuracy", "--accuracy", "backward", None, None,
                                   5, ("capture",), bisect=LOWERINGS),
    # PyTorch's minifier cannot start on it: its accuracy check ignores the wrong integer output
    # ("Input graph did not fail the tester").
    "argmin_transposed": Case("b_argmin_transposed.py", "accuracy", "--strict-accuracy", "forward", None, None, None, (),
                              bisect=LOWERINGS),
    # PyTorch's minifier ends at 2 nodes of no bug: a NaN constant, which its accuracy check, comparing
    # NaN with NaN, counts as wrong.
    "sin_atan_nan": Case("b_sin_atan_nan.py", "accuracy", "--accuracy", "forward", None, None, None, (),
                         bisect=LOWERINGS),
    "lppool_inf": Case("b_lppool_inf.py", "exception", None, "forward", "OverflowError",
                       "torch/_inductor/lowering.py:pow", 3, (), bisect=LOWERINGS),
    "pdist_transposed": Case("b_pdist_transposed.py", "exception", None, "forward", "RuntimeError",
                             "torch/__init__.py:_check_with", 4, (), bisect=LOWERINGS),
    "gumbel_scatter": Case("b_gumbel_scatter.py", "exception", None, "forward", "AttributeError",
                           "torch/_inductor/codegen/cpp.py:try_loop_split", 10, (), bisect=POST_GRAD),
    # PyTorch's minifier, which takes any failure, ends at 12 nodes of another bug (gumbel_scatter's
    # AttributeError, pytorch/pytorch#148058): no bound for the same bug.
    "ir_assert_simplify": Case("ir_assert_simplify_181624.py", "exception", None, "forward", "AssertionError",
                               "torch/_inductor/ir.py:simplify_and_reorder", None, (), bisect=LOWERINGS),
    "fractional_maxpool_unbatched": Case("fractional_maxpool_unbatched_156682.py", "exception", None, "forward",
                                         "AssertionError", "torch/_inductor/ir.py:indexer", 5, (), bisect=LOWERINGS),
    "int64_shift": Case("int64_shift_wrap_143566.py", "accuracy", "--accuracy", "forward", None, None, 8, (),
                        bisect=LOWERINGS),
    # PyTorch's minifier ends at 2 nodes of no bug: the NaN constant alone, a graph without inputs, whose
    # repro its generator writes with an empty load_args (an IndentationError, which it counts as the
    # failure); with that fixed the graph passes. Ours keeps the amax that fails. CompilerBisector names
    # joint_graph_passes (constant_fold_uniform_value, which makes the NaN constant): in the graph captured after
    # AOT autograd that pass has run already, and the bisect names the lowering it feeds (amax) instead.
    "constant_prior_nan": Case("constant_prior_nan_188225.py", "exception", None, "forward", "ValueError",
                               "torch/_inductor/index_propagation.py:maximum", None, ("export",),
                               bisect=LOWERINGS),
    # PyTorch 2.11's Triton bugs, on the GPU machine; every route in CI, where they skip without a GPU.
    "constant_prior_nan_cuda": Case("constant_prior_nan_188225.py", "exception", None, "forward", "ValueError",
                                    "torch/_inductor/index_propagation.py:maximum", None, ROUTES, "cuda"),
    "hashed_positions_cuda": Case("hashed_positions_175966.py", "accuracy", "--accuracy", "forward", None, None,
                                  None, ROUTES, "cuda"),
    "graph_readout_cuda": Case("graph_readout_178871.py", "accuracy", "--accuracy", "forward", None, None, None,
                               ROUTES, "cuda"),
}
# TORCHDYNAMO_REPRO_LEVEL for the script's run that writes minifier_launcher.py, as PyTorch's
# test_minifier sets it: 2 dumps it when compiling or running raises, 3 before compiling (a run that
# kills the process, or breaks its CUDA context, leaves nothing behind otherwise), 4 checks accuracy.
REPRO_LEVEL = {"exception": "2", "crash": "3", "cuda_error": "3", "accuracy": "4"}


def launcher_env(case):
    """The environment of the script's run that writes minifier_launcher.py: after_aot at the case's level,
    and PyTorch's compile caches off, as warm ones (from any earlier run of the script) hide the graph from
    after_aot. A graph found in AOT autograd's cache (on by default in 2.11) comes back compiled without
    Inductor's compiler, which after_aot wraps, being called; and with Inductor's FX graph cache warm,
    2.11's accuracy check (level 4) fails on the cached graph itself ("pickle should not be called with
    after make_launchers()", seen on an H200): either way no launcher is written."""
    return {**os.environ, "TORCHDYNAMO_REPRO_AFTER": "aot", "TORCHDYNAMO_REPRO_LEVEL": REPRO_LEVEL[case.kind],
            "TORCHINDUCTOR_AUTOGRAD_CACHE": "0", "TORCHINDUCTOR_FX_GRAPH_CACHE": "0"}


# minify's workers for a cuda case: 4 on GPU 0 (a failing candidate retires its worker there).
GPU_WORKERS = ("--gpus", "0", "--workers-per-gpu", "4")


def minify_options(case):
    """minify's options for the case beside --backend: its check, and its workers on the GPU."""
    return [*([case.check] if case.check else []), *(GPU_WORKERS if case.device == "cuda" else ())]


def model_path(case):
    return os.path.join(HERE, "models", case.model)
