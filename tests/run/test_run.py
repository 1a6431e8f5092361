# End-to-end tests of `minify run` (label run): real worker processes, graphs exported from Debian's
# torch with scripts/export_fx.py, the faulty plugin. One ctest per acceptance case of cases.py, each
# run with --workers 1 and --workers 4 (the graphs must be byte-identical), plus resume after SIGKILL,
# budgets, bad input, --shrink-inputs, --timeline and a run of the last release resumed.
import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cases import CASES, export_case  # noqa: E402

EXIT_OK, EXIT_USAGE, EXIT_DOES_NOT_FAIL = 0, 2, 4


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


def minify_run(minify, *args, timeout=600):
    done = subprocess.run([minify, "run", *args, "--json"], capture_output=True, text=True, timeout=timeout)
    try:
        summary = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"exit {done.returncode}, stdout is not JSON: {done.stdout!r}\n{done.stderr[-3000:]}")
    return done.returncode, summary, done.stderr


def read(path):
    with open(path, "rb") as f:
        return f.read()


def check_outputs(minify, case, out, args):
    """The output directory of a minimized case: a valid graph that still fails, and the other files."""
    done = subprocess.run([minify, "validate", "--check-store", out], capture_output=True, text=True)
    expect(done.returncode == 0, f"minify validate --check-store {out}: {done.stdout}{done.stderr}")
    done = subprocess.run([minify, "query", out, *args, "--json"], capture_output=True, text=True, timeout=300)
    expect(done.returncode == 1, f"minify query on the result exits {done.returncode}, not 1 (fails): {done.stdout}")
    verdict = json.loads(done.stdout)["verdict"]
    expect(verdict["kind"] == case.expect.failure.kind, f"the result fails with {verdict}, not {case.expect.failure}")
    for name in ("repro.py", "report.md", "graph.dot"):
        expect(os.path.getsize(os.path.join(out, name)) > 0, f"{name} is missing or empty")
    with open(os.path.join(out, "report.md")) as f:
        report = f.read()
    expect("## Accepted reductions" in report and "crashes contained" in report, f"report.md lacks its sections:\n{report}")
    with open(os.path.join(out, "graph.dot")) as f:
        expect(f.read().startswith("digraph"), "graph.dot is not a digraph")
    repro = subprocess.run([sys.executable, os.path.join(out, "repro.py")], capture_output=True, text=True,
                           timeout=300, env={**os.environ, "MINIFY": minify})
    expect(repro.returncode == 1, f"repro.py exits {repro.returncode}, not 1 (reproduced):\n{repro.stdout}{repro.stderr}")


def run_case(minify, faulty, work, name):
    case = CASES[name]
    graph = os.path.join(work, "graph")
    shutil.rmtree(work, ignore_errors=True)
    export_case(case, graph)
    args = case.run_args(faulty)
    results = {}
    for workers in (1, 4):
        out = os.path.join(work, f"out-{workers}")
        code, summary, stderr = minify_run(minify, graph, "--out", out, *args, "--workers", str(workers))
        print(f"--workers {workers}: exit {code}: {json.dumps(summary)}")
        expect(summary["status"] == case.expect.status,
               f"status {summary['status']}, expected {case.expect.status}\n{stderr[-3000:]}")
        if case.expect.status == "does_not_fail":
            expect(code == EXIT_DOES_NOT_FAIL, f"exit {code}, expected {EXIT_DOES_NOT_FAIL} (does not fail)")
            continue
        expect(code == EXIT_OK, f"exit {code}\n{stderr[-3000:]}")
        expect(summary["stop"] == "finished", f"stopped: {summary['stop']}")
        failure = case.expect.failure
        signature = summary["signature"]
        expect(signature["kind"] == failure.kind and failure.detail in (signature["signal"], signature["exception_type"], ""),
               f"the original's failure is {signature}, expected {failure}")
        with open(os.path.join(out, "graph.json")) as f:
            problems = case.expect.problems(json.load(f))
        expect(not problems, f"--workers {workers}: " + "; ".join(problems))
        results[workers] = read(os.path.join(out, "graph.json"))
    if results:
        expect(results[1] == results[4], "--workers 1 and --workers 4 wrote different graph.json files")
        check_outputs(minify, case, os.path.join(work, "out-4"), args)


def wait_for_checkpoint_step(out, process, deadline):
    """Waits until the run has checkpointed an accepted reduction."""
    path = os.path.join(out, "checkpoint.json")
    while time.monotonic() < deadline:
        expect(process.poll() is None, f"minify run ended (exit {process.returncode}) before it could be killed")
        try:
            with open(path) as f:
                if json.load(f)["steps"]:
                    return
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    raise AssertionError("no reduction was checkpointed in time")


def run_resume(minify, faulty, work):
    case = CASES["chain1000_segfault"]
    graph = os.path.join(work, "graph")
    shutil.rmtree(work, ignore_errors=True)
    export_case(case, graph)
    # fx_minifier's schedule from the start: its many steps are what a kill lands in the middle of (the
    # prefix bisection's one step takes the chain to 3 nodes).
    args = [*case.run_args(faulty), "--no-prefix-bisection"]
    code, fresh, _ = minify_run(minify, graph, "--out", os.path.join(work, "fresh"), *args, "--workers", "2")
    expect(code == EXIT_OK, f"the uninterrupted run exits {code}")

    out = os.path.join(work, "killed")
    process = subprocess.Popen([minify, "run", graph, "--out", out, *args, "--workers", "2", "--json"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for_checkpoint_step(out, process, time.monotonic() + 300)
        # One writer per --out: a second run or a resume beside the live one is refused at once, naming it.
        for second in (["run", graph, "--out", out, *args], ["run", "--resume", out]):
            started = time.monotonic()
            done = subprocess.run([minify, *second, "--json"], capture_output=True, text=True, timeout=60)
            refused = json.loads(done.stdout).get("error", "")
            expect(done.returncode == EXIT_USAGE and f"pid {process.pid}" in refused and time.monotonic() - started < 10,
                   f"{second[:2]} beside a live run on {out}: exit {done.returncode}, {refused!r}")
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    with open(os.path.join(out, "checkpoint.json")) as f:
        killed_at = json.load(f)
    print(f"killed after {len(killed_at['steps'])} accepted reductions, {killed_at['totals']['queries']} queries; "
          "the run and the resume beside it were refused")

    code, resumed, stderr = minify_run(minify, "--resume", out, "--workers", "2")
    print(f"uninterrupted: {json.dumps(fresh)}\nresumed: {json.dumps(resumed)}")
    expect(code == EXIT_OK, f"--resume exits {code}\n{stderr[-3000:]}")
    expect(read(os.path.join(out, "graph.json")) == read(os.path.join(work, "fresh", "graph.json")),
           "the resumed run's graph.json differs from the uninterrupted run's")
    expect(resumed["sessions"] == 2, f"{resumed['sessions']} sessions, expected 2")
    expect(resumed["session_queries"] < fresh["queries"],
           f"the resumed session made {resumed['session_queries']} queries, starting over takes {fresh['queries']}")
    code, again, _ = minify_run(minify, "--resume", out)
    expect(code == EXIT_USAGE and "nothing to resume" in again["error"], f"resuming a finished run: {code} {again}")


def run_budget(minify, faulty, work):
    case = CASES["chain1000_abort"]
    graph = os.path.join(work, "graph")
    shutil.rmtree(work, ignore_errors=True)
    export_case(case, graph)
    # Spent within fx_minifier's schedule, past its first reductions; then within the prefix bisection,
    # whose probes are only bounds: the original is the best graph so far.
    for extra, reduced in ((["--no-prefix-bisection"], True), ([], False)):
        out = os.path.join(work, "out" + "".join(extra))
        code, summary, stderr = minify_run(minify, graph, "--out", out, *case.run_args(faulty), "--max-queries", "6", *extra)
        print(json.dumps(summary))
        expect(code == EXIT_OK, f"exit {code}\n{stderr[-3000:]}")
        expect(summary["stop"] == "query budget spent", f"stopped: {summary['stop']}")
        expect(summary["queries"] <= 6, f"{summary['queries']} queries past a budget of 6")
        expect((summary["nodes"] < 1000) == reduced, f"{summary['nodes']} nodes within the budget {extra}")
        done = subprocess.run([minify, "validate", "--check-store", out], capture_output=True, text=True)
        expect(done.returncode == 0, f"the budget-stopped result is not a valid graph: {done.stdout}{done.stderr}")


def run_bad_input(minify, faulty, work):
    shutil.rmtree(work, ignore_errors=True)
    graph = os.path.join(work, "graph")
    export_case(CASES["has_mul"], graph)
    plugin = ["--backend", f"plugin:{faulty}", "--backend-opt", "op=aten::mul.Tensor", "--backend-opt", "fault=compile-error"]
    refusals = [
        ([os.path.join(work, "missing"), "--out", os.path.join(work, "o1"), *plugin], "missing/graph.json"),
        ([graph, "--out", os.path.join(work, "o2"), "--backend", "eager", "--strategies", "bisect"],
         "unknown strategy 'bisect'"),
        ([graph, "--out", os.path.join(work, "o3"), *plugin, "--max-granularity", "6"], "not a power of two"),
        ([graph, "--out", os.path.join(work, "o4"), *plugin, "--check-str", "(unclosed"], "not a valid regular expression"),
        ([graph, "--out", os.path.join(work, "o5"), "--backend", "eager", "--backend-opt", "novalue"], "is not KEY=VALUE"),
        ([graph, *plugin], "--out and --backend are required"),
        (["--resume", os.path.join(work, "nowhere")], "checkpoint.json"),
        (["--resume", os.path.join(work, "o1"), "--backend", "eager"], "--backend cannot be given with it"),
    ]
    for args, message in refusals:
        code, summary, _ = minify_run(minify, *args)
        expect(code == EXIT_USAGE, f"{args}: exit {code}, expected {EXIT_USAGE}: {summary}")
        expect(message in summary.get("error", ""), f"{args}: error {summary.get('error')!r} does not say {message!r}")

    out = os.path.join(work, "done")
    code, _, _ = minify_run(minify, graph, "--out", out, *plugin)
    expect(code == EXIT_OK, f"the valid run exits {code}")
    code, summary, _ = minify_run(minify, graph, "--out", out, *plugin)
    expect(code == EXIT_USAGE and "already holds a run" in summary["error"], f"reusing --out: {code} {summary}")

    # A graph that does not run in eager (an index past the end, put into its store after the export),
    # under eager, fails as the user's eager run does: minimized like any other failure, its values
    # propagated up to the failing node (propagation/propagation.h), which ends alone on its inputs.
    import torch
    from minifyd import export as export_fx
    no_eager = os.path.join(work, "no-eager")
    export_fx.export(lambda x, idx: (torch.index_select(x, 0, idx) * 2,), [torch.randn(3, 2), torch.tensor([1])],
                     no_eager)
    past_the_end = (7).to_bytes(8, "little", signed=True)
    digest = hashlib.sha256(past_the_end).hexdigest()
    os.makedirs(os.path.join(no_eager, "store", "blobs", digest[:2]), exist_ok=True)
    with open(os.path.join(no_eager, "store", "blobs", digest[:2], digest), "wb") as f:
        f.write(past_the_end)
    with open(os.path.join(no_eager, "graph.json")) as f:
        document = json.load(f)
    document["storages"][document["inputs"][1]["storage"]]["hash"] = digest
    with open(os.path.join(no_eager, "graph.json"), "w") as f:
        json.dump(document, f)
    out = os.path.join(work, "o-no-eager")
    code, summary, stderr = minify_run(minify, no_eager, "--out", out, "--backend", "eager", timeout=120)
    kept = [node.get("target") for node in json.loads(read(os.path.join(out, "graph.json")))["nodes"]
            if node["op"] == "call_function"] if code == EXIT_OK else None
    expect(code == EXIT_OK and summary["signature"]["exception_type"] == "c10::IndexError"
           and kept == ["aten::index_select"] and "does not run eagerly at node index_select" in stderr,
           f"a graph that does not run in eager: exit {code}, {summary}, kept {kept}\n{stderr[-2000:]}")

    listed = subprocess.run([minify, "run", "--list-strategies"], capture_output=True, text=True)
    names = [line.split("\t")[0] for line in listed.stdout.splitlines()]
    expect(names == ["remove-outputs", "eliminate-dead-code", "remove-unused-inputs", "consolidate-inputs",
                     "truncate-suffix", "delta-debugging"], f"--list-strategies: {names}")


def run_shrink_inputs(minify, faulty, work):
    """--shrink-inputs on the C++ workers: the plugin's wrong relu needs no values (its input becomes
    zeros, nothing stays stored), while eager's NaN of sqrt needs negative inputs (zeros and ones lose
    it; values drawn within the stored ones' range keep it). Either result validates, still fails and
    its repro.py reproduces, making its inputs."""
    import torch
    from minifyd import export as export_fx
    shutil.rmtree(work, ignore_errors=True)
    torch.manual_seed(0)
    sqrt_graph = os.path.join(work, "sqrt")
    export_fx.export(lambda x: (torch.sqrt(x) * 2,), [torch.randn(64)], sqrt_graph)
    accuracy_graph = os.path.join(work, "accuracy")
    export_case(CASES["accuracy"], accuracy_graph)
    runs = {"accuracy": (accuracy_graph, CASES["accuracy"], CASES["accuracy"].run_args(faulty), "zeros (float32)"),
            "sqrt": (sqrt_graph, None, ["--backend", "eager", "--nan"], "random in [")}
    for name, (graph, case, args, fill) in runs.items():
        out = os.path.join(work, f"{name}-out")
        code, summary, stderr = minify_run(minify, graph, "--out", out, *args, "--shrink-inputs")
        expect(code == EXIT_OK, f"{name}: exit {code}: {summary}\n{stderr[-3000:]}")
        with open(os.path.join(out, "checkpoint.json")) as f:
            shrink = json.load(f)["input_shrink"]
        fates = [storage.get("replaced_by", "stored") for storage in shrink["storages"]]
        print(f"{name}: {shrink['before']} -> {shrink['after']}, {fates}, shapes {shrink['shapes']}")
        expect(shrink["after"]["stored_bytes"] == 0 and fates and all(f.startswith(fill) for f in fates),
               f"{name}: the inputs were shrunk to {fates}, not {fill}: {shrink}")
        if case is not None:
            check_outputs(minify, case, out, args)
        repro = subprocess.run([sys.executable, os.path.join(out, "repro.py")], capture_output=True, text=True,
                               timeout=300, env={**os.environ, "MINIFY": minify})
        expect(repro.returncode == 1, f"{name}: repro.py exits {repro.returncode}:\n{repro.stdout}{repro.stderr}")


def run_timeline(minify, faulty, work):
    """--timeline: every worker start, request and phase of a run, as bench/query_breakdown.py reads them;
    its evaluate requests are the run's queries, each answer with the worker's own times."""
    sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
    import query_breakdown
    case = CASES["chain1000_segfault"]
    shutil.rmtree(work, ignore_errors=True)
    graph, out, timeline = os.path.join(work, "graph"), os.path.join(work, "out"), os.path.join(work, "timeline.jsonl")
    export_case(case, graph)
    code, summary, stderr = minify_run(minify, graph, "--out", out, *case.run_args(faulty), "--workers", "2",
                                       "--timeline", timeline)
    expect(code == EXIT_OK, f"exit {code}: {summary}\n{stderr[-3000:]}")
    events = query_breakdown.read_timeline(timeline)
    kinds = {e["event"] for e in events}
    expect({"worker_launched", "worker_ready", "request_sent", "request_answered", "phase"} <= kinds,
           f"events of the timeline: {sorted(kinds)}")
    phases = query_breakdown.phases(events)
    expect(all(phases.get(name, (None, None))[1] is not None for name in ("search", "outputs")),
           f"phases of the timeline: {phases}")
    evaluated = [e for e in events if e["event"] == "request_answered" and "compile_ms" in e]
    expect(all(e["outcome"] in ("pass", "fail", "fault") and e["load_ms"] >= 0 for e in evaluated),
           f"answers without the worker's times: {evaluated[:3]}")
    times = [e["t"] for e in events]
    expect(times == sorted(times), "the timeline's times go backwards")
    row = query_breakdown.breakdown(timeline)
    print(query_breakdown.render(row))
    # The run's queries leave out cache hits (never sent) and the wasted queries of stopped lineages.
    expect(summary["queries"] <= row["queries"] <= summary["queries"] + summary["speculative_queries"],
           f"the breakdown counts {row['queries']} queries, the run {summary}")
    expect(row["failing"] >= 1 and abs(sum(row["share"].values()) - 1) < 0.35,
           f"the slots' time does not add up: {row}")
    code, refused, _ = minify_run(minify, graph, "--out", out + "-refused", *case.run_args(faulty), "--timeline",
                                  os.path.join(work, "no-such-dir", "timeline.jsonl"))
    expect(code == EXIT_USAGE and "timeline" in refused["error"], f"an unwritable timeline: {code} {refused}")


SAVED_5D2CC0D = os.path.join(HERE, "..", "daemon", "saved", "5d2cc0d")


def run_saved_5d2cc0d(minify, faulty, work):
    """A `minify run` of 5d2cc0d, the last release, killed after its second accepted reduction (its
    OUT_DIR as it left it, tests/daemon/service/saved_5d2cc0d_test.cpp says how it was made), resumed
    by this one: it ends where 5d2cc0d's uninterrupted run did, to the byte."""
    shutil.rmtree(work, ignore_errors=True)
    out = os.path.join(work, "killed_run")
    shutil.copytree(os.path.join(SAVED_5D2CC0D, "killed_run"), out)
    os.makedirs(os.path.join(out, "store", "tmp"))  # git keeps no empty directory
    code, resumed, stderr = minify_run(minify, "--resume", out)
    print(f"resumed: {json.dumps(resumed)}")
    expect(code == EXIT_OK, f"--resume exits {code}\n{stderr[-3000:]}")
    expect(resumed["status"] == "minimized" and resumed["stop"] == "finished", f"the resume ended {resumed}")
    expect(resumed["sessions"] == 2, f"{resumed['sessions']} sessions, expected 2")
    expect(read(os.path.join(out, "graph.json")) == read(os.path.join(SAVED_5D2CC0D, "uninterrupted_graph.json")),
           "the resumed run's graph.json differs from 5d2cc0d's uninterrupted run's")
    done = subprocess.run([minify, "validate", "--check-store", out], capture_output=True, text=True)
    expect(done.returncode == 0, f"minify validate --check-store {out}: {done.stdout}{done.stderr}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", required=True,
                        help="a case of cases.py, or resume, budget, bad_input, shrink_inputs, timeline, saved_5d2cc0d")
    parser.add_argument("--minify", required=True)
    parser.add_argument("--faulty", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    special = {"resume": run_resume, "budget": run_budget, "bad_input": run_bad_input,
               "shrink_inputs": run_shrink_inputs, "timeline": run_timeline,
               "saved_5d2cc0d": run_saved_5d2cc0d}
    if args.case in special:
        special[args.case](args.minify, args.faulty, args.work)
    else:
        run_case(args.minify, args.faulty, args.work, args.case)
    print(f"run.{args.case}: ok")


if __name__ == "__main__":
    main()
