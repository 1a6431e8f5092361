# End-to-end tests of repro.py as `minify run` writes it (through the minifyd_write_repro tool, which
# prints repro_script's text): it rebuilds exported graphs from a directory whose name needs
# escaping, runs them in a fresh Python outside the source tree, and exits 1 exactly when the
# failure reproduces: an exception under eager, NaN from finite inputs and accuracy under
# torchscript, and a faulty plugin through `minify query`. minifyd/repro_writer.py fills in
# the same template.
import argparse
import json
import os
import shutil
import subprocess
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "worker", "python"))
from minifyd import export as export_fx  # noqa: E402
from minifyd import graph_format  # noqa: E402
from minifyd import repro_writer  # noqa: E402

# Quotes, a backslash and a space: the path must survive as a Python string literal in repro.py.
AWKWARD_DIR = "we\"ird 'dir\\ x"


def with_relu(x, w):
    return (torch.relu(x @ w) * 2.0 + 1.0,)


def without_relu(x, w):
    return (torch.sigmoid(x @ w) * 2.0 + 1.0,)


def nan_from_finite(x):
    zero = x.cos() - x.cos()
    return (zero / zero + 3,)


def random_integers(x):
    # Two runs draw different integers: strict-accuracy compares them, accuracy ignores them.
    return (torch.randint_like(x, 0, 1000, dtype=torch.int64), x * 2)


def export(fn, out_dir, shapes=((4, 8), (8, 3))):
    shutil.rmtree(out_dir, ignore_errors=True)
    torch.manual_seed(0)
    export_fx.export(fn, [torch.randn(*shape) for shape in shapes], out_dir)
    return out_dir


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


class Repro:
    """Writes repro.py for a graph with given settings and runs it in a fresh Python."""

    def __init__(self, tools, work):
        self.tools, self.work = tools, work

    def write(self, graph, *settings):
        done = subprocess.run([self.tools.write_repro, graph, *settings], capture_output=True, text=True, timeout=60)
        expect(done.returncode == 0, f"minifyd_write_repro {settings}: exit {done.returncode}: {done.stderr}")
        path = os.path.join(self.work, "repro.py")
        with open(path, "w") as f:
            f.write(done.stdout)
        return path

    def run(self, path, *args, env=None):
        # Outside the source tree and without PYTHONPATH, so repro.py proves it needs only torch.
        environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
        environment.update(env or {})
        done = subprocess.run([sys.executable, path, *args], cwd=self.work, env=environment,
                              capture_output=True, text=True, timeout=300)
        return done.returncode, done.stdout, done.stderr

    def check(self, graph, settings, expected_code, expected_text, args=(), env=None):
        code, out, err = self.run(self.write(graph, *settings), *args, env=env)
        expect(code == expected_code and expected_text in out,
               f"{settings} {list(args)}: exit {code} (expected {expected_code}, {expected_text!r}):\n{out}\n{err}")
        return out


def test_eager(tools, work):
    repro = Repro(tools, work)
    graph = export(with_relu, os.path.join(work, AWKWARD_DIR, "relu"))
    out = repro.check(graph, ["--backend", "eager"], 0, "pass")
    expect("output[0]: float32[4, 3] sum" in out, out)
    repro.check(graph, ["--backend", "eager"], 0, "def forward", args=["--print-graph"])
    outputs = os.path.join(work, "outputs.pt")
    repro.check(graph, ["--backend", "eager"], 0, "output[0]", args=["--eager-only", "--save-outputs", outputs])
    x, w = graph_format.load_graph(graph)[1]
    expect(torch.equal(torch.load(outputs)[0], with_relu(x, w)[0]), "saved outputs differ from PyTorch's")

    # repro_writer.py fills in the same template: the scripts differ only in their settings.
    minify_script = open(repro.write(graph, "--backend", "eager")).read().splitlines()
    python_script = repro_writer.repro_source(graph).splitlines()
    settings_line = [i for i, line in enumerate(python_script) if line.startswith(repro_writer.SETTINGS_LINE)]
    expect(len(minify_script) == len(python_script) and len(settings_line) == 1, "the two repro.py differ in shape")
    for i, (ours, theirs) in enumerate(zip(minify_script, python_script)):
        expect(ours == theirs or i == settings_line[0], f"line {i + 1} differs:\n{ours}\n{theirs}")


def test_eager_failure(tools, work):
    repro = Repro(tools, work)
    graph = export(with_relu, os.path.join(work, "bad_shape"))
    # The first input as [4, 2]: mm refuses it, as a broken graph would under eager.
    path = os.path.join(graph, "graph.json")
    with open(path) as f:
        doc = json.load(f)
    doc["inputs"][0]["shape"] = [4, 2]
    with open(path, "w") as f:
        json.dump(doc, f)
    repro.check(graph, ["--backend", "eager"], 1, "fail: exception RuntimeError")
    repro.check(graph, ["--backend", "eager", "--check-str", "shapes cannot be multiplied"], 1, "fail: exception")
    repro.check(graph, ["--backend", "eager", "--check-str", "CUDA error"], 0, "does not match")


def test_torchscript(tools, work):
    repro = Repro(tools, work)
    graph = export(with_relu, os.path.join(work, AWKWARD_DIR, "relu"))
    for mode in ([], ["--accuracy"], ["--strict-accuracy"]):
        repro.check(graph, ["--backend", "torchscript", *mode], 0, "pass")
    nan = export(nan_from_finite, os.path.join(work, "nan"), shapes=((3,),))
    repro.check(nan, ["--backend", "torchscript", "--nan"], 1,
                "fail: nan: output[0] holds NaN (3 of 3 elements) while no input does")
    repro.check(nan, ["--backend", "torchscript"], 0, "pass")
    random = export(random_integers, os.path.join(work, "random"), shapes=((10, 10),))
    repro.check(random, ["--backend", "torchscript", "--strict-accuracy"], 1, "int64 values differ from eager's")
    repro.check(random, ["--backend", "torchscript", "--accuracy"], 0, "pass")


def test_plugin(tools, work):
    repro = Repro(tools, work)
    plugin = ["--backend", f"plugin:{tools.faulty}", "--backend-opt", "op=aten::relu", "--backend-opt", "fault=throw"]
    graph = export(with_relu, os.path.join(work, AWKWARD_DIR, "relu"))
    out = repro.check(graph, [*plugin, "--minify", tools.minify], 1, "fail: exception")
    expect("running: " in out and "--backend-opt fault=throw --backend-opt op=aten::relu" in out, out)
    repro.check(export(without_relu, os.path.join(work, "no_relu")), [*plugin, "--minify", tools.minify], 0, "pass")
    repro.check(graph, [*plugin, "--minify", tools.minify, "--check-str", "CUDA error"], 0, "pass")
    # $MINIFY overrides the embedded path; without either, the check cannot run.
    missing = os.path.join(work, "no-such-minify")
    repro.check(graph, [*plugin, "--minify", missing], 1, "fail: exception", env={"MINIFY": tools.minify})
    code, out, err = repro.run(repro.write(graph, *plugin, "--minify", missing))
    expect(code == 2 and "cannot run minify" in err, f"exit {code}: {out} {err}")


TESTS = {"eager": test_eager, "eager_failure": test_eager_failure, "torchscript": test_torchscript,
         "plugin": test_plugin}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--case", choices=sorted(TESTS), required=True)
    parser.add_argument("--write-repro", required=True, help="the minifyd_write_repro tool")
    parser.add_argument("--minify", help="the minify executable (plugin case)")
    parser.add_argument("--faulty", help="the faulty plugin (plugin case)")
    parser.add_argument("--work", required=True)
    tools = parser.parse_args()
    for name in ("write_repro", "minify", "faulty"):
        if getattr(tools, name):
            setattr(tools, name, os.path.abspath(getattr(tools, name)))
    shutil.rmtree(tools.work, ignore_errors=True)
    os.makedirs(tools.work)
    TESTS[tools.case](tools, tools.work)
    print(f"PASS repro_{tools.case}")


if __name__ == "__main__":
    main()
