# docs/deploy.md replayed (ctest minifyd.deploy): its `sh` blocks run as written, in order, with the
# page's host paths standing for the test's own; its `console` blocks (root's steps on a host with a
# running systemd) are stood in for, line by line, as the page's last section says: the units the
# install wrote pass `systemd-analyze verify`, and `systemctl start` runs the unit's own ExecStart.
# The install is built without LibTorch from a copy of the source tree that is deleted once installed,
# so every job of the page runs on what the install holds, in the Python worker, under real Inductor,
# with a real PostgreSQL server as the team's queue.
import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from daemon_harness import expect  # noqa: E402
from postgres_server import PostgresServer, find_bindir  # noqa: E402

DOC = os.path.join(HERE, "..", "..", "docs", "deploy.md")
DOC_QUEUE = "postgresql://minifyd@db.example.com/minifyd"
# The page's host directories, each standing for the same path under the test's scratch root.
HOST_PATHS = re.compile(r"(?<![\w.~/-])(/opt|/srv|/var|/etc)(?=/|\s|$)")
SKIP = 77


def doc_blocks(path):
    """[(line number, language, text)] of the page's ``` blocks."""
    blocks, language, lines, start = [], None, [], 0
    with open(path) as f:
        for number, text in enumerate(f, 1):
            if text.startswith("```"):
                if language is None:
                    language, lines, start = text[3:].strip(), [], number
                else:
                    blocks.append((start, language, "".join(lines)))
                    language = None
            elif language is not None:
                lines.append(text)
    return blocks


class Replay:
    def __init__(self, work, source, python, queue):
        self.work, self.source, self.queue = work, source, queue
        self.root = os.path.join(work, "root")
        self.home = os.path.join(work, "home")
        self.env = {key: value for key, value in os.environ.items()
                    if not key.startswith(("MINIFYD_", "XDG_")) and key not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
        bin_dir = os.path.join(work, "bin")
        os.makedirs(bin_dir)
        # The page's python3 is one with PyTorch 2.x: the tests' own.
        os.symlink(python, os.path.join(bin_dir, "python3"))
        self.env.update(HOME=self.home, PATH=f"{bin_dir}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
        os.makedirs(self.home)
        self.units = {}    # "system" or "user" -> the unit file systemctl linked
        self.daemons = {}  # "system" or "user" -> (process, its log)
        self.source_copy = None

    def host_path(self, text):
        """The page's text with its host paths and queue standing for the test's."""
        return HOST_PATHS.sub(lambda match: self.root + match.group(1), text.replace(DOC_QUEUE, self.queue))

    def run_sh(self, number, text):
        text = self.host_path(text).replace("sudo -u minifyd ", "")
        first = self.source_copy is None
        if first:
            # The page builds from the checkout: a copy of it, deleted with the build once installed.
            self.source_copy = os.path.join(self.work, "source")
            shutil.copytree(self.source, self.source_copy, ignore=self.not_sources)
        print(f"docs/deploy.md:{number}: running\n{text}", flush=True)
        done = subprocess.run(["bash", "-eu", "-c", text], env=self.env,
                              cwd=self.source_copy if first else self.home)
        expect(done.returncode == 0, f"docs/deploy.md:{number}: the block exited {done.returncode}"
                                     + self.daemon_logs())
        if first:
            shutil.rmtree(self.source_copy)

    def not_sources(self, directory, names):
        """What the copy of the checkout leaves out: build trees and what git ignores at its top."""
        top = os.path.samefile(directory, self.source)
        return [name for name in names if name == "__pycache__" or
                (top and (name.startswith(("build", "cmake-build", ".")) or name in ("minify-out", "example-out")))]

    def run_console(self, number, text):
        for line in text.splitlines():
            line = self.host_path(line.strip())
            if not line:
                continue
            words = shlex.split(line)
            print(f"docs/deploy.md:{number}: standing in for: {line}", flush=True)
            if words[0] == "systemctl":
                self.systemctl(number, words[1:])
            elif words[0] in ("createuser", "createdb", "useradd"):
                pass  # the test's server has its database; the test is one user
            elif words[:2] == ["mkdir", "-p"] and "&&" in words:
                os.makedirs(words[2], exist_ok=True)
            else:
                raise AssertionError(f"docs/deploy.md:{number}: a root step the test does not stand in for: {line}")

    def systemctl(self, number, words):
        kind = "user" if words[0] == "--user" else "system"
        words = words[1:] if kind == "user" else words
        if words[0] == "link":
            unit = words[1]
            expect(os.path.isfile(unit), f"docs/deploy.md:{number}: {unit} was not installed")
            verify = ["systemd-analyze"] + (["--user"] if kind == "user" else []) + ["verify", unit]
            runtime = os.path.join(self.work, "runtime")
            os.makedirs(runtime, exist_ok=True)
            checked = subprocess.run(verify, capture_output=True, text=True,
                                     env={**self.env, "XDG_RUNTIME_DIR": runtime})
            expect(checked.returncode == 0 and not checked.stderr.strip(),
                   f"docs/deploy.md:{number}: {' '.join(verify)}: {checked.returncode} {checked.stderr}")
            self.units[kind] = unit
        elif words[-1] != "minifyd":
            raise AssertionError(f"docs/deploy.md:{number}: systemctl of another unit: {words}")
        elif words[0] in ("start", "restart") or words[:2] == ["enable", "--now"]:
            self.stop(kind)
            self.start(number, kind)
        elif words[0] == "stop":
            self.stop(kind)
        else:
            raise AssertionError(f"docs/deploy.md:{number}: a systemctl the test does not stand in for: {words}")

    def start(self, number, kind):
        """The unit's ExecStart, as systemd runs it: its state directory made (mode 0700), %S and %E
        the test's, KillMode=mixed at the stop."""
        expect(kind in self.units, f"docs/deploy.md:{number}: systemctl starts a {kind} unit never linked")
        with open(self.units[kind]) as f:
            unit = f.read()
        state_root = os.path.join(self.home, ".local", "state") if kind == "user" else os.path.join(self.root, "var", "lib")
        config_root = os.path.join(self.home, ".config") if kind == "user" else os.path.join(self.root, "etc")
        expect(re.search(r"^StateDirectory=minifyd$", unit, re.M) and re.search(r"^KillMode=mixed$", unit, re.M),
               f"{self.units[kind]}: no StateDirectory=minifyd or KillMode=mixed")
        os.makedirs(os.path.join(state_root, "minifyd"), mode=0o700, exist_ok=True)
        exec_start = re.search(r"^ExecStart=(.*)$", unit, re.M).group(1)
        command = shlex.split(exec_start.replace("%S", state_root).replace("%E", config_root))
        log_path = os.path.join(self.work, f"minifyd-{kind}.log")
        log = open(log_path, "a")
        process = subprocess.Popen(command, env=self.env, stdout=log, stderr=subprocess.STDOUT, cwd="/")
        self.daemons[kind] = (process, log_path)
        socket = os.path.join(state_root, "minifyd", "minifyd.sock")
        deadline = time.monotonic() + 60
        while not os.path.exists(socket):
            expect(process.poll() is None and time.monotonic() < deadline,
                   f"docs/deploy.md:{number}: {' '.join(command)} did not serve {socket}" + self.daemon_logs())
            time.sleep(0.1)

    def stop(self, kind):
        if kind in self.daemons:
            process, _ = self.daemons.pop(kind)
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(120)
                except subprocess.TimeoutExpired:
                    process.kill()
                    raise AssertionError(f"minifyd ({kind}) did not stop within 120 s of SIGTERM" + self.daemon_logs())
            expect(process.returncode == 0, f"minifyd ({kind}) stopped with {process.returncode}" + self.daemon_logs())

    def daemon_logs(self):
        text = ""
        for kind in ("user", "system"):
            path = os.path.join(self.work, f"minifyd-{kind}.log")
            if os.path.exists(path):
                with open(path) as f:
                    text += f"\n--- minifyd ({kind}) log:\n" + f.read()[-4000:]
        return text


def check_install(prefix, work):
    """What a build without LibTorch installs: no minify-worker, no PyTorch linked; and its minifyd
    refuses a configuration naming no option, naming the file and the name."""
    typo = os.path.join(work, "typo.conf")
    with open(typo, "w") as f:
        f.write('workers = 2\nmax-runing-jobs = 3\n')
    refused = subprocess.run([os.path.join(prefix, "bin", "minifyd"), "--config", typo, "--state-dir",
                              os.path.join(work, "typo-state")], capture_output=True, text=True, timeout=60)
    expect(refused.returncode == 2 and typo in refused.stderr and "max-runing-jobs" in refused.stderr,
           f"minifyd --config with a misspelt option: {refused.returncode} {refused.stderr}")
    expect(not os.path.exists(os.path.join(prefix, "libexec", "minifyd", "minify-worker")),
           "a build without LibTorch installed minify-worker")
    for binary in ("minify", "minifyd"):
        ldd = subprocess.run(["ldd", os.path.join(prefix, "bin", binary)], capture_output=True, text=True).stdout
        libraries = [line.split()[0] for line in ldd.splitlines() if line.split()]
        expect(not [name for name in libraries if name.startswith(("libtorch", "libc10"))],
               f"{binary} of a build without LibTorch links:\n{ldd}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", required=True)
    parser.add_argument("--torch2-python", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    bindir = find_bindir()
    if bindir is None or shutil.which("systemd-analyze") is None or not os.path.exists(args.torch2_python):
        print("skipped: needs Debian's PostgreSQL server, systemd-analyze and the PyTorch 2.x python")
        return SKIP
    server = PostgresServer(bindir, os.path.join(work, "pg"))
    replay = None
    try:
        server.create_database("minifyd")
        # libpq's URL with the server's socket directory as its host: nothing in it the shell reads.
        queue = f"postgresql://postgres@{urllib.parse.quote(server.directory, safe='')}/minifyd"
        replay = Replay(work, os.path.abspath(args.source), args.torch2_python, queue)
        for number, language, text in doc_blocks(DOC):
            if language == "sh":
                replay.run_sh(number, text)
            elif language == "console":
                replay.run_console(number, text)
            else:
                raise AssertionError(f"docs/deploy.md:{number}: a ```{language} block, neither sh nor console")
        check_install(os.path.join(replay.root, "opt", "minifyd"), work)
        for kind in list(replay.daemons):
            replay.stop(kind)
        states = server.query("minifyd", "SELECT state FROM minifyd_jobs")
        expect(states == [["done"]], f"the queue's jobs: {states}")
    finally:
        if replay is not None:
            for kind in list(replay.daemons):
                replay.daemons[kind][0].kill()
        server.stop()
    print("docs/deploy.md replayed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
