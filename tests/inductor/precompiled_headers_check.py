# Run by test_inductor.py's precompiled_headers scenario in the PyTorch 2.x python: the chain's
# injected C++ compile error compiled in two fresh Inductor caches, once as g++ parses the prefix
# header and once with minifyd/precompiled_headers.py installed. Prints one JSON object: both errors'
# text (each cache's path replaced by CACHE, the kernel's file name by KERNEL) and the precompiled headers the second cache holds.
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "..", "worker", "python"), os.path.join(HERE, "models")]


def compile_error(cache, precompiled):
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    import torch
    from torch._inductor import config
    from torch._inductor.compile_fx import compile_fx
    from torch.fx.experimental.proxy_tensor import make_fx

    import chain200
    from minifyd import precompiled_headers
    if precompiled:
        precompiled_headers.install()
    config.compile_threads = 1
    config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"
    fn, inputs = chain200.make()
    try:
        with torch.no_grad():
            compile_fx(make_fx(fn)(*inputs), inputs)
    except Exception as error:  # noqa: BLE001  (the injected compile error is what is compared)
        # The kernel's file is named by its text's hash, and its text names the header by its cache's path.
        return re.sub(r"CACHE/\w+/\w+", "CACHE/KERNEL", f"{type(error).__name__}: {error}".replace(cache, "CACHE"))
    return None


if __name__ == "__main__":
    work, precompiled = sys.argv[1], sys.argv[2] == "precompiled"
    cache = os.path.join(work, "precompiled" if precompiled else "parsed")
    print(json.dumps({"error": compile_error(cache, precompiled),
                      "headers": sorted(glob.glob(os.path.join(cache, "*", "*.h.gch", "*.gch")))}))
