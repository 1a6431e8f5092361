# The Python worker's GPU run lock (worker/python/minifyd/device_lock.py) across real processes,
# without a GPU: runs take turns; a run waits for a hung holder only its patience, then goes on; a
# dead holder's lock is free at once; two processes naming the same GPUs in other orders never hold
# one each; a lock directory or file that is not the user's own is refused or not followed.
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "worker", "python"))
from minifyd.device_lock import DeviceLockError, DeviceRunLock  # noqa: E402

HOLDER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from minifyd.device_lock import DeviceRunLock
lock = DeviceRunLock(sys.argv[3].split(","), directory=sys.argv[2], patience=60)
with lock.held():
    print("held", flush=True)
    time.sleep(float(sys.argv[4]))
"""


def expect(condition, message):
    if not condition:
        sys.exit("FAIL: " + message)


def holder(directory, seconds, devices="GPU-a"):
    """A process holding the lock of `devices` for `seconds`, once it says so."""
    process = subprocess.Popen([sys.executable, "-c", HOLDER, os.path.join(ROOT, "worker", "python"), directory,
                                devices, str(seconds)], stdout=subprocess.PIPE, text=True)
    expect(process.stdout.readline().strip() == "held", "the holder took the lock")
    return process


def takes_turns(directory):
    process = holder(directory, 1.0)
    lock = DeviceRunLock(["GPU-a"], directory=directory, patience=30)
    with lock.held():
        pass
    expect(lock.alone and 0.5 < lock.waited < 10, f"waited {lock.waited:.2f} s for a 1 s holder, alone={lock.alone}")
    process.wait()


def patience_bounds_the_wait(directory):
    process = holder(directory, 300)
    lock = DeviceRunLock(["GPU-a"], directory=directory, patience=0.5)
    with lock.held():
        expect(process.poll() is None, "the holder still runs")
    expect(not lock.alone and 0.5 <= lock.waited < 5, f"gave up after {lock.waited:.2f} s, alone={lock.alone}")
    # A dead holder's lock is free at once: the kernel drops it with the process's descriptor.
    process.send_signal(signal.SIGKILL)
    process.wait()
    lock.patience = 30
    with lock.held():
        pass
    expect(lock.alone and lock.waited < 0.5, f"waited {lock.waited:.2f} s after the holder died")


def orders_do_not_deadlock(directory):
    process = holder(directory, 1.0, devices="GPU-b,GPU-a")
    lock = DeviceRunLock(["GPU-a", "GPU-b"], directory=directory, patience=30)
    with lock.held():
        pass
    expect(lock.alone and 0.5 < lock.waited < 10, f"waited {lock.waited:.2f} s for the holder of both, alone={lock.alone}")
    process.wait()


def hostile_places(scratch):
    target = os.path.join(scratch, "elsewhere")
    os.mkdir(target, 0o700)
    link = os.path.join(scratch, "link")
    os.symlink(target, link)
    for directory, word in ((link, "not a directory"), (os.path.join(scratch, "open"), "writable by others")):
        if word == "writable by others":
            os.mkdir(directory)
            os.chmod(directory, 0o777)
        try:
            DeviceRunLock(["GPU-a"], directory=directory)
            expect(False, f"{directory} was taken as the lock directory")
        except DeviceLockError as error:
            expect(word in str(error), f"the refusal names why: {error}")
    # A lock file replaced by a link is not followed: the run goes on unlocked, nothing is created.
    directory = os.path.join(scratch, "locks")
    os.mkdir(directory, 0o700)
    victim = os.path.join(scratch, "victim")
    os.symlink(victim, os.path.join(directory, "GPU-a.lock"))
    lock = DeviceRunLock(["GPU-a"], directory=directory)
    with lock.held():
        pass
    expect(not lock.alone and not os.path.lexists(victim), "the link was not followed")
    # Names become file names: a device name cannot climb out of the directory.
    lock = DeviceRunLock(["../../GPU-x"], directory=directory)
    expect(all(os.path.dirname(path) == directory for path in lock.paths), f"paths stay inside: {lock.paths}")


def main():
    with tempfile.TemporaryDirectory() as scratch:
        for number, check in enumerate((takes_turns, patience_bounds_the_wait, orders_do_not_deadlock)):
            directory = os.path.join(scratch, f"locks{number}")
            check(directory)
            print(f"ok: {check.__name__}")
        hostile_places(scratch)
        print("ok: hostile_places")


if __name__ == "__main__":
    main()
