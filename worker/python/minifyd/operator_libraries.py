# The operator libraries a request names (--op-library, docs/security.md "A vendor's operators"), loaded
# into this process as worker/operator_libraries.h loads them into minify-worker's: each file opened with
# O_NOFOLLOW, checked (a regular file of this user's that neither group nor others may write, its SHA-256
# the job's) and loaded by torch.ops.load_library through /proc/self/fd of that open file, so a file
# swapped after the check is never what loads. A library cannot be unloaded: a process that loaded some
# serves only requests naming the same ones (the fork server's children serve one request each; a worker
# serving in its own process retires after it, worker_requests.py).
import hashlib
import os
import stat

import torch

from minifyd import graph_format as gf


class LibraryError(Exception):
    """A library that may not, or could not, be loaded; the message names it."""


def _names(libraries):
    return ", ".join(f"{library['namespace']}={library['path']}" for library in libraries) or "none"


def open_checked(library):
    """The descriptor of the library's file, open and checked as the module says; LibraryError otherwise."""
    path, expected = library["path"], library["sha256"]
    where = f"operator library {path}"
    refused = gf.library_namespace_refusal(library["namespace"])
    if refused:
        raise LibraryError(f"{where}: {refused}")
    if not os.path.isabs(path):
        raise LibraryError(f"{where}: not an absolute path")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as error:
        if os.path.islink(path):
            raise LibraryError(f"{where}: is a symbolic link, which is not followed (name the file itself)") from None
        raise LibraryError(f"{where}: {error.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise LibraryError(f"{where}: is not a regular file")
        if info.st_uid != os.getuid():
            raise LibraryError(f"{where}: belongs to uid {info.st_uid}, not to this user (uid {os.getuid()}): "
                               "only your own library is loaded")
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise LibraryError(f"{where}: may be written by its group or by others "
                               f"(mode {stat.S_IMODE(info.st_mode):03o}): chmod go-w it")
        digest = hashlib.sha256()
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            digest.update(chunk)
        if digest.hexdigest() != expected:
            raise LibraryError(f"{where}: its SHA-256 is {digest.hexdigest()}, not the {expected} recorded with "
                               "the job: it changed since, and is not loaded")
        return fd
    except BaseException:
        os.close(fd)
        raise


class OperatorLibraries:
    def __init__(self):
        self.loaded = None  # the libraries this process loaded, once a request named any
        self.failure = None  # the LibraryError of their load, if it failed

    def require(self, libraries):
        """Loads `libraries` unless they are the ones loaded; LibraryError when another set was loaded here,
        a file fails its check (every file is checked before any loads: nothing changes then) or its load
        fails (after which this process holds that set still, and answers it with that error)."""
        if self.loaded is not None:
            if self.loaded != libraries:
                raise LibraryError(f"this worker process loaded other operator libraries ({_names(self.loaded)}) "
                                   f"than the request names ({_names(libraries)}): it serves no other job")
            if self.failure is not None:
                raise self.failure
            return
        if not libraries:
            return
        # Every file checked before any loads: a refused one leaves this process as it was.
        fds = []
        try:
            for library in libraries:
                fds.append(open_checked(library))
            self.loaded = [dict(library) for library in libraries]
            for library, fd in zip(libraries, fds):
                try:
                    torch.ops.load_library(f"/proc/self/fd/{fd}")
                except (OSError, RuntimeError) as error:
                    self.failure = LibraryError(f"operator library {library['path']} (--op-library "
                                                f"{library['namespace']}): cannot load: {error}")
                    raise self.failure from None
        finally:
            for fd in fds:
                os.close(fd)

    @staticmethod
    def namespaces(libraries):
        """The namespaces `libraries` add to the graph rule."""
        return frozenset(library["namespace"] for library in libraries)
