# Precompiled headers for Inductor's C++ kernels. Every kernel Inductor compiles for the CPU starts with
# `#include "<its cache>/xx/<hash>.h"`, its prefix header (ATen's vectorized types and the rest), and g++
# spends about two thirds of a kernel's compile parsing it (0.45 of 0.68 s for the chain's failing
# kernel on the 2-core machine). GCC reads `<header>.gch` instead when that directory holds a header
# precompiled with the same options (and the same compiler), and otherwise the header itself; a
# candidate's diagnostics are the same either way (its kernel is the main file; checked on the injected
# compile error). So before a compile, its prefix header is precompiled once, with the compile's own
# options less the link's, into `<header>.gch/`, under a lock the other workers wait on. The header's
# name is its content's hash, so a precompiled one is never stale. Off with --no-precompiled-headers.
import fcntl
import hashlib
import os
import re
import shlex
import subprocess

INCLUDE = re.compile(r'\s*#include "(/[^"]+\.h)"')
# Options of the link step, and what names the files: left out of the header's compile.
LINK_ONLY = ("-shared",)
LINK_PREFIXES = ("-l", "-L", "-Wl,")


def _prefix_header(source):
    """The absolute path the kernel's first line (blank lines aside) includes, or None."""
    try:
        with open(source) as f:
            found = INCLUDE.match(f.read(4096))
    except OSError:
        return None
    return found.group(1) if found and os.path.isfile(found.group(1)) else None


def _header_options(arguments):
    """The compile's options that make the header's meaning, without the sources, the output and the link's."""
    options, skip = [], False
    for argument in arguments:
        if skip:
            skip = False
        elif argument == "-o":
            skip = True
        elif argument.endswith((".cpp", ".cc", ".o")) or argument in LINK_ONLY or argument.startswith(LINK_PREFIXES):
            continue
        else:
            options.append(argument)
    return options


def precompile_for(command):
    """Precompiles the prefix header of the compile `command` (a list: compiler, arguments) unless done."""
    sources = [a for a in command[1:] if a.endswith(".cpp")]
    header = _prefix_header(sources[0]) if len(sources) == 1 else None
    if header is None:
        return
    options = _header_options(command[1:])
    digest = hashlib.sha256("\0".join([command[0], *options]).encode()).hexdigest()[:20]
    directory = header + ".gch"
    target = os.path.join(directory, digest + ".gch")
    marker = f"{header}.{digest}"  # the lock, and the record of a header that does not precompile
    if os.path.exists(target) or os.path.exists(marker + ".failed"):
        return
    os.makedirs(directory, exist_ok=True)
    with open(marker + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(target) or os.path.exists(marker + ".failed"):
            return
        partial = f"{marker}.{os.getpid()}.partial"
        done = subprocess.run([command[0], "-x", "c++-header", header, *options, "-o", partial],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if done.returncode == 0:
            os.rename(partial, target)
        else:
            open(marker + ".failed", "w").close()
            if os.path.exists(partial):
                os.remove(partial)


def install():
    """Precompiles before each of Inductor's C++ compiles, where this PyTorch compiles through
    cpp_builder._run_compile_cmd (2.6 and later); elsewhere changes nothing."""
    from torch._inductor import cpp_builder
    compile_command = getattr(cpp_builder, "_run_compile_cmd", None)
    if compile_command is None:
        return

    def run_compile_cmd(cmd_line, cwd):
        try:
            precompile_for(shlex.split(cmd_line))
        except OSError:
            pass  # no precompiled header: the compile reads the header itself
        return compile_command(cmd_line, cwd)

    cpp_builder._run_compile_cmd = run_compile_cmd
