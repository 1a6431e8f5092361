# docs/daemon.md replayed against a real minifyd (ctest minifyd.doc_transcript): every example line
# of its ```json blocks is either a request, sent as it is written (with the substitutions below), or
# a message of the daemon's, which the real one must match in shape: the same keys, recursively,
# with the same JSON types (and the same "ok" and "event"). A client written from the document is
# then one the daemon serves, and the document cannot drift from the daemon again.
#
# What the test puts in place of the document's own values (DOC_* below): its graph directory for
# the document's graph, the faulty plugin (made to hang on aten::relu, a 2 s timeout, so that the
# job is seen running) for the document's plugin, output directories of its own, and, for job ids,
# the id the daemon gave the document's submit, a slow job of its own for the job the document
# cancels, and an id no job has for the one the document looks up in vain.
import json
import os
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from daemon_harness import CASES, Daemon, expect, export_case, faulty, job_args, parse_command_line  # noqa: E402

DOC = os.path.join(HERE, "..", "..", "docs", "daemon.md")
DOC_GRAPH = "/home/me/graphs/resnet18"
DOC_PLUGIN = "plugin:/opt/mybackend.so"
DOC_OUTS = ("/home/me/repro7", "/tmp/x")
DOC_CANCELLED_JOB = 8  # a job the document cancels without submitting it
DOC_MISSING_JOB = 17   # a job the document asks for that does not exist
MISSING_JOB = 987654
CASE = "if_graph_minified"
HANG_OPTIONS = {"op": "aten::relu", "fault": "hang"}
HANG_TIMEOUT_MS = 2000


def doc_exchanges(path):
    """The document's examples: [(request line or None, [documented message lines])], a line being
    (line number, message). Blank lines and block ends separate exchanges; an exchange opens with its
    request (a line with "type"), and one without a request holds the greeting."""
    exchanges, group, in_block = [], [], False

    def close_group():
        if group:
            request = group[0] if "type" in group[0][1] else None
            exchanges.append((request, group[1:] if request else list(group)))
            group.clear()

    with open(path) as f:
        for number, text in enumerate(f, 1):
            stripped = text.strip()
            if stripped.startswith("```"):
                close_group()
                in_block = stripped == "```json"
            elif in_block and not stripped:
                close_group()
            elif in_block:
                try:
                    group.append((number, json.loads(stripped)))
                except json.JSONDecodeError as error:
                    raise AssertionError(f"docs/daemon.md:{number}: an example line that is not JSON ({error})")
    close_group()
    return exchanges


def json_type(value):
    for python_type, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "string"),
                              (list, "array"), (dict, "object"), (type(None), "null")):
        if isinstance(value, python_type):
            return name
    raise AssertionError(f"not JSON: {value!r}")


def shape_problems(documented, real, path="$"):
    """How the real message's shape differs from the documented one's."""
    if json_type(documented) != json_type(real):
        return [f"{path}: documented {json_type(documented)}, got {json_type(real)} ({json.dumps(real)[:200]})"]
    problems = []
    if isinstance(documented, dict):
        for key in sorted(documented.keys() - real.keys()):
            problems.append(f"{path}.{key}: documented, not sent")
        for key in sorted(real.keys() - documented.keys()):
            problems.append(f"{path}.{key}: sent ({json.dumps(real[key])[:100]}), not documented")
        for key in sorted(documented.keys() & real.keys()):
            if key in ("ok", "event") and documented[key] != real[key]:
                problems.append(f"{path}.{key}: documented {documented[key]!r}, got {real[key]!r}")
            problems += shape_problems(documented[key], real[key], f"{path}.{key}")
    elif isinstance(documented, list) and documented:
        for i, item in enumerate(real):
            problems += shape_problems(documented[0], item, f"{path}[{i}]")
    return problems


def check_shape(number, documented, real):
    problems = shape_problems(documented, real)
    expect(not problems, f"docs/daemon.md:{number}: the daemon's message differs from the documented one:\n  "
                         + "\n  ".join(problems) + f"\n  real: {json.dumps(real)[:1500]}")


class Connection:
    def __init__(self, path):
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.settimeout(300)
        self.socket.connect(path)
        self.reader = self.socket.makefile("rb")
        self.greeting = self.read()

    def read(self):
        line = self.reader.readline()
        expect(line.endswith(b"\n"), f"the daemon hung up: {line!r}")
        return json.loads(line)

    def send(self, message):
        self.socket.sendall(json.dumps(message).encode() + b"\n")

    def close(self):
        self.reader.close()
        self.socket.close()


class Replay:
    """The document's requests with the test's values, and what it learns from the replies."""

    def __init__(self, daemon, tools, graph, work):
        self.daemon, self.tools, self.graph, self.work = daemon, tools, graph, work
        self.jobs = {DOC_MISSING_JOB: MISSING_JOB}

    def real_job(self, documented):
        if documented not in self.jobs:
            expect(documented == DOC_CANCELLED_JOB, f"job {documented} of the document is neither submitted by it "
                                                    f"nor one the test stands in for")
            args = job_args(faulty("hang") + ("--timeout", "2"), self.tools)
            self.jobs[documented] = self.daemon.submit(self.graph, args)
        return self.jobs[documented]

    def substitute(self, value, key=None):
        if isinstance(value, dict):
            return {k: self.substitute(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.substitute(v) for v in value]
        if key == "job" and isinstance(value, int):
            return self.real_job(value)
        if value == DOC_GRAPH:
            return self.graph
        if value == DOC_PLUGIN:
            return "plugin:" + self.tools.faulty
        if value in DOC_OUTS:
            return os.path.join(self.work, "out", os.path.basename(value))
        return value

    def request(self, documented):
        request = self.substitute(documented)
        evaluation = request.get("spec", {}).get("evaluation", {})
        if evaluation.get("backend", "").startswith("plugin:"):
            evaluation["backend_options"] = dict(HANG_OPTIONS)
            evaluation["timeout_ms"] = HANG_TIMEOUT_MS
        return request

    def wait_for_state(self, documented_job):
        """Waits until the job stands as the document shows it: running with progress, or done."""
        job = self.real_job(documented_job["id"])
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            code, status, stderr = self.daemon.client("status", str(job))
            expect(code == 0, f"status {job}: {code} {stderr}")
            if status["state"] == documented_job["state"] and ("progress" in status) == ("progress" in documented_job):
                return
            expect(status["state"] in ("queued", "running"), f"job {job} is {status['state']}, not "
                                                             f"{documented_job['state']} as documented: {status}")
            time.sleep(0.05)
        raise AssertionError(f"job {job} did not become {documented_job['state']} within 300 s")


def replay(daemon, tools, graph, work):
    replay = Replay(daemon, tools, graph, work)
    checked = 0
    for request, answers in doc_exchanges(DOC):
        connection = Connection(daemon.socket)
        try:
            if request is None:
                for number, documented in answers:
                    check_shape(number, documented, connection.greeting)
                    checked += 1
                continue
            number, documented_request = request
            expect(answers, f"docs/daemon.md:{number}: a request without its documented reply")
            reply_number, documented_reply = answers[0]
            if isinstance(documented_reply.get("job"), dict):
                replay.wait_for_state(documented_reply["job"])
            connection.send(replay.request(documented_request))
            reply = connection.read()
            check_shape(reply_number, documented_reply, reply)
            checked += 1
            if documented_request["type"] == "submit":
                replay.jobs[documented_reply["id"]] = reply["id"]
            documented_events = {message["event"]: (line, message) for line, message in answers[1:]}
            expect(len(documented_events) == len(answers) - 1 and set(documented_events) <= {"progress", "end"},
                   f"docs/daemon.md:{number}: the events after a reply are one progress line and one end line")
            while documented_events:
                event = connection.read()
                expect(event.get("event") in documented_events,
                       f"docs/daemon.md:{number}: an event the document does not show: {event}")
                event_number, documented_event = documented_events[event["event"]]
                check_shape(event_number, documented_event, event)
                checked += 1
                if event["event"] == "end":
                    break
        finally:
            connection.close()
        print(f"docs/daemon.md:{number}: {documented_request['type']} answered as documented")
    expect(checked >= 10, f"only {checked} example messages found in docs/daemon.md")
    return checked


def main():
    _, tools, work = parse_command_line(__doc__)
    graph = os.path.join(work, "graphs", CASE)
    export_case(CASES[CASE], graph)
    daemon = Daemon(tools, os.path.join(work, "state"), "--workers", "2", "--max-running-jobs", "2").start()
    try:
        checked = replay(daemon, tools, graph, work)
        print(f"{checked} messages of the daemon matched docs/daemon.md's")
        daemon.process.wait(120)  # the document's last request is a shutdown
    except AssertionError:
        print(f"minifyd's log:\n{daemon.log()}")
        raise
    finally:
        daemon.stop()


if __name__ == "__main__":
    main()
