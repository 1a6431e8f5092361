# End-to-end tests of repro files as minify's input (label inductor): `minify import FILE.py`, and
# `minify run|query FILE.py` where a graph directory goes, on files PyTorch writes: a checkpoint with
# its inputs in the content store, PyTorch 2.0's shape (fixtures/, as 2.0's after_aot writes it), and
# the minifier_launcher.py that torch.compile under TORCHDYNAMO_REPRO_AFTER=aot writes for each of
# Inductor's injected relu bugs on the chain and on resnet18, and on a function compiled with dynamic
# shapes (SymInt inputs). Bad input is refused naming the file and line, or the storage, and leaves
# nothing at the output directory.
# This script runs in the host's python; torch 2.x only ever runs in --python.
import glob
import json
import os
import shutil
import subprocess
import sys

from harness import (BUG, EXIT_OK, EXIT_USAGE, EXPECTED, HERE, MODELS, ROOT, call_nodes, check_at_relu,
                     check_repro_reproduces, expect, run_scenarios, write_file)

sys.path.insert(0, os.path.join(ROOT, "bench"))
from inductor_minifier_comparison import write_launcher  # noqa: E402

FIXTURES = os.path.join(HERE, "fixtures")


def minify_import(env, repro, out):
    """(exit status, the summary or None, stderr) of `minify import repro --out out --json`."""
    done = subprocess.run([env.minify, "import", repro, "--out", out, "--python", env.python, "--json"],
                          capture_output=True, text=True, timeout=600)
    summary = json.loads(done.stdout) if done.returncode == EXIT_OK else None
    return done.returncode, summary, done.stdout + done.stderr


def imported(env, repro, out):
    shutil.rmtree(out, ignore_errors=True)
    code, summary, output = minify_import(env, repro, out)
    expect(code == EXIT_OK, f"minify import {repro}: exit {code}\n{output[-3000:]}")
    done = subprocess.run([env.minify, "validate", "--check-store", out], capture_output=True, text=True)
    expect(done.returncode == EXIT_OK, f"minify validate --check-store {out}: {done.stdout}{done.stderr}")
    with open(os.path.join(out, "origin.json")) as f:
        origin = json.load(f)
    expect(origin["source"] == os.path.abspath(repro) and {**origin, "nodes": summary["nodes"],
                                                         "inputs": summary["inputs"]} == summary,
           f"{out}/origin.json is not the import's: {origin}, {summary}")
    return summary


def pytorch_checkpoint(env, directory):
    """The checkpoint PyTorch's minifier writes for tests/inductor/pytorch_checkpoint.py's graph:
    (its path, the SHA-256 of each input storage's bytes)."""
    shutil.rmtree(directory, ignore_errors=True)
    done = subprocess.run([env.python, os.path.join(HERE, "pytorch_checkpoint.py"), directory], capture_output=True,
                          text=True, timeout=600)
    expect(done.returncode == 0, f"pytorch_checkpoint.py: exit {done.returncode}\n{done.stderr[-3000:]}")
    written = json.loads(done.stdout)
    return written["repro"], written["sha256"]


def import_checkpoint(env):
    """A checkpoint with stored inputs (two views of one storage, one at an offset into another, int64)
    imports their exact values: the graph's blobs hash as the tensors' bytes do."""
    repro, sha256 = pytorch_checkpoint(env, os.path.join(env.work, "user-run"))
    out = os.path.join(env.work, "imported")
    summary = imported(env, repro, out)
    expect(summary["format"] == "pytorch-2.x" and summary["random_storages"] == 0 and summary["inputs"] == 4
           and summary["save_dir"] == os.path.dirname(repro) and summary["backend_options"] == {},
           f"import of {repro}: {summary}")
    with open(os.path.join(out, "graph.json")) as f:
        doc = json.load(f)
    expect(sorted(storage["hash"] for storage in doc["storages"]) == sha256,
           f"the imported blobs {doc['storages']} are not the stored tensors' bytes {sha256}")
    views = [(entry["storage"], entry["storage_offset"]) for entry in doc["inputs"]]
    expect(views[0][0] == views[1][0] and views[1][1] == 16 and views[2][1] == 32,
           f"the inputs do not view their storages as the user's did: {doc['inputs']}")


def recompile_limit(options):
    # 2.0's cache_size_limit, under the name the importing PyTorch's config gives it (2.11: recompile_limit).
    for name in ("cache_size_limit", "recompile_limit"):
        if f"torch._dynamo.config.{name}" in options:
            return options[f"torch._dynamo.config.{name}"]
    return None


def import_torch20(env):
    """PyTorch 2.0's shape, repro.py and minifier_launcher.py as 2.0 wrote them: the same graph, its
    config lines as backend options (the bug's among them; not compile_threads, the worker's own, nor the
    paths the config rule refuses),
    random inputs said so; `minify run` on the repro.py ends at the relu."""
    summaries = {}
    for name in ("torch20_repro", "torch20_minifier_launcher"):
        fixture = os.path.join(FIXTURES, f"{name}.py")
        out = os.path.join(env.work, name)
        summary = imported(env, fixture, out)
        options = summary["backend_options"]
        expect(summary["format"] == "pytorch-2.0" and summary["nodes"] == 9 and summary["random_storages"] == 1
               and summary["save_dir"] is None and options.get(BUG) == "compile_error" and "compile_threads" not in options
               and recompile_limit(options) == "64", f"import of {fixture}: {summary}")
        # The paths the 2.0 file saved with its whole config are data the rule refuses (docs/security.md,
        # "Config is data"): said, not carried.
        expect(not any("debug_dir_root" in key or "base_dir" in key for key in options)
               and any(note.startswith("torch._dynamo.config.debug_dir_root = ") and "is refused" in note
                       for note in summary["notes"]), f"import of {fixture} carried its paths: {summary}")
        summaries[name] = [(node["name"], node.get("target")) for node in call_nodes(out)]
    expect(summaries["torch20_repro"] == summaries["torch20_minifier_launcher"],
           f"repro.py and minifier_launcher.py import as different graphs: {summaries}")
    out = os.path.join(env.work, "minimized")
    shutil.rmtree(out, ignore_errors=True)
    code, summary, stderr = env.minify_cmd("run", os.path.join(FIXTURES, "torch20_repro.py"), "--backend", "inductor",
                                           "--out", out)
    expect(code == EXIT_OK, f"minify run on the 2.0 repro: exit {code}: {summary}\n{stderr[-3000:]}")
    check_at_relu(env, out, summary, "compile_error")


def import_bad_input(env):
    """Each refused with the file and the line, or the storage, and nothing left at --out."""
    repro, _ = pytorch_checkpoint(env, os.path.join(env.work, "user-run"))
    with open(repro) as f:
        lines = f.read().splitlines(keepends=True)
    store = os.path.dirname(repro)
    first_tensor = next(i for i, line in enumerate(lines) if "reader.tensor(buf0," in line)
    oversized = lines[:first_tensor] + [lines[first_tensor].replace("(8, 16)", "(80, 16)")] + lines[first_tensor + 1:]
    raises = write_file(store, "raises.py", "".join(oversized))
    # Cut inside load_args' first tensor line (not Python), and before the __main__ block (Python, but
    # without what runs the repro).
    cut_in_line = write_file(store, "cut_in_line.py",
                             "".join(lines[:first_tensor]) + lines[first_tensor][:len(lines[first_tensor]) // 2])
    main_block = next(i for i, line in enumerate(lines) if line.startswith("if __name__ == '__main__':"))
    cut_before_main = write_file(store, "cut_before_main.py", "".join(lines[:main_block]))
    second_storage = next(i for i, line in enumerate(lines) if "buf1 = reader.storage(" in line)
    missing_hash = lines[second_storage].split("'")[1]
    missing = write_file(store, "missing.py", "".join(lines))
    os.remove(os.path.join(store, "storages", missing_hash))
    not_a_repro = write_file(env.work, "not_a_repro.py", "import torch\nx = 1\nif __name__ == '__main__':\n    exit(9)\n")
    cases = [(not_a_repro, f"{not_a_repro}: not an after_aot repro: it defines no class Repro(torch.nn.Module)"),
             (raises, f"{raises}: line {first_tensor + 1}: load_args(reader) failed: RuntimeError"),
             (missing, f"{missing}: line {second_storage + 1}: storage {missing_hash}: not in the content store: "
                       f"{os.path.join(store, 'storages', missing_hash)} does not exist"),
             (cut_in_line, f"{cut_in_line}: line {first_tensor + 1}: not Python: "),
             (cut_before_main, f"{cut_before_main}: line {main_block}: the file ends without the `if __name__ == "
                               "'__main__':` block calling run_repro that after_aot writes last: is it cut short?")]
    out = os.path.join(env.work, "bad-out")
    for repro_file, message in cases:
        shutil.rmtree(out, ignore_errors=True)
        code, _, output = minify_import(env, repro_file, out)
        expect(code == EXIT_USAGE and message in output, f"minify import {repro_file}: exit {code}, wanted {message!r}:\n"
                                                         f"{output[-2000:]}")
        left = [name for name in os.listdir(env.work) if name == "bad-out" or name.startswith(".bad-out.")]
        expect(not left, f"minify import {repro_file} failed but left {left} in {env.work}")
    os.makedirs(out)
    kept = write_file(out, "kept", "")
    code, _, output = minify_import(env, not_a_repro, out)
    expect(code == EXIT_USAGE and f"{out}: exists and is not an empty directory" in output and os.path.isfile(kept),
           f"minify import into a non-empty directory: exit {code}\n{output[-2000:]}")


def check_shrunk(out, model, bug):
    """--shrink-inputs: the relu's input, whose values none of the injected bugs needs (each fires on
    any relu), is made by the repro instead of stored, and repro.py loads nothing; resnet18's 45 MB of
    stored weights and inputs end at none."""
    with open(os.path.join(out, "checkpoint.json")) as f:
        checkpoint = json.load(f)
    shrink, original = checkpoint["input_shrink"], checkpoint["original_data"]
    expect(not shrink.get("error") and shrink["after"]["stored_bytes"] == 0,
           f"{out}: the shrinking left {shrink['after']} stored: {shrink}")
    expect(not os.path.isdir(os.path.join(out, "repro_inputs")) or not os.listdir(os.path.join(out, "repro_inputs")),
           f"{out}/repro_inputs holds stored inputs")
    if model == "resnet18":
        expect(original["stored_bytes"] > 40 * 2**20, f"{out}: resnet18's original stores {original}, not 40 MB")
    print(f"{model} {bug}: stored data {original['stored_bytes']} B (original) -> {shrink['before']['stored_bytes']} B "
          f"(minimized) -> {shrink['after']['stored_bytes']} B, {shrink['queries']} candidates, "
          f"{shrink['wall_seconds']:.1f} s")


def import_launcher(env, model, bug):
    """The minifier_launcher.py torch.compile writes for the bug on the model, run as it is (with
    --shrink-inputs): the run ends at the relu, the config line its backend option. On the chain's compile error, the launcher
    without that line does not fail: the line is what makes the candidates fail."""
    launcher = write_launcher(env.python, os.path.join(env.work, "user-run"), MODELS[model], BUG, bug)
    expect(launcher is not None, "torch.compile under TORCHDYNAMO_REPRO_AFTER=aot wrote no minifier_launcher.py")
    out = os.path.join(env.work, "minimized")
    shutil.rmtree(out, ignore_errors=True)
    # No --backend-opt: the bug's config line comes from the launcher.
    code, summary, stderr = env.minify_cmd("run", launcher, "--out", out, "--backend", "inductor", "--shrink-inputs",
                                           *(["--accuracy"] if bug == "accuracy" else []))
    expect(code == EXIT_OK, f"minify run {launcher}: exit {code}: {summary}\n{stderr[-3000:]}")
    print(f"{model} {bug} launcher: {summary['start_nodes']} -> {summary['nodes']} nodes, {summary['queries']} queries, "
          f"{summary['wall_seconds']:.1f} s")
    check_at_relu(env, out, summary, bug)
    check_shrunk(out, model, bug)
    check_repro_reproduces(env, out, bug)
    if (model, bug) != ("chain", "compile_error"):
        return
    with open(launcher) as f:
        text = f.read()
    # The Python tool: the summary on stdout, the random storages (those saved without a hash: the
    # compile error's launcher holds fake inputs) said on stderr. Beside the bug's line the file
    # carries what Inductor had patched while compiling (functorch's unlift_effect_tokens).
    graph = os.path.join(env.work, "imported")
    shutil.rmtree(graph, ignore_errors=True)
    done = subprocess.run([env.python, os.path.join(ROOT, "scripts", "import_repro.py"), launcher, "--out", graph],
                          capture_output=True, text=True, timeout=600)
    unsaved = text.count("reader.storage(None,")
    summary = json.loads(done.stdout) if done.returncode == 0 else {}
    expect(summary.get("backend_options", {}).get(BUG) == bug and summary.get("random_storages") == unsaved > 0
           and f"{unsaved} storages had no stored data and were filled with random values" in done.stderr,
           f"scripts/import_repro.py {launcher}: exit {done.returncode}, {done.stdout}\n{done.stderr[-2000:]}")
    bug_line = f"torch._inductor.config.{BUG} = '{bug}'\n"
    expect(bug_line in text, f"{launcher} has no line {bug_line!r}")
    without = write_file(os.path.dirname(launcher), "without_bug_line.py", text.replace(bug_line, ""))
    code, result, stderr = env.minify_cmd("query", without, "--backend", "inductor")
    expect(code == EXIT_OK, f"the launcher without its config line: exit {code}, {result}\n{stderr[-2000:]}")


# A view whose shape is computed from a SymInt input, then the relu: torch.compile(dynamic=True) gives
# the graph after AOT autograd SymInt inputs (x's sizes and y's), and the launcher reads them with
# reader.symint.
DYNAMIC_USER_RUN = f"""import torch
import torch._inductor.config
torch._inductor.config.{BUG} = "compile_error"
def f(x, y):
    z = x.reshape(x.shape[0] * 2, -1)
    return torch.relu(z + 1) * y.sum()
torch.compile(f, dynamic=True)(torch.randn(8, 4), torch.randn(3))
"""


def import_symint(env):
    """The launcher of a dynamic-shape graph minifies to the relu and keeps its SymInt inputs, the one
    the view's shape is computed from (8, x's first size) among them, where PyTorch's minifier drops
    them; the result validates. The imported graph (its view's size an operator.mul of a SymInt)
    passes under the C++ backends, which have no injected bug."""
    run_dir = os.path.join(env.work, "user-run")
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    user_run = write_file(run_dir, "user_run.py", DYNAMIC_USER_RUN)
    subprocess.run([env.python, user_run], cwd=run_dir, capture_output=True, timeout=600,
                   env={**os.environ, "TORCHDYNAMO_REPRO_AFTER": "aot", "TORCHDYNAMO_REPRO_LEVEL": "2"})
    launchers = glob.glob(os.path.join(run_dir, "torch_compile_debug", "run_*", "minifier", "minifier_launcher.py"))
    expect(len(launchers) == 1, f"torch.compile under TORCHDYNAMO_REPRO_AFTER=aot wrote {launchers}, not one launcher")
    with open(launchers[0]) as f:
        expect("reader.symint(8)" in f.read(), f"{launchers[0]} reads no SymInt 8")
    out = os.path.join(env.work, "minimized")
    shutil.rmtree(out, ignore_errors=True)
    code, summary, stderr = env.minify_cmd("run", launchers[0], "--out", out, "--backend", "inductor")
    expect(code == EXIT_OK, f"minify run {launchers[0]}: exit {code}: {summary}\n{stderr[-3000:]}")
    targets = [n["target"] for n in call_nodes(out)]
    expect(targets[-1:] == ["aten::relu"], f"minimized to {targets}, which does not end with the relu")
    with open(os.path.join(out, "graph.json")) as f:
        symints = [entry["symint"] for entry in json.load(f)["inputs"] if "symint" in entry]
    expect(8 in symints, f"the minimized graph's SymInt inputs are {symints}: the view's (8) is gone")
    done = subprocess.run([env.minify, "validate", out], capture_output=True, text=True)
    expect(done.returncode == EXIT_OK, f"minify validate {out}: {done.stdout}{done.stderr}")
    original = os.path.join(out, "original")
    expect("operator.mul" in [n["target"] for n in call_nodes(original)], f"{original} computes no SymInt product")
    for backend in ("eager", "torchscript"):
        code, result, stderr = env.minify_cmd("query", original, "--backend", backend)
        expect(code == EXIT_OK, f"minify query {original} --backend {backend}: exit {code}, {result}\n{stderr[-2000:]}")


SCENARIOS = {"import_checkpoint": import_checkpoint, "import_torch20": import_torch20,
             "import_bad_input": import_bad_input, "import_symint": import_symint}
for _model in ("chain", "resnet18"):
    for _bug in EXPECTED:
        SCENARIOS[f"import_launcher_{_model}_{_bug}"] = (
            lambda model, bug: lambda env: import_launcher(env, model, bug))(_model, _bug)

if __name__ == "__main__":
    run_scenarios(SCENARIOS)
