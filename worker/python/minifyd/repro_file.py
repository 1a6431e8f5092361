# Reads a repro file that PyTorch's after_aot writes (minifier_launcher.py, repro.py, checkpoints/*.py
# under torch_compile_debug/run_*/minifier/), PyTorch 2.x's shape: config lines, `class Repro`,
# `def load_args(reader)`, and a __main__ block calling run_repro(mod, load_args, save_dir=...).
# Its definitions run here, its __main__ block never does: that block is read as syntax only, for the
# run_repro arguments (where the content store is, the tracing mode). The config lines are taken as
# what they change: each config value that differs after the file's definitions ran from before is a
# backend option, so every candidate compiles under the configuration of the user's run.
import argparse
import ast
import importlib
import json
import os
import sys

import torch

from minifyd import export, graph_format as gf
from minifyd.compile_backends import CONFIG_MODULES

INDUCTOR_CONFIG = "torch._inductor.config"


class ReproFileError(Exception):
    """A file that is not an after_aot repro, or whose definitions fail to run: the message says which."""


class ReproFile:
    def __init__(self, path, module, load_args, run_options, backend_options):
        self.path = path
        self.module = module  # the Repro module (the file's `mod`, else Repro())
        self.load_args = load_args
        self.run_options = run_options  # run_repro's literal keyword arguments in the __main__ block
        self.backend_options = backend_options  # {key: text} as --backend-opt takes them

    @property
    def save_dir(self):
        return self.run_options.get("save_dir")


def _is_main_guard(node):
    """`if __name__ == '__main__':`"""
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def _run_repro_options(main_blocks):
    """The literal keyword arguments of the first run_repro(...) call in the __main__ blocks."""
    for block in main_blocks:
        for node in ast.walk(block):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "run_repro":
                options = {}
                for keyword in node.keywords:
                    try:
                        options[keyword.arg] = ast.literal_eval(keyword.value)
                    except ValueError:
                        continue  # not a literal: a name the block defines, unknowable without running it
                return options
    return {}


def _configs():
    return {module: importlib.import_module(module).get_config_copy() for module in CONFIG_MODULES.values()}


def _option_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else repr(value)


def _changed_options(before, after):
    """{--backend-opt key: text} for each config value the file changed; Inductor's keys unprefixed."""
    options = {}
    for prefix, module in CONFIG_MODULES.items():
        for name, value in after[module].items():
            if name in before[module] and before[module][name] != value:
                key = name if module == INDUCTOR_CONFIG else prefix + name
                options[key] = _option_text(value)
    return options


def read(path):
    """The ReproFile at path; ReproFileError naming what is wrong."""
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except (OSError, UnicodeDecodeError) as error:
        raise ReproFileError(f"{path}: cannot read it: {error}") from None
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as error:
        raise ReproFileError(f"{path}: line {error.lineno}: not Python: {error.msg}") from None
    main_blocks = [node for node in tree.body if _is_main_guard(node)]
    tree.body = [node for node in tree.body if not _is_main_guard(node)]
    namespace = {"__name__": "minifyd_repro", "__file__": os.path.abspath(path)}
    before = _configs()
    try:
        exec(compile(tree, path, "exec"), namespace)  # noqa: S102  (the user's repro: its definitions)
    except Exception as error:  # noqa: BLE001  (whatever the file raises is the user's to see)
        raise ReproFileError(f"{path}: running its definitions failed: {type(error).__name__}: {error}") from None
    options = _changed_options(before, _configs())
    repro_class = namespace.get("Repro")
    if not (isinstance(repro_class, type) and issubclass(repro_class, torch.nn.Module)):
        raise ReproFileError(f"{path}: not an after_aot repro: it defines no class Repro(torch.nn.Module)")
    load_args = namespace.get("load_args")
    if not callable(load_args):
        raise ReproFileError(f"{path}: not an after_aot repro of PyTorch 2.x: it defines no load_args(reader)")
    module = namespace.get("mod")
    if not isinstance(module, repro_class):
        try:
            module = repro_class()
        except Exception as error:  # noqa: BLE001
            raise ReproFileError(f"{path}: Repro() failed: {type(error).__name__}: {error}") from None
    return ReproFile(path, module, load_args, _run_repro_options(main_blocks), options)


def load_inputs(repro):
    """(inputs, how many storages were random) as after_aot's InputReader makes them: a storage from
    the content store (save_dir/storages/HASH) when its hash is given and found, random data else."""
    from torch._dynamo.debug_utils import InputReader

    class CountingReader(InputReader):
        def __init__(self, save_dir):
            super().__init__(save_dir)
            self.save_dir, self.random = save_dir, 0

        def storage(self, storage_hash, nbytes, **kwargs):
            stored = (self.save_dir is not None and storage_hash is not None
                      and os.path.exists(os.path.join(self.save_dir, "storages", storage_hash)))
            self.random += not stored
            return super().storage(storage_hash, nbytes, **kwargs)

    save_dir = repro.save_dir
    if save_dir is not None and not os.path.isabs(save_dir):
        save_dir = os.path.join(os.path.dirname(os.path.abspath(repro.path)), save_dir)
    reader = CountingReader(save_dir)
    try:
        repro.load_args(reader)
    except Exception as error:  # noqa: BLE001
        raise ReproFileError(f"{repro.path}: load_args(reader) failed: {type(error).__name__}: {error}") from None
    return reader.args, reader.random


def aten_graph(repro, inputs):
    """The Repro module traced to the aten-level graph after_aot's run_repro compiles (make_fx)."""
    from torch.fx.experimental.proxy_tensor import make_fx
    try:
        return make_fx(repro.module, tracing_mode=repro.run_options.get("tracing_mode", "real"))(*inputs)
    except Exception as error:  # noqa: BLE001
        raise ReproFileError(f"{repro.path}: tracing Repro on its inputs failed: {type(error).__name__}: "
                             f"{error}") from None


def main():
    parser = argparse.ArgumentParser(description="Write an after_aot repro file (minifier_launcher.py, repro.py) "
                                                 "as a minifyd graph directory; prints a JSON summary.")
    parser.add_argument("file", metavar="FILE.py")
    parser.add_argument("--out", required=True, metavar="DIR", help="graph directory to write")
    args = parser.parse_args()
    try:
        repro = read(args.file)
        inputs, random_storages = load_inputs(repro)
        doc = export.export(aten_graph(repro, inputs), inputs, args.out)
    except (ReproFileError, gf.FormatError) as error:
        sys.exit(f"import: {error}")
    print(json.dumps({"nodes": len(doc["nodes"]), "inputs": len(doc["inputs"]), "save_dir": repro.save_dir,
                      "random_storages": random_storages, "backend_options": repro.backend_options}))
