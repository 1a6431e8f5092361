# Links planted in a directory we write, and blobs that are not what the document says (label
# security; docs/security.md "Links and blobs"), against the real binaries and a real minifyd:
#   owner_link   OUT/.owner as a link to a victim's file: `minify run` and minifyd's `minify result`
#                refuse it, the file unchanged; an --out of another user's refused (as root).
#   store_links  OUT/store/tmp as a link to a directory of victim files: `minify run` refused, and
#                `minify store gc` of a graph directory whose store/tmp is one; OUT/store/lock as a
#                dangling link: no file made at its target; every victim file kept.
#   blobs        a blob that is a link to /dev/zero, a sparse 8 GiB file where the document says 128
#                bytes, a FIFO: `validate --check-store`, `store verify`, `run`, `query` (the C++ worker,
#                the Python worker, and through minifyd) and a minifyd `submit` each refuse, naming the
#                blob, never hanging; so are a graph.json that is a FIFO or a sparse 8 GiB file; minifyd
#                answers `list` within 1 s after each, and `shutdown` ends it.
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "minifyd"))
sys.path.insert(0, os.path.join(HERE, "..", "inductor"))
from daemon_harness import Daemon, Tools, expect  # noqa: E402
from harness import run_scenarios  # noqa: E402

EXIT_FAILED, EXIT_USAGE = 1, 2
# 32 floats, -16 to 15: their log has NaNs, so the graph fails under --nan.
BLOB = struct.pack("<32f", *(float(i - 16) for i in range(32)))
DIGEST = hashlib.sha256(BLOB).hexdigest()
# A command that hangs on a FIFO is a failure, not a stuck test.
COMMAND_TIMEOUT = 60
# `store verify` has no document to size a blob by: it hashes the sparse 8 GiB blob, streaming, which
# takes seconds alone and a minute or more on a loaded 2-core machine.
VERIFY_TIMEOUT = 600
VICTIM_FILES = {"precious.txt": b"keep me", ".graph.json.abcdef": b"named as our temp files",
                "tmpabcdefgh": b"named as Python's"}


def graph_document():
    """log of one 32-float input, whose 128 bytes are the blob DIGEST."""
    tensor = {"storage": 0, "dtype": "float32", "shape": [32], "stride": [1], "storage_offset": 0,
              "requires_grad": False}
    return {"format": "minifyd.graph", "version": 1,
            "storages": [{"hash": DIGEST, "nbytes": len(BLOB), "device": "cpu"}],
            "inputs": [tensor], "constants": {},
            "nodes": [{"name": "arg0_1", "op": "placeholder"},
                      {"name": "log", "op": "call_function", "target": "aten::log", "args": [{"node": "arg0_1"}]},
                      {"name": "output", "op": "output", "args": [{"tuple": [{"node": "log"}]}]}]}


def write_graph_dir(path):
    """A valid graph directory: graph.json and its store, the blob in it."""
    shutil.rmtree(path, ignore_errors=True)
    store = os.path.join(path, "store")
    for sub in ("tmp", "roots", os.path.join("blobs", DIGEST[:2])):
        os.makedirs(os.path.join(store, sub))
    with open(os.path.join(store, "VERSION"), "w") as f:
        f.write("minifyd-store 1\n")
    with open(os.path.join(store, "roots", "graph.json"), "w") as f:
        json.dump({"format": "minifyd.store-root", "version": 1, "blobs": [DIGEST]}, f)
    with open(blob_path(path), "wb") as f:
        f.write(BLOB)
    with open(os.path.join(path, "graph.json"), "w") as f:
        json.dump(graph_document(), f)
    return path


def blob_path(graph_dir):
    return os.path.join(graph_dir, "store", "blobs", DIGEST[:2], DIGEST)


def victim_directory(work):
    victim = os.path.join(work, "victim")
    shutil.rmtree(victim, ignore_errors=True)
    os.makedirs(victim)
    for name, content in VICTIM_FILES.items():
        with open(os.path.join(victim, name), "wb") as f:
            f.write(content)
    return victim


def check_victim(victim, what):
    found = {}
    for name in os.listdir(victim):
        with open(os.path.join(victim, name), "rb") as f:
            found[name] = f.read()
    expect(found == VICTIM_FILES, f"{what}: the victim's files are now {found}")


def minify(args, *command, timeout=COMMAND_TIMEOUT):
    """(exit code, stdout + stderr) of `minify COMMAND`, which must end within timeout."""
    done = subprocess.run([args.minify, *command], capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout + done.stderr


def refused(args, what, code, words, *command, timeout=COMMAND_TIMEOUT):
    got, output = minify(args, *command, timeout=timeout)
    expect(got == code and all(word in output for word in words),
           f"{what}: `minify {' '.join(command)}` exits {got}, wanted {code} naming {words}: {output[-2000:]}")
    print(f"{what}: {command[0]} exits {got}")


def answers_list_quickly(daemon, what):
    started = time.monotonic()
    code, jobs, stderr = daemon.client("list", timeout=COMMAND_TIMEOUT)
    took = time.monotonic() - started
    expect(code == 0 and isinstance(jobs, list) and took < 1.0,
           f"after {what}: minifyd's list exits {code} in {took:.2f} s: {stderr}")


def shut_down(daemon):
    code, _, stderr = daemon.client("shutdown", timeout=COMMAND_TIMEOUT)
    expect(code == 0, f"shutdown exits {code}: {stderr}")
    try:
        daemon.process.wait(30)
    except subprocess.TimeoutExpired:
        daemon.kill()
        raise AssertionError(f"minifyd did not end within 30 s of shutdown:\n{daemon.log()}")


def owner_link(args):
    graph = write_graph_dir(os.path.join(args.work, "graph"))
    victim = os.path.join(args.work, "victim-file")
    with open(victim, "wb") as f:
        f.write(b"a victim's file\n")
    out = os.path.join(args.work, "run-out")
    os.makedirs(out)
    os.symlink(victim, os.path.join(out, ".owner"))
    refused(args, ".owner link", EXIT_USAGE, [".owner is a symbolic link"],
            "run", graph, "--out", out, "--backend", "eager", "--json")

    daemon = Daemon(Tools(args.minify, args.minifyd, None), os.path.join(args.work, "state")).start()
    try:
        job = daemon.submit(graph, ["--backend", "eager", "--nan"])
        deadline = time.monotonic() + 300
        while daemon.client("status", str(job))[1]["state"] not in ("done", "failed", "cancelled"):
            expect(time.monotonic() < deadline, f"job {job} did not end")
            time.sleep(0.2)
        result_out = os.path.join(args.work, "result-out")
        os.makedirs(result_out)
        os.symlink(victim, os.path.join(result_out, ".owner"))
        code, reply, stderr = daemon.client("result", str(job), "--out", result_out)
        expect(code == EXIT_USAGE and ".owner is a symbolic link" in stderr + json.dumps(reply),
               f"result into a directory whose .owner is a link: exit {code} {reply} {stderr}")
        print(f"result: exits {code}")
        answers_list_quickly(daemon, "the refused result")
        shut_down(daemon)
    finally:
        daemon.stop()
    with open(victim, "rb") as f:
        expect(f.read() == b"a victim's file\n", "the victim file behind .owner was written")

    if os.geteuid() != 0:
        print("an --out of another user's: skipped (only root can make one)")
        return
    theirs = os.path.join(args.work, "theirs")
    os.makedirs(theirs)
    os.chown(theirs, 65534, 65534)
    refused(args, "another user's --out", EXIT_USAGE, ["belongs to uid 65534"],
            "run", graph, "--out", theirs, "--backend", "eager", "--json")
    expect(os.listdir(theirs) == [], f"run wrote into another user's directory: {os.listdir(theirs)}")


def store_links(args):
    graph = write_graph_dir(os.path.join(args.work, "graph"))
    victim = victim_directory(args.work)

    out = os.path.join(args.work, "tmp-link-out")
    os.makedirs(os.path.join(out, "store"))
    os.symlink(victim, os.path.join(out, "store", "tmp"))
    refused(args, "OUT/store/tmp link", EXIT_USAGE, [os.path.join(out, "store", "tmp"), "symbolic link"],
            "run", graph, "--out", out, "--backend", "eager", "--json")
    check_victim(victim, "run with OUT/store/tmp a link")

    received = write_graph_dir(os.path.join(args.work, "received"))
    shutil.rmtree(os.path.join(received, "store", "tmp"))
    os.symlink(victim, os.path.join(received, "store", "tmp"))
    refused(args, "store/tmp link", EXIT_USAGE, [os.path.join(received, "store", "tmp"), "symbolic link"],
            "store", "gc", received)
    check_victim(victim, "store gc with store/tmp a link")

    out = os.path.join(args.work, "lock-link-out")
    target = os.path.join(args.work, "lock-target")
    os.makedirs(os.path.join(out, "store"))
    os.symlink(target, os.path.join(out, "store", "lock"))
    refused(args, "OUT/store/lock dangling link", EXIT_USAGE, [os.path.join(out, "store", "lock"), "symbolic link"],
            "run", graph, "--out", out, "--backend", "eager", "--json")
    refused(args, "store/lock dangling link", EXIT_USAGE, [os.path.join(out, "store", "lock")],
            "store", "gc", os.path.join(out, "store"))
    expect(not os.path.lexists(target), f"a file was made at {target}, the lock link's target")


def hostile_blob_dirs(args):
    """{what: a graph directory whose blob is that}."""
    def with_blob(name, make):
        graph = write_graph_dir(os.path.join(args.work, name))
        os.remove(blob_path(graph))
        make(blob_path(graph))
        return graph

    def sparse(path):
        with open(path, "wb") as f:
            f.truncate(8 << 30)

    return {"a link to /dev/zero": with_blob("dev-zero", lambda path: os.symlink("/dev/zero", path)),
            "a sparse 8 GiB file": with_blob("sparse", sparse),
            "a FIFO": with_blob("fifo", os.mkfifo)}


def blobs(args):
    daemon = Daemon(Tools(args.minify, args.minifyd, None), os.path.join(args.work, "state")).start()
    python_worker = args.python if os.access(args.python, os.X_OK) else None
    if python_worker is None:
        print(f"query on the Python worker: skipped (no PyTorch 2.x python at {args.python})")
    try:
        for what, graph in hostile_blob_dirs(args).items():
            named = [DIGEST]
            refused(args, what, EXIT_FAILED, named, "validate", "--check-store", graph)
            started = time.monotonic()
            refused(args, what, EXIT_FAILED, named, "store", "verify", graph, timeout=VERIFY_TIMEOUT)
            print(f"{what}: store verify took {time.monotonic() - started:.1f} s")
            refused(args, what, EXIT_USAGE, named, "run", graph, "--out", os.path.join(graph + "-out"),
                    "--backend", "eager", "--json")
            refused(args, what, EXIT_USAGE, named, "query", graph, "--backend", "eager", "--json")
            if python_worker:
                refused(args, what, EXIT_USAGE, named, "query", graph, "--backend", "aot_eager",
                        "--python", python_worker, "--json")
            refused(args, what, EXIT_USAGE, named, "query", "--daemon", graph, "--backend", "eager",
                    "--state-dir", daemon.state_dir, "--json")
            answers_list_quickly(daemon, f"query --daemon of {what}")
            refused(args, what, EXIT_USAGE, named, "submit", graph, "--backend", "eager",
                    "--state-dir", daemon.state_dir, "--json")
            answers_list_quickly(daemon, f"a submit of {what}")

        fifo_graph = write_graph_dir(os.path.join(args.work, "fifo-graph"))
        os.remove(os.path.join(fifo_graph, "graph.json"))
        os.mkfifo(os.path.join(fifo_graph, "graph.json"))
        named = [os.path.join(fifo_graph, "graph.json"), "FIFO"]
        refused(args, "a FIFO graph.json", EXIT_FAILED, named, "validate", fifo_graph)
        refused(args, "a FIFO graph.json", EXIT_USAGE, named, "run", fifo_graph, "--out", fifo_graph + "-out",
                "--backend", "eager", "--json")
        refused(args, "a FIFO graph.json", EXIT_USAGE, named, "query", fifo_graph, "--backend", "eager", "--json")
        for _ in range(2):  # two of them once held both of minifyd's file threads
            refused(args, "a FIFO graph.json", EXIT_USAGE, named, "submit", fifo_graph, "--backend", "eager",
                    "--state-dir", daemon.state_dir, "--json")
            answers_list_quickly(daemon, "a submit of a FIFO graph.json")
        huge_graph = write_graph_dir(os.path.join(args.work, "huge-graph"))
        with open(os.path.join(huge_graph, "graph.json"), "r+b") as f:
            f.truncate(8 << 30)
        named = [os.path.join(huge_graph, "graph.json"), "8589934592 bytes"]
        refused(args, "a sparse 8 GiB graph.json", EXIT_FAILED, named, "validate", huge_graph)
        refused(args, "a sparse 8 GiB graph.json", EXIT_USAGE, named, "submit", huge_graph, "--backend", "eager",
                "--state-dir", daemon.state_dir, "--json")
        answers_list_quickly(daemon, "a submit of a sparse 8 GiB graph.json")
        expect(daemon.process.poll() is None, f"minifyd ended:\n{daemon.log()}")
        shut_down(daemon)
        print("minifyd answered list within 1 s after every probe, and shutdown ended it")
    finally:
        daemon.stop()


SCENARIOS = {"owner_link": owner_link, "store_links": store_links, "blobs": blobs}

if __name__ == "__main__":
    run_scenarios(SCENARIOS, label="security", fresh_work=True)
