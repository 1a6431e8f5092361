# One candidate's kernels at a time on a GPU, across every worker of this user on the host (the
# workers of one `minify run`, of several, of a minifyd). Measured on an H200 (docs/gpu.md, session
# 17): eight processes whose Triton kernel fails a device-side assert at the same moment: in each of
# three rounds one or two of them never returned from Inductor's autotuning `torch.cuda.synchronize()`
# (40 s, until killed), where the rest raised `cudaErrorAssert` within 1.6 s; with the runs taken in
# turn, none of 16 hung. A hung run is a timeout where the user's process shows the assert: the wrong
# verdict. Only the run holds the lock (compiles, the long part, stay parallel), and a run waits for
# it at most PATIENCE_SECONDS: a candidate whose kernel hangs holds it until its time limit, and the
# others must not time out behind it, so past that they run beside it, as they did before the lock.
# The locks are flock()s on one file per GPU (by UUID) in a directory of this user's only; the
# kernel drops a dead worker's lock with its descriptor.
import contextlib
import fcntl
import os
import re
import stat
import tempfile
import time

PATIENCE_SECONDS = 5.0
# Polling a non-blocking flock: a blocking one cannot give up at a deadline without a signal.
POLL_SECONDS = (0.001, 0.02)


class DeviceLockError(Exception):
    """The lock directory cannot be trusted or made (the message says why): the worker runs without."""


def default_directory():
    return os.path.join(tempfile.gettempdir(), f"minifyd-device-locks-{os.getuid()}")


def _private_directory(path):
    """path, made if missing, once it is a real directory of this user's that no one else can write
    (a shared temporary directory is anyone's: another user's directory or link there is refused)."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as error:
        raise DeviceLockError(f"{path}: {error.strerror}") from error
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise DeviceLockError(f"{path}: not a directory")
    if info.st_uid != os.getuid():
        raise DeviceLockError(f"{path}: owned by uid {info.st_uid}, not this user's {os.getuid()}")
    if info.st_mode & 0o022:
        raise DeviceLockError(f"{path}: writable by others (mode {stat.S_IMODE(info.st_mode):o})")
    return path


class DeviceRunLock:
    """held(): a context in which this process's run has the GPUs it sees to itself, or has waited
    `patience` seconds for them (or found a lock file it cannot open: a run never fails for want of
    its lock); `waited` and `alone` say how the last one went."""

    def __init__(self, device_names, directory=None, patience=PATIENCE_SECONDS):
        directory = _private_directory(directory or default_directory())
        # A device's name becomes a file name: anything but letters, digits and dashes goes.
        names = sorted({re.sub(r"[^A-Za-z0-9-]", "_", name) for name in device_names})
        self.paths = [os.path.join(directory, f"{name}.lock") for name in names]
        self.patience = patience
        self.waited = 0.0
        self.alone = True

    @contextlib.contextmanager
    def held(self):
        started = time.monotonic()
        descriptors = []
        try:
            try:
                for path in self.paths:
                    descriptors.append(os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
                self.alone = self._lock_all(descriptors, started + self.patience)
            except OSError:  # a lock file replaced by a link, or its directory removed: run anyway
                self.alone = False
            self.waited = time.monotonic() - started
            yield self
        finally:
            for fd in descriptors:
                os.close(fd)

    @staticmethod
    def _lock_all(descriptors, deadline):
        """Every lock, in path order (so two processes never hold one each of two), by the deadline:
        True; False once it passed (those taken are let go)."""
        pause = POLL_SECONDS[0]
        for index, fd in enumerate(descriptors):
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        for taken in descriptors[:index]:
                            fcntl.flock(taken, fcntl.LOCK_UN)
                        return False
                    time.sleep(pause)
                    pause = min(pause * 2, POLL_SECONDS[1])
        return True
