# End-to-end tests of the `minify` binary on graph directories exported from real PyTorch:
# validation (good and bad documents), store stat/verify/gc, and usage errors.
import argparse
import json
import os
import shutil
import subprocess
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "worker", "python"))
from minifyd import export as export_fx  # noqa: E402
from minifyd import graph_writer as gw  # noqa: E402


def small_graph(out_dir):
    def fn(x, y):
        return (torch.relu(x @ y) + 1.5).sum(dim=0)
    shutil.rmtree(out_dir, ignore_errors=True)
    export_fx.export(fn, [torch.randn(3, 4), torch.randn(4, 2)], out_dir)
    return out_dir


def run(minify, *args):
    done = subprocess.run([minify, *args], capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout, done.stderr


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


def blob_path(graph_dir, digest):
    return os.path.join(graph_dir, "store", "blobs", digest[:2], digest)


def load_doc(graph_dir):
    with open(os.path.join(graph_dir, "graph.json")) as f:
        return json.load(f)


def save_doc(graph_dir, doc):
    with open(os.path.join(graph_dir, "graph.json"), "w") as f:
        json.dump(doc, f)


def test_validate_valid(minify, work):
    graph = small_graph(os.path.join(work, "a"))
    code, out, err = run(minify, "validate", graph)
    expect(code == 0, f"exit {code}: {err}")
    expect("valid graph" in out and "canonical hash" in out, out)
    code, out, err = run(minify, "validate", "--json", "--check-store", graph)
    summary = json.loads(out)
    expect(code == 0 and summary["valid"], out + err)
    expect(summary["inputs"] == 2 and summary["ops"]["placeholder"] == 2, out)
    # The same function exported again (fresh tensors, same values) has the same canonical hash.
    torch.manual_seed(0)
    again = small_graph(os.path.join(work, "b"))
    first_hash = summary["canonical_hash"]
    code, out, _ = run(minify, "validate", "--json", again)
    expect(json.loads(out)["canonical_hash"] != first_hash, "different input values must hash differently")
    shutil.copytree(graph, os.path.join(work, "c"))
    doc = load_doc(os.path.join(work, "c"))
    renames = {node["name"]: f"renamed_{i}" for i, node in enumerate(doc["nodes"])}

    def rename(value):
        if isinstance(value, dict):
            return {k: (renames[v] if k == "node" else rename(v)) for k, v in value.items()}
        return [rename(v) for v in value] if isinstance(value, list) else value
    for node in doc["nodes"]:
        node["name"] = renames[node["name"]]
        node["args"] = rename(node.get("args", []))
        node["kwargs"] = rename(node.get("kwargs", {}))
    save_doc(os.path.join(work, "c"), doc)
    code, out, err = run(minify, "validate", "--json", os.path.join(work, "c"))
    expect(code == 0, err)
    expect(json.loads(out)["canonical_hash"] == first_hash, "renaming every node must keep the canonical hash")


def test_validate_bad_document(minify, work):
    graph = small_graph(os.path.join(work, "bad"))
    doc = load_doc(graph)
    user = next(n for n in doc["nodes"] if n["op"] == "call_function" and n.get("args"))
    user["args"][0] = {"node": "no_such_node"}
    save_doc(graph, doc)
    code, out, err = run(minify, "validate", graph)
    expect(code == 1, f"exit {code}")
    expect(f"node '{user['name']}'" in err and "args[0]: reference to unknown node 'no_such_node'" in err, err)
    code, out, _ = run(minify, "validate", "--json", graph)
    expect(code == 1 and json.loads(out)["valid"] is False, out)

    with open(os.path.join(graph, "graph.json"), "w") as f:
        f.write('{"format": "minifyd.graph", "version": 1, "nodes": [')
    code, _, err = run(minify, "validate", graph)
    expect(code == 1 and "invalid JSON at byte" in err, err)


def test_validate_unreadable(minify, work):
    missing = os.path.join(work, "does-not-exist")
    code, _, err = run(minify, "validate", missing)
    expect(code == 1 and missing in err and "No such file" in err, err)


def test_check_store_detects_corruption(minify, work):
    graph = small_graph(os.path.join(work, "corrupt"))
    digest = load_doc(graph)["storages"][0]["hash"]
    with open(blob_path(graph, digest), "r+b") as f:
        f.write(b"\x00\x01\x02\x03")
    code, _, _ = run(minify, "validate", graph)
    expect(code == 0, "without --check-store the document alone is valid")
    code, _, err = run(minify, "validate", "--check-store", graph)
    expect(code == 1 and f"blob {digest}: corrupted" in err, err)


def test_corrupted_blob_exit_status(minify, work):
    """A corrupted blob is bad input to every command that reads it: exit 2 naming the blob, whether the
    coordinator (run, importing it) or the worker (query, analyze, refusing the request) finds it."""
    graph = small_graph(os.path.join(work, "corrupt-blob"))
    digest = load_doc(graph)["storages"][0]["hash"]
    with open(blob_path(graph, digest), "r+b") as f:
        f.write(b"\x00\x01\x02\x03")
    for args in (["query", graph], ["run", graph, "--out", os.path.join(work, "corrupt-run")],
                 ["analyze", graph, "--out", os.path.join(work, "corrupt-analysis")]):
        code, _, err = run(minify, *args, "--backend", "eager")
        expect(code == 2 and digest in err and "corrupted" in err, f"minify {args[0]}: exit {code}, {err}")


def test_store_commands(minify, work):
    graph = small_graph(os.path.join(work, "store"))
    store_dir = os.path.join(graph, "store")
    with gw.StoreWriter(store_dir) as store:
        orphan = store.put(b"nobody references me")
    code, out, err = run(minify, "store", "stat", "--json", graph)
    stats = json.loads(out)
    expect(code == 0 and stats["unreferenced_blobs"] == 1 and stats["missing_blobs"] == 0, out + err)
    code, out, _ = run(minify, "store", "gc", "--json", store_dir)
    gc = json.loads(out)
    expect(code == 0 and gc["blobs_removed"] == 1 and gc["blobs_kept"] == stats["blobs"] - 1, out)
    expect(not os.path.exists(blob_path(graph, orphan)), "gc must delete the orphan")
    code, out, _ = run(minify, "validate", "--check-store", graph)
    expect(code == 0, "gc must keep every blob the graph needs")
    code, out, _ = run(minify, "store", "verify", graph)
    expect(code == 0 and "0 problems" in out, out)

    digest = load_doc(graph)["storages"][0]["hash"]
    os.truncate(blob_path(graph, digest), 1)
    code, out, _ = run(minify, "store", "verify", "--json", graph)
    report = json.loads(out)
    expect(code == 1 and any(digest in p for p in report["problems"]), out)

    code, _, err = run(minify, "store", "stat", os.path.join(work, "nowhere"))
    expect(code == 2 and "is not a minifyd content store" in err, err)


def test_usage_errors(minify, work):
    for args in ([], ["frobnicate"], ["validate"], ["store"], ["--log-level", "loud", "validate", work]):
        code, _, err = run(minify, *args)
        expect(code == 2, f"minify {' '.join(args)}: exit {code}, {err}")


TESTS = {name[len("test_"):]: f for name, f in globals().items() if name.startswith("test_")}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--case", choices=sorted(TESTS), required=True)
    parser.add_argument("--minify", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    TESTS[args.case](os.path.abspath(args.minify), args.work)
    print(f"PASS {args.case}")


if __name__ == "__main__":
    main()
