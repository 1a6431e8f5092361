# An exception from compiling or running a candidate as the verdict's exception_type, message and
# raising frame. The message's first line is what the coordinator's failure signature keeps, which
# makes it the same for the same error in any candidate (generated files' paths, hashes, numbers and
# generated names normalised there, daemon/verdict/failure_signature.h), so its first line names the
# failure: a compiler's first error follows it. The raising frame tells two bugs with one message apart.
import linecache
import os
import re
import sys

# Wrappers that PyTorch versions put around the error a backend raised: their cause is the failure.
WRAPPERS = ("BackendCompilerFailed", "InductorError", "LoweringException")
COMPILER_ERROR = re.compile(r"(?:^|\s)(?:fatal )?error:\s*(.+)")
MAX_DETAIL = 8192


def _unwrap(error):
    # PyTorch 2.6 raises LoweringException `from None` in the handler of the error it wraps: that error
    # is its __context__.
    while type(error).__name__ in WRAPPERS:
        inner = getattr(error, "inner_exception", None) or error.__cause__ or error.__context__
        if inner is None:
            break
        error = inner
    return error


def _library_roots():
    """The directories installed packages live in (site-packages, dist-packages, the standard library's
    lib-dynload excepted), longest first: a frame's file under one is a library's own code."""
    roots = {os.path.realpath(entry) for entry in sys.path
             if entry and os.path.basename(entry) in ("site-packages", "dist-packages")}
    return sorted(roots, key=len, reverse=True)


# The packages whose code is the compiler's own; a frame in another library (sympy, which Inductor's
# index arithmetic calls) is where the compiler's call went wrong, not the compiler's code.
COMPILER_PACKAGES = ("torch", "triton")


def raising_frame(error):
    """'torch/_inductor/loop_body.py:get_read_expr': the innermost frame of error's traceback in the
    compiler's own code (COMPILER_PACKAGES), else in another installed library, or "" when none is.
    Generated code (Inductor's wrapper modules, in its cache directory) and the worker's own frames are
    not a library's."""
    roots = _library_roots()
    found = {True: "", False: ""}
    traceback = error.__traceback__
    while traceback is not None:
        code = traceback.tb_frame.f_code
        path = os.path.realpath(code.co_filename)
        for root in roots:
            if path.startswith(root + os.sep):
                where = os.path.relpath(path, root)
                found[where.split(os.sep, 1)[0] in COMPILER_PACKAGES] = f"{where}:{code.co_name}"
                break
        traceback = traceback.tb_next
    return found[True] or found[False]


def _assert_statement(error):
    """The source line of the assert that raised error, for an AssertionError without a message, as
    Inductor's ir.py asserts are: the assert is what names the failure."""
    traceback = error.__traceback__
    if traceback is None:
        return ""
    while traceback.tb_next is not None:
        traceback = traceback.tb_next
    line = linecache.getline(traceback.tb_frame.f_code.co_filename, traceback.tb_lineno).strip()
    return line if line.startswith("assert") else ""


def type_name(error):
    kind = type(error)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def summary_line(message):
    """The line that names the failure: for a compiler's output its first error, else the first line."""
    lines = [line for line in message.splitlines() if line.strip()]
    if not lines:
        return ""
    first = lines[0].strip()
    for line in lines[1:]:
        found = COMPILER_ERROR.search(line)
        if found:
            return f"{first}: {found.group(1).strip()}"
    return first


def describe_exception(error):
    """(exception_type, message, raised_at, is_cuda_error) of an exception raised by a backend or a run;
    raised_at is raising_frame's."""
    error = _unwrap(error)
    text = str(error)
    if not text.strip() and isinstance(error, AssertionError):
        text = _assert_statement(error)
    summary = summary_line(text) or type_name(error)
    detail = text if len(text) <= MAX_DETAIL else text[:MAX_DETAIL] + "\n[...]"
    message = summary if detail.strip() == summary else f"{summary}\n{detail}"
    is_cuda = "CUDA error" in text or type(error).__name__ in ("AcceleratorError", "CudaError")
    return type_name(error), message, raising_frame(error), is_cuda
