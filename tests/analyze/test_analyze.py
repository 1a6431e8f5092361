# End-to-end tests of `minify analyze` (label analyze): real workers, graphs exported from real
# PyTorch (an elementwise chain, torchvision's resnet18), the faulty plugin's wrong-number faults.
# Each case checks analysis.json's findings, analysis.md's words and that analysis.svg was drawn.
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "worker", "python"))
from minifyd import export as export_fx  # noqa: E402

# roundtrip/cases.py under a name of its own: minifyd's harness imports run/cases.py as `cases`.
_spec = importlib.util.spec_from_file_location("roundtrip_cases", os.path.join(HERE, "..", "roundtrip", "cases.py"))
roundtrip_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(roundtrip_cases)
resnet18 = roundtrip_cases.resnet18

CHAIN_LENGTH = 200
RELU_AT = 80      # the relu's place among the chain's operators
SIGMOID_AT = 150  # the one sigmoid's, after the relu


def chain(x):
    """200 elementwise operators: sin, cos, mul and add in turn, one relu and one sigmoid."""
    for i in range(CHAIN_LENGTH):
        if i == RELU_AT:
            x = torch.relu(x)
        elif i == SIGMOID_AT:
            x = torch.sigmoid(x)
        else:
            x = (torch.sin, torch.cos, lambda v: v * 0.9, lambda v: v + 0.1)[i % 4](x)
    return (x,)


def lasting_chain(x):
    """200 elementwise operators that carry an error at the relu to the output (chain()'s sin and cos
    shrink it below the accuracy check's tolerance): add, mul, abs and sub in turn, one relu."""
    for i in range(CHAIN_LENGTH):
        if i == RELU_AT:
            x = torch.relu(x)
        else:
            x = (lambda v: v + 0.1, lambda v: v * 1.01, torch.abs, lambda v: v - 0.1)[i % 4](x)
    return (x,)


def fused_pair(x):
    """mul feeding add (the fused pair), beside an add fed by no mul."""
    a = torch.sin(x) * 1.5
    b = a + 0.25
    c = torch.cos(x) + 0.5
    return (torch.tanh(b) + c,)


def with_independent_branch(x, w):
    return (torch.relu(x @ w), torch.sin(x))


def export(fn, inputs, out_dir):
    shutil.rmtree(out_dir, ignore_errors=True)
    torch.manual_seed(0)
    export_fx.export(fn, inputs, out_dir)
    return out_dir


def export_resnet18(out_dir):
    shutil.rmtree(out_dir, ignore_errors=True)
    model, inputs = resnet18()
    export_fx.export(model, inputs, out_dir)
    return out_dir


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


def analyze(minify, graph, out, *args):
    done = subprocess.run([minify, "analyze", graph, "--out", out, "--json", *args], capture_output=True, text=True,
                          timeout=900)
    try:
        summary = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"exit {done.returncode}, not JSON: {done.stdout!r} {done.stderr}")
    expect(done.returncode == 0, f"exit {done.returncode}: {summary} {done.stderr}")
    with open(os.path.join(out, "analysis.json")) as f:
        analysis = json.load(f)
    with open(os.path.join(out, "analysis.md")) as f:
        markdown = f.read()
    # Where no python3 has matplotlib (the GPU machine's), analysis.md says so instead of showing the
    # plot; svg_in_browser requires it.
    svg = os.path.join(out, "analysis.svg")
    if os.path.exists(svg):
        expect(os.path.getsize(svg) > 1000, f"an empty plot in {out}: {done.stderr}")
    else:
        expect("has no matplotlib" in markdown, f"no plot in {out}, and analysis.md does not say why: {done.stderr}")
    expect(summary["first_divergence"] == analysis["first_divergence"], f"{summary} vs analysis.json")
    return analysis, markdown


def faulty_backend(faulty, *options):
    args = ["--backend", f"plugin:{faulty}"]
    for option in options:
        args += ["--backend-opt", option]
    return args


def nodes_of(graph, target):
    with open(os.path.join(graph, "graph.json")) as f:
        return [n["name"] for n in json.load(f)["nodes"] if n.get("target") == target]


def findings(analysis):
    return analysis["findings"]


def expect_first(analysis, node, what):
    found = findings(analysis)
    expect(analysis["first_divergence"] == node, f"{what}: first divergence {analysis['first_divergence']}, expected {node}")
    for mode in analysis["modes"]:
        expect(found.get(f"{mode}_divergence") == node,
               f"{what}: {mode} mode's first divergence is {found.get(f'{mode}_divergence')}")
    expect(found.get("fusion") is None, f"{what}: the modes should agree: {found}")


def test_chain_wrong(minify, faulty, work):
    graph = export(chain, [torch.randn(64)], os.path.join(work, "chain"))
    relu = nodes_of(graph, "aten::relu")[0]
    analysis, markdown = analyze(minify, graph, os.path.join(work, "one"), *faulty_backend(faulty, "op=aten::relu", "fault=wrong"))
    expect_first(analysis, relu, "wrong at relu")
    expect(len(analysis["nodes"]) == CHAIN_LENGTH, f"{len(analysis['nodes'])} nodes analyzed")
    expect(f"**First divergence: node `{relu}`**, in both modes." in markdown, markdown[:600])
    expect(not findings(analysis)["compiled_nondeterministic"], f"{findings(analysis)}")
    # Nodes before the relu are right in place; nodes after it are wrong in place only (their inputs
    # are wrong there), right in isolation.
    by_name = {n["node"]: n for n in analysis["nodes"]}
    after = analysis["nodes"][RELU_AT + 5]
    expect(after["in_place"]["measurement"]["diverges"] and not after["isolated"]["measurement"]["diverges"], f"{after}")
    expect(not by_name[analysis["nodes"][RELU_AT - 1]["node"]]["in_place"]["measurement"]["diverges"], "before the relu")
    # Two wrong operators: the earlier in the graph, whichever the option names first.
    analysis, _ = analyze(minify, graph, os.path.join(work, "two"),
                          *faulty_backend(faulty, "op=aten::sigmoid,aten::relu", "fault=wrong"))
    expect_first(analysis, relu, "wrong at sigmoid and relu")
    sigmoid = nodes_of(graph, "aten::sigmoid")[0]
    expect(by_name[sigmoid]["isolated"]["measurement"]["diverges"] is False, "the first run had no sigmoid fault")
    expect({n["node"]: n for n in analysis["nodes"]}[sigmoid]["isolated"]["measurement"]["diverges"], "sigmoid alone")
    # One mode alone: the other is neither run nor spoken of.
    analysis, markdown = analyze(minify, graph, os.path.join(work, "isolated"), "--mode", "isolated",
                                 *faulty_backend(faulty, "op=aten::relu", "fault=wrong"))
    expect(analysis["modes"] == ["isolated"] and all("in_place" not in n for n in analysis["nodes"]), f"{analysis['modes']}")
    expect(f"**First divergence: node `{relu}`** (isolated mode only)." in markdown and "In place" not in markdown,
           markdown[:600])
    # The eager reference backend diverges nowhere and is deterministic.
    analysis, markdown = analyze(minify, graph, os.path.join(work, "eager"), "--backend", "eager")
    expect(analysis["first_divergence"] is None and "**No divergence**" in markdown, f"{findings(analysis)}")


def test_resnet18_wrong(minify, faulty, work):
    graph = export_resnet18(os.path.join(work, "resnet18"))
    relus = nodes_of(graph, "aten::relu_")
    expect(len(relus) == 17, f"resnet18's relu_ nodes: {relus}")
    analysis, markdown = analyze(minify, graph, os.path.join(work, "out"),
                                 *faulty_backend(faulty, "op=aten::relu_", "fault=wrong"))
    expect_first(analysis, relus[0], "resnet18, wrong at relu_")
    # The convolution and batch norm before it are right in place: relu_ writes into batch norm's
    # output, which the analysis copies before it is overwritten.
    first = next(i for i, n in enumerate(analysis["nodes"]) if n["node"] == relus[0])
    for node in analysis["nodes"][:first]:
        expect(not node["in_place"]["measurement"]["diverges"], f"before the first relu_: {node}")
    # Alone, only the relu_ nodes are wrong: what reads a relu_'s result loads its stored value.
    wrong_alone = {n["op"] for n in analysis["nodes"] if n["isolated"]["measurement"]["diverges"]}
    expect(wrong_alone == {"aten::relu_"}, f"isolated divergences at {wrong_alone}")
    expect("| " in markdown and "aten::relu_" in markdown, markdown)


def test_fusion(minify, faulty, work):
    graph = export(fused_pair, [torch.randn(32)], os.path.join(work, "pair"))
    adds = nodes_of(graph, "aten::add.Tensor")
    fused = [n for n in adds if n == "add"] or adds[:1]
    analysis, markdown = analyze(minify, graph, os.path.join(work, "out"),
                                 *faulty_backend(faulty, "fault.aten::add.Tensor=wrong-fused", "fused-with=aten::mul.Tensor"))
    found = findings(analysis)
    expect(found.get("isolated_divergence") is None, f"isolated mode must see no divergence: {found}")
    expect(found.get("in_place_divergence") == fused[0], f"in place: {found}, adds {adds}")
    expect("fusion bug" in found.get("fusion", ""), f"{found}")
    expect("**The modes disagree**" in markdown and "fusion bug" in markdown, markdown[:800])


def test_nondeterministic(minify, faulty, work):
    graph = export(chain, [torch.randn(64)], os.path.join(work, "chain"))
    relu = nodes_of(graph, "aten::relu")[0]
    analysis, markdown = analyze(minify, graph, os.path.join(work, "out"),
                                 *faulty_backend(faulty, "op=aten::relu", "fault=nondeterministic"))
    found = findings(analysis)
    expect(relu in found["compiled_nondeterministic"], f"{found}")
    expect(not found["fp64_nondeterministic"], f"{found}")
    expect("the compiled graph: **nondeterministic**" in markdown, markdown[:1000])
    # The eager reference is deterministic.
    analysis, markdown = analyze(minify, graph, os.path.join(work, "eager"), "--backend", "eager")
    expect(not findings(analysis)["compiled_nondeterministic"] and "the compiled graph: deterministic" in markdown,
           f"{findings(analysis)}")


def test_crash(minify, faulty, work):
    graph = export(chain, [torch.randn(64)], os.path.join(work, "chain"))
    relu = nodes_of(graph, "aten::relu")[0]
    for fault, kind in (("segfault", "crash"), ("throw", "exception")):
        analysis, markdown = analyze(minify, graph, os.path.join(work, fault),
                                     *faulty_backend(faulty, "op=aten::relu", f"fault={fault}"))
        by_name = {n["node"]: n for n in analysis["nodes"]}
        verdict = by_name[relu]["isolated"]["failure"]
        expect(verdict["kind"] == kind, f"{fault}: the relu's verdict {verdict}")
        expect(analysis["in_place_failure"]["failure"]["kind"] == kind, f"{fault}: in place {analysis['in_place_failure']}")
        measured = [n for n in analysis["nodes"] if n["node"] != relu and n["isolated"].get("measurement")]
        expect(len(measured) == CHAIN_LENGTH - 1, f"{fault}: {len(measured)} other nodes measured")
        expect(findings(analysis)["failed_nodes"] == 1, f"{fault}: {findings(analysis)}")
        expect(f"| `{relu}` | aten::relu | isolated | compiled fails: fail: {kind}" in markdown, markdown[:2500])


def test_bad_input(minify, faulty, work):
    graph = export(with_independent_branch, [torch.randn(4, 8), torch.randn(8, 3)], os.path.join(work, "graph"))
    path = os.path.join(graph, "graph.json")
    with open(path) as f:
        document = json.load(f)
    inputs = [n["name"] for n in document["nodes"] if n["op"] == "placeholder"]
    mm = next(n for n in document["nodes"] if n.get("target") == "aten::mm")
    mm["args"] = [{"node": inputs[0]}, {"node": inputs[0]}]  # (4, 8) @ (4, 8): eager refuses
    with open(path, "w") as f:
        json.dump(document, f)
    analysis, markdown = analyze(minify, graph, os.path.join(work, "out"), "--backend", "torchscript")
    expect(analysis["eager_failure"]["node"] == mm["name"], f"{analysis['eager_failure']}")
    by_name = {n["node"]: n for n in analysis["nodes"]}
    expect(by_name[mm["name"]]["isolated"]["failed"] in ("eager", "compiled"), f"{by_name[mm['name']]}")
    sin = next(n for n in by_name if n.startswith("sin"))
    expect(by_name[sin]["isolated"]["measurement"]["measured"], f"the independent sin: {by_name[sin]}")
    expect("**The graph does not run in eager**" in markdown, markdown[:1000])
    # Input the command refuses before any worker starts.
    done = subprocess.run([minify, "analyze", graph, "--backend", "tpu", "--json"], capture_output=True, text=True)
    expect(done.returncode == 2 and "unknown backend 'tpu'" in done.stdout, f"{done.returncode} {done.stdout}")
    done = subprocess.run([minify, "analyze", os.path.join(work, "missing"), "--backend", "eager"], capture_output=True,
                          text=True)
    expect(done.returncode == 2 and "missing" in done.stderr, f"{done.returncode} {done.stderr}")


# The plot's colours (worker/python/minifyd/analysis_plot.py): compiled in place, eager.
COMPILED_RED, EAGER_BLUE = (0xd6, 0x27, 0x28), (0x1f, 0x77, 0xb4)


def minify_run(minify, graph, out, *args):
    """`minify run GRAPH --out OUT --json ARGS`: its summary and OUT's checkpoint.json."""
    done = subprocess.run([minify, "run", graph, "--out", out, "--json", *args], capture_output=True, text=True,
                          timeout=900)
    expect(done.returncode == 0, f"minify run {args}: exit {done.returncode}\n{done.stdout}\n{done.stderr[-3000:]}")
    with open(os.path.join(out, "checkpoint.json")) as f:
        return json.loads(done.stdout), json.load(f)


def check_analyze_first(minify, graph, node, work, name, *bug):
    """`minify run --accuracy` with and without --analyze-first: the search's first step is the cut at node,
    the result no larger, fewer queries. Returns both summaries."""
    args = ["--accuracy", *bug]
    plain, _ = minify_run(minify, graph, os.path.join(work, f"{name}-plain"), *args)
    first, checkpoint = minify_run(minify, graph, os.path.join(work, f"{name}-first"), "--analyze-first", *args)
    expect(checkpoint["analysis"]["first_divergence"] == node, f"{name}: analysis {checkpoint['analysis']}")
    expect(checkpoint["steps"][0]["strategy"] == "first-divergence", f"{name}: steps {checkpoint['steps'][:3]}")
    expect(first["nodes"] <= plain["nodes"], f"{name}: {first['nodes']} nodes with --analyze-first, {plain['nodes']} without")
    expect(first["queries"] < plain["queries"],
           f"{name}: {first['queries']} queries with --analyze-first, {plain['queries']} without")
    with open(os.path.join(work, f"{name}-first", "report.md")) as f:
        report = f.read()
    expect(f"the compiled values first diverge at `{node}`" in report, report[:1500])
    expect(not os.path.exists(os.path.join(work, f"{name}-first", "analysis.json")), "--analyze-first wrote analysis files")
    print(f"{name}: {plain['queries']} queries to {plain['nodes']} nodes without, {first['queries']} queries "
          f"(+{checkpoint['analysis']['requests']} analysis requests) to {first['nodes']} nodes with --analyze-first")


def test_run_analyze_first(minify, faulty, work):
    """--analyze-first on a 200-node chain and on resnet18, the faulty plugin wrong at the relu."""
    graph = export(lasting_chain, [torch.randn(64)], os.path.join(work, "chain"))
    check_analyze_first(minify, graph, nodes_of(graph, "aten::relu")[0], work, "chain",
                        *faulty_backend(faulty, "op=aten::relu", "fault=wrong"))
    graph = export_resnet18(os.path.join(work, "resnet18"))
    check_analyze_first(minify, graph, nodes_of(graph, "aten::relu_")[0], work, "resnet18",
                        *faulty_backend(faulty, "op=aten::relu_", "fault=wrong"))


def read_analysis(out):
    with open(os.path.join(out, "analysis.json")) as f:
        analysis = json.load(f)
    with open(os.path.join(out, "analysis.md")) as f:
        markdown = f.read()
    expect(os.path.exists(os.path.join(out, "analysis.svg")) or "has no matplotlib" in markdown,
           f"{out}: no plot, and analysis.md does not say why")
    return analysis, markdown


def test_submit_analyze(minify, faulty, work):
    """minifyd: `minify submit --analyze` and `minify result` bring the analysis `minify run --analyze` writes."""
    sys.path.insert(0, os.path.join(HERE, "..", "minifyd"))
    from daemon_harness import Daemon, Tools, wait_all_final
    graph = export(lasting_chain, [torch.randn(64)], os.path.join(work, "chain"))
    relu = nodes_of(graph, "aten::relu")[0]
    args = ["--accuracy", "--analyze", *faulty_backend(faulty, "op=aten::relu", "fault=wrong")]
    _, checkpoint = minify_run(minify, graph, os.path.join(work, "run"), *args)
    expect(checkpoint["analysis"]["first_divergence"] == relu, f"minify run --analyze: {checkpoint['analysis']}")
    by_run, _ = read_analysis(os.path.join(work, "run"))
    # minifyd beside minify, as the build puts them.
    tools = Tools(minify, os.path.join(os.path.dirname(minify), "minifyd"), faulty)
    daemon = Daemon(tools, os.path.join(work, "state"), "--workers", "2").start()
    try:
        job = daemon.submit(graph, args)
        final = wait_all_final(daemon, [job], 600)[job]
        expect(final["state"] == "done", f"job {job}: {final}\n{daemon.log()}")
        out = os.path.join(work, "result")
        daemon.result_graph(job, out)
        analysis, markdown = read_analysis(out)
        expect(analysis["first_divergence"] == relu and analysis["modes"] == ["isolated", "in_place"],
               f"the job's analysis: {analysis['first_divergence']}, modes {analysis['modes']}")
        expect(f"**First divergence: node `{relu}`**, in both modes." in markdown, markdown[:600])
        verdicts = [(n["node"], n["isolated"]["measurement"]["diverges"], n["in_place"]["measurement"]["diverges"])
                    for n in analysis["nodes"]]
        expect(verdicts == [(n["node"], n["isolated"]["measurement"]["diverges"], n["in_place"]["measurement"]["diverges"])
                            for n in by_run["nodes"]], "the job's analysis differs from minify run's")
        with open(os.path.join(out, "report.md")) as f:
            expect("analysis.md" in f.read(), "report.md does not list the analysis")
        # A job without --analyze brings none.
        plain = daemon.submit(graph, args[:1] + args[2:])
        expect(wait_all_final(daemon, [plain], 600)[plain]["state"] == "done", daemon.log())
        daemon.result_graph(plain, os.path.join(work, "plain"))
        expect(not os.path.exists(os.path.join(work, "plain", "analysis.json")), "a job without --analyze has analysis files")
    finally:
        daemon.stop()
    print(f"job {job}: first divergence {relu}, {len(verdicts)} nodes, as minify run --analyze found")


def pixels_near(image, colour, tolerance=40):
    import numpy
    rgb = (image[..., :3] * 255).astype(int) if image.dtype.kind == "f" else image[..., :3].astype(int)
    return int((numpy.abs(rgb - numpy.array(colour)).sum(axis=-1) < tolerance).sum())


def test_svg_in_browser(minify, faulty, work):
    """analysis.svg as a real browser draws it: headless Chromium's screenshot shows both curves."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("SKIP: no chromium (Debian: apt-get install chromium)")
        sys.exit(77)
    graph = export(chain, [torch.randn(64)], os.path.join(work, "chain"))
    out = os.path.join(work, "out")
    analyze(minify, graph, out, *faulty_backend(faulty, "op=aten::relu", "fault=wrong"))
    expect(os.path.exists(os.path.join(out, "analysis.svg")), "no analysis.svg (no python3 with matplotlib?)")
    shot = os.path.join(work, "analysis.png")
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--window-size=1000,450", f"--screenshot={shot}",
                           "file://" + os.path.join(out, "analysis.svg")],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": work})
    expect(done.returncode == 0 and os.path.isfile(shot), f"chromium exits {done.returncode}: {done.stderr[-2000:]}")
    import matplotlib.image
    image = matplotlib.image.imread(shot)
    red, blue = pixels_near(image, COMPILED_RED), pixels_near(image, EAGER_BLUE)
    # A curve along 200 nodes is hundreds of pixels; a legend's swatch alone is a few dozen.
    expect(red > 300 and blue > 300, f"the screenshot shows {red} pixels of the compiled curve, {blue} of eager's")
    print(f"screenshot {shot}: {red} compiled, {blue} eager pixels")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--case", required=True,
                        help="chain_wrong, resnet18_wrong, fusion, nondeterministic, crash, bad_input, svg_in_browser, "
                             "run_analyze_first, submit_analyze")
    parser.add_argument("--minify", required=True)
    parser.add_argument("--faulty", required=True, help="the faulty plugin")
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    globals()[f"test_{args.case}"](os.path.abspath(args.minify), os.path.abspath(args.faulty), args.work)
    print(f"PASS analyze.{args.case}")


if __name__ == "__main__":
    main()
