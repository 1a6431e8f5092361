# No text from a graph becomes code (label security; docs/security.md, "Names are names"):
#   hostile_names   the documents that ran their payload before the names rule (a constant named to close
#                   FX's getattr(self, "...") and open an expression, a kwargs key that ends the call and
#                   adds statements, a single quote that leaves after_aot's register_buffer('...'), a NUL
#                   and a U+2028 in a kwargs key): `minify validate`, `run` (its plain check), `run
#                   --shrink-inputs`, `query --accuracy` under Inductor, scripts/repro_from_graph.py's repro,
#                   a minifyd job and the Python worker's own pipe each refuse them naming the node and the
#                   field, and the payload's marker is never written; an origin.json that turns Inductor's
#                   trace on into a directory it names is refused by name, nothing written there.
#   writers_fuzz    hostile strings (quotes, newlines, backslashes, NUL, U+2028/2029, triple quotes,
#                   __import__, keywords, very long) in every field of a document that a name or a string
#                   reaches: `minify validate` (C++) and the Python loader agree on each, and where they
#                   accept it every writer of Python (the graph module's code, repro_from_graph's repro.py,
#                   after_aot's repro under inductor and aot_eager, the shape helper) writes text that
#                   compiles, and the written repros run without the payload's marker; hostile backend
#                   options are refused or written as data.
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "inductor"))
sys.path.insert(0, os.path.join(HERE, "..", "minifyd"))
from harness import EXIT_USAGE, ROOT, expect, run_scenarios  # noqa: E402

WRITERS = os.path.join(HERE, "python_writers.py")
REPRO_FROM_GRAPH = os.path.join(ROOT, "scripts", "repro_from_graph.py")


def payloads(marker):
    """Strings that, pasted into Python unquoted or quoted carelessly, write the marker file."""
    write = f"open({marker!r}, 'w')"
    return {
        "getattr breakout": f'X") if 0 else x if {write} is None else getattr(self, "X',
        "kwargs statement": f"alpha = 1)\n{write}\n_z = dict(a",
        "register_buffer quote": f"c', torch.zeros(1)); {write}; self.register_buffer('d",
        "triple single quotes": f"'''\n{write}\n'''",
        "triple double quotes": f'"""\n{write}\n"""',
        "__import__": f"__import__('os').system('touch {marker}')",
    }


HOSTILE = {"single quote": "a'b", "double quote": 'a"b', "backslash": "a\\b", "newline": "a\nb", "NUL": "a\x00b",
           "U+2028": "a\u2028b", "U+2029": "a\u2029b", "keyword": "class", "digit first": "1abc",
           "non-ASCII letter": "\u00e4", "empty": "", "very long": "a" * 5000, "dunder": "__class__"}


def write_doc(base_dir, out, change):
    """A copy of the base graph directory with change(doc) applied to its document."""
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(base_dir, out)
    with open(os.path.join(out, "graph.json")) as f:
        doc = json.load(f)
    change(doc)
    with open(os.path.join(out, "graph.json"), "w") as f:
        json.dump(doc, f)
    return out


def renamed_node(name):
    def change(doc):
        for node in doc["nodes"]:
            if node["name"] == "add":
                node["name"] = name
            for i, arg in enumerate(node.get("args", [])):
                if arg == {"node": "add"}:
                    node["args"][i] = {"node": name}
            if node["op"] == "output":
                node["args"] = [{"tuple": [{"node": name}, {"node": "div"}]}]
    return change


def renamed_constant(name):
    def change(doc):
        doc["constants"] = {name: doc["constants"]["c"]}
        doc["nodes"][1]["target"] = name
    return change


def renamed_kwarg(name):
    def change(doc):
        doc["nodes"][2]["kwargs"] = {name: 2}
    return change


def string_value(text):
    def change(doc):
        doc["nodes"][3]["kwargs"] = {"rounding_mode": text}
    return change


# Where a string of a document reaches generated Python: (field, how to put a string there, the field's
# word in a refusal).
FIELDS = {"node name": (renamed_node, "name"), "constant name": (renamed_constant, "constants"),
          "dotted constant name": (lambda s: renamed_constant("mod." + s), "constants"),
          "kwargs key": (renamed_kwarg, "kwargs"), "string argument": (string_value, None)}


def writers(env, *arguments):
    done = subprocess.run([env.python, WRITERS, *arguments], capture_output=True, text=True, timeout=1200)
    expect(done.returncode == 0, f"python_writers.py {arguments[0]} failed:\n{done.stdout}{done.stderr[-3000:]}")


def base_graph(env):
    base = os.path.join(env.work, "base")
    shutil.rmtree(base, ignore_errors=True)
    writers(env, "base", base)
    done = subprocess.run([env.minify, "validate", "--check-store", base], capture_output=True, text=True)
    expect(done.returncode == 0, f"the base graph is not valid: {done.stderr}")
    return base


def marker_absent(marker, what):
    expect(not os.path.exists(marker), f"{what}: the payload ran (it wrote {marker})")


def run_file(env, path, marker, what):
    """Runs a written repro in the PyTorch 2.x python, in its own directory; its payload must not run."""
    done = subprocess.run([env.python, path], capture_output=True, text=True, timeout=600, cwd=os.path.dirname(path))
    marker_absent(marker, what)
    return done


def hostile_names(env):
    from daemon_harness import Daemon, Tools
    from test_worker_pipe import Worker, evaluate
    base, marker = base_graph(env), os.path.join(env.work, "payload-ran")
    if os.path.exists(marker):
        os.remove(marker)
    found = payloads(marker)
    docs = {"constant closing getattr": (renamed_constant(found["getattr breakout"]), "constants"),
            "kwargs key adding statements": (renamed_kwarg(found["kwargs statement"]), "kwargs"),
            "constant leaving register_buffer": (renamed_constant(found["register_buffer quote"]), "constants"),
            "NUL in a kwargs key": (renamed_kwarg("alpha\x00"), "kwargs"),
            "U+2028 in a kwargs key": (renamed_kwarg("al\u2028pha"), "kwargs")}
    daemon = Daemon(Tools(env.minify, env.minifyd, None), os.path.join(env.work, "state")).start()
    worker = Worker(env.python, "in process")
    try:
        for what, (change, field) in docs.items():
            graph_dir = write_doc(base, os.path.join(env.work, what.replace(" ", "_")), change)
            # The rule names the field: a constant's name where the document lists constants (and again at
            # its get_attr node), a kwargs key at its node.
            words = {"constants": ["constants: the name"], "kwargs": ["node 'add'", "kwargs: the key"]}[field]

            def named(text):
                return all(word in text for word in words)
            done = subprocess.run([env.minify, "validate", graph_dir], capture_output=True, text=True, timeout=60)
            expect(done.returncode == 1 and named(done.stderr), f"validate, {what}: exit {done.returncode}: "
                                                                f"{done.stdout}{done.stderr}")
            for command, extra in (("run", ["--out", os.path.join(env.work, "run-out"), "--backend", "inductor"]),
                                   ("run", ["--out", os.path.join(env.work, "run-out"), "--backend", "inductor",
                                            "--shrink-inputs"]),
                                   ("query", ["--backend", "inductor", "--accuracy"])):
                code, result, stderr = env.minify_cmd(command, graph_dir, *extra, timeout=300)
                expect(code == EXIT_USAGE and named(result.get("error", "")),
                       f"{command} {extra}, {what}: exit {code}, {result}")
                expect(not os.path.exists(os.path.join(env.work, "run-out")), f"{command}, {what}: left its --out")
            code, reply, stderr = daemon.client("submit", graph_dir, "--backend", "inductor")
            expect(code == EXIT_USAGE and named(stderr + json.dumps(reply)),
                   f"submit, {what}: exit {code}, {reply}, {stderr}")
            with open(os.path.join(graph_dir, "graph.json")) as f:
                reply = worker.ask(evaluate(1, json.load(f), os.path.join(graph_dir, "store"), backend="inductor"))
            expect(reply["type"] == "error" and named(reply["message"]),
                   f"the Python worker, {what}: {reply}")
            written = subprocess.run([env.python, REPRO_FROM_GRAPH, graph_dir], capture_output=True, text=True,
                                     timeout=300)
            expect(written.returncode == 0, f"repro_from_graph, {what}: {written.stderr}")
            done = run_file(env, os.path.join(graph_dir, "repro.py"), marker, f"repro_from_graph's repro, {what}")
            expect(done.returncode == 2 and "cannot load the graph" in done.stderr and named(done.stderr),
                   f"repro_from_graph's repro, {what}: exit {done.returncode}: {done.stderr[-2000:]}")
            marker_absent(marker, what)
            print(f"{what}: refused by validate, run, run --shrink-inputs, query --accuracy, a minifyd job, "
                  "the Python worker and repro_from_graph's repro")
        worker.shut_down()
    finally:
        if worker.process.poll() is None:
            worker.process.kill()
        daemon.stop()
    origin_config(env, base)


def origin_config(env, base):
    """A graph directory whose origin.json turns Inductor's trace on into a directory it names: the query
    is refused naming the option, and nothing is written there."""
    graph_dir = write_doc(base, os.path.join(env.work, "origin_trace"), lambda doc: None)
    victim = os.path.join(env.work, "victim-dir")
    shutil.rmtree(victim, ignore_errors=True)
    os.makedirs(victim)
    with open(os.path.join(graph_dir, "origin.json"), "w") as f:
        json.dump({"backend_options": {"trace.enabled": "true", "trace.debug_dir": victim}}, f)
    code, result, stderr = env.minify_cmd("query", graph_dir, "--backend", "inductor", timeout=300)
    expect(code == EXIT_USAGE and "backend option trace." in result.get("error", "") and "is refused" in result["error"],
           f"query with origin.json's trace options: exit {code}, {result}")
    expect(os.listdir(victim) == [], f"the query wrote {os.listdir(victim)} into the directory origin.json named")
    print("origin.json's trace.enabled and trace.debug_dir: refused by name, nothing written there")


def writers_fuzz(env):
    base, marker = base_graph(env), os.path.join(env.work, "payload-ran")
    if os.path.exists(marker):
        os.remove(marker)
    strings = {**HOSTILE, **payloads(marker), "plain identifier": "plain_name"}
    cases = {}
    for field, (change, _) in FIELDS.items():
        for label, text in strings.items():
            path = os.path.join(env.work, "fuzz", f"{field}-{label}".replace(" ", "_"))
            cases[path] = (field, label, write_doc(base, path, change(text)))
    report = os.path.join(env.work, "fuzz-report.json")
    writers(env, "check", report, *cases)
    with open(report) as f:
        verdicts = json.load(f)
    accepted = 0
    for path, (field, label, graph_dir) in cases.items():
        validated = subprocess.run([env.minify, "validate", graph_dir], capture_output=True, text=True, timeout=60)
        verdict, word = verdicts[graph_dir], FIELDS[field][1]
        expect(validated.returncode in (0, 1), f"{field}, {label}: validate exits {validated.returncode}")
        refused_by_cpp, refused_by_python = validated.returncode == 1, "refused" in verdict
        expect(refused_by_cpp == refused_by_python,
               f"{field}, {label}: validate and the Python loader disagree: {validated.stderr} / {verdict}")
        if refused_by_cpp:
            expect(word in validated.stderr and word in verdict["refused"],
                   f"{field}, {label}: the refusal does not name the field: {validated.stderr} / {verdict}")
            continue
        accepted += 1
        not_compiled = {writer: how for writer, how in verdict["written"].items() if how != "compiled"}
        expect(not not_compiled, f"{field}, {label}: {not_compiled}")
        if marker in strings[label]:
            subprocess.run([env.python, REPRO_FROM_GRAPH, graph_dir], capture_output=True, timeout=300, check=True)
            for written in ("repro.py", "after_aot_aot_eager.py"):
                run_file(env, os.path.join(graph_dir, written), marker, f"{field}, {label}: {written}")
    expect(accepted >= len(strings), f"only {accepted} documents were accepted: the fuzz tested refusals alone")
    marker_absent(marker, "the fuzz")
    print(f"{len(cases)} documents: validate and the Python loader agree on each, {accepted} accepted, every "
          "writer's text compiles, the payloads never ran")
    hostile_options(env, strings, marker)


def hostile_options(env, strings, marker):
    """Hostile strings as backend option keys and values: refused, or written into after_aot's repro as data."""
    # What the rule lets a job set, so that the writer is seen to write options at all.
    allowed = [["max_autotune", "true"], ["cpp.inject_relu_bug_TESTING_ONLY", "compile_error"], ["cpp.simdlen", "8"]]
    pairs = allowed + [[key, "true"] for key in strings.values()]
    pairs += [[key, text] for key in ("max_autotune", "cpp.inject_relu_bug_TESTING_ONLY", "trace.debug_dir",
                                      "cpp.cxx", "torch._dynamo.config.debug_dir_root") for text in strings.values()]
    pairs_file = os.path.join(env.work, "option-pairs.json")
    with open(pairs_file, "w") as f:
        json.dump(pairs, f)
    report = os.path.join(env.work, "options-report.json")
    writers(env, "options", report, pairs_file)
    with open(report) as f:
        results = json.load(f)
    written = [(pair, result) for pair, result in zip(pairs, results) if "written" in result]
    expect([pair for pair, _ in written] == allowed, f"not only the allowed options were written: {written}")
    for (key, text), result in written:
        expect(result["written"] == "compiled", f"option {key!r}={text!r}: {result['written']}")
    for (key, text), result in zip(pairs, results):
        if "written" in result and marker in text:
            run_file(env, result["path"], marker, f"option {key!r}={text!r}")
    print(f"{len(pairs)} hostile backend options: {len(pairs) - len(written)} refused, {len(written)} written as "
          "data into repros that compile")


SCENARIOS = {"hostile_names": hostile_names, "writers_fuzz": writers_fuzz}

if __name__ == "__main__":
    run_scenarios(SCENARIOS, label="security")
