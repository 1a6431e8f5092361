# Issue #178845  https://github.com/pytorch/pytorch/issues/178845
# "InductorError when compile backward graph using cpp_wrapper" (2026-03-31, CUDA; reported from a
#  pip-installed torch in /usr/local/lib/python3.12/dist-packages, i.e. a release build - most likely
#  2.11.0, released shortly before; the exact version is not stated in the excerpt).
# Observed: torch.compile(options={"cpp_wrapper": True}) on a function that runs LayerNorm forward
#   and .backward() on CUDA fails when the (lazily compiled) backward graph is generated:
#   InductorError: AssertionError: CudaKernelParamCache not populated for
#   triton_poi_fused_native_layer_norm_native_layer_norm_backward_1.
#   Setting torch._inductor.config.cpp_wrapper = True globally works (the options patch has exited
#   by the time the backward is compiled, so triton.store_cubin stays False).
# Fix PR #178847 opened 2026-03-31, after the 2.11 release -> expected to reproduce on 2.11.
# Kind: compile-time exception (GPU cpp-wrapper codegen). Runs in a subprocess with a 240 s timeout
#   because the cpp wrapper invokes the host C++ compiler.
# Reproduces on PyTorch 2.11.0+cu130, NVIDIA H200 (2026-11-26): REPRODUCED InductorError :: AssertionError: CudaKernelParamCache not populated for triton_poi_fused_native_layer_norm_0
import torch

import probe

NAME = "cpp_wrapper_bwd_178845"


def func(x, output_grad):
    layer_norm = torch.nn.LayerNorm(normalized_shape=4).cuda()
    output = layer_norm(x)
    output.backward(output_grad)
    return output


def child():
    """The compiled run, in the child process: prints CHILD_OK or CHILD_EXC for main()."""
    probe.setup(NAME)
    x = torch.randn(2, 3, 4, device="cuda")
    output_grad = torch.randn(2, 3, 4, device="cuda")
    try:
        opt_func = torch.compile(options={"cpp_wrapper": True})(func)
        out = opt_func(x, output_grad)
        torch.cuda.synchronize()
        ref = torch.nn.functional.layer_norm(x, (4,))
        print("CHILD_OK maxdiff", (out - ref).abs().max().item(), flush=True)
    except Exception as e:
        print("CHILD_EXC", type(e).__name__, "::", probe.key_line(e, "CudaKernelParamCache")[:300], flush=True)


def main():
    if probe.is_child():
        return child()
    probe.setup(NAME)
    returncode, out = probe.run_child(timeout=240)
    for line in out.splitlines():
        if line.startswith("CHILD_EXC"):
            detail = line[len("CHILD_EXC "):]
            if "CudaKernelParamCache" in detail or "AssertionError" in detail:
                probe.result(True, detail)
            probe.result(False, f"(different exception: {detail})")
        if line.startswith("CHILD_OK"):
            probe.result(False, f"compiled fwd+bwd with cpp_wrapper ran ({line[len('CHILD_OK '):]})")
    if returncode < 0:
        probe.result(False, f"(child killed by signal {-returncode})")
    probe.result(False, f"(child exit {returncode} without marker)")


if __name__ == "__main__":
    main()
