# Renders the minifier comparison of bench/run_minifier_comparison.sh as a markdown table: per case
# of tests/run/cases.py, `minify run`'s result and PyTorch's functorch minifier's in both modes, with
# whether each met the case's expectation.
#   comparison_table.py --functorch FUNCTORCH.jsonl --minify-dir DIR --workers N
# FUNCTORCH.jsonl: bench/functorch_minifier.py's output. DIR/CASE.json: `minify run --json`'s output,
# DIR/CASE.exit: its exit code, DIR/CASE.out: its OUT_DIR.
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "run"))
import cases  # noqa: E402

MINIFY_STATUS_BY_EXIT = {0: "minimized", 4: "does_not_fail"}
FUNCTORCH_PEERS = {"inprocess": "functorch in-process", "isolated": "functorch isolated (fresh python3 per query)"}


def minify_row(case, minify_dir, workers):
    """(peer, status, nodes, queries, wall_seconds, problems) of one `minify run`."""
    peer = f"minifyd (--workers {workers})"
    with open(os.path.join(minify_dir, f"{case.name}.exit")) as f:
        code = int(f.read())
    if code not in MINIFY_STATUS_BY_EXIT:
        return peer, "error", None, None, None, [f"exit {code}"]
    with open(os.path.join(minify_dir, f"{case.name}.json")) as f:
        result = json.load(f)
    status = MINIFY_STATUS_BY_EXIT[code]
    problems = [] if result.get("status") == status else [f"status {result.get('status')!r} with exit {code}"]
    if status != case.expect.status:
        problems.append(f"{status}, expected {case.expect.status}")
    elif status == "minimized":
        with open(os.path.join(minify_dir, f"{case.name}.out", "graph.json")) as f:
            problems += case.expect.problems(json.load(f))
    nodes = result.get("nodes") if status == "minimized" else None
    return peer, status, nodes, result.get("queries"), result.get("wall_seconds"), problems


def functorch_row(line):
    return (FUNCTORCH_PEERS[line["mode"]], line["status"], line["nodes"], line["queries"], line["wall_seconds"],
            line["problems"])


def cell(value, fmt="{}"):
    return "—" if value is None else fmt.format(value)


def main():
    parser = argparse.ArgumentParser(description="Markdown table of the minifier comparison.")
    parser.add_argument("--functorch", required=True, metavar="FUNCTORCH.jsonl")
    parser.add_argument("--minify-dir", required=True, metavar="DIR")
    parser.add_argument("--workers", required=True)
    args = parser.parse_args()
    functorch = {}
    with open(args.functorch) as f:
        for line in filter(str.strip, f):
            entry = json.loads(line)
            functorch.setdefault(entry["case"], []).append(functorch_row(entry))
    print("| case | peer | final nodes | queries | wall time | as expected |")
    print("|---|---|---|---|---|---|")
    for name in functorch:
        case = cases.CASES[name]
        for peer, status, nodes, queries, wall, problems in [minify_row(case, args.minify_dir, args.workers),
                                                             *functorch[name]]:
            final = cell(nodes) if status == "minimized" else status.replace("_", " ")
            verdict = "yes" if not problems else "no: " + "; ".join(problems)
            print(f"| {name} | {peer} | {final} | {cell(queries)} | {cell(wall, '{:.2f} s')} | {verdict} |")


if __name__ == "__main__":
    main()
