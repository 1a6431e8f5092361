# Reads a repro file that PyTorch's after_aot writes (minifier_launcher.py, repro.py, checkpoints/*.py
# under torch_compile_debug/run_*/minifier/; PyTorch 2.0's shape or a later one, repro_shape.py) and
# writes it as a graph directory with origin.json. The file's definitions run here, what runs the
# repro never does: the __main__ block is read as syntax only (run_repro's arguments), and in 2.0's
# shape nothing from the make_fx line on runs. The config lines are taken as what they change: each
# config value that differs after the definitions ran from before is a backend option, so every
# candidate compiles under the configuration of the user's run.
#   python3 -m minifyd.repro_file FILE.py --out DIR
import argparse
import ast
import errno
import importlib.util
import inspect
import json
import math
import os
import sys
import warnings

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from minifyd import compile_backends, export, graph_format as gf, graph_writer as gw, origin as origin_file, repro_inputs
from minifyd.atomic_directory import OutputDirectoryError, write_directory_atomically
from minifyd.config_options import changed_options as _changed_options, configs as _configs
from minifyd.repro_errors import USER_CODE_ERRORS, ReproFileError, failure
from minifyd.repro_shape import FORMAT_20, shape

# The exit status of an import that found the disk full (sysexits' EX_CANTCREAT), which `minify`
# (helper_no_space_exit, daemon/pool/worker_program.h) tells from a file that cannot be imported.
NO_SPACE_EXIT = 73



class ReproFile:
    def __init__(self, path, file_format, module, run_options, backend_options, notes, read_inputs):
        self.path = path
        self.format = file_format  # repro_shape.FORMAT_2X or FORMAT_20
        self.module = module  # the Repro module (the file's `mod`, else Repro())
        self.run_options = run_options  # run_repro's (2.0: make_fx's) literal keyword arguments
        self.backend_options = backend_options  # {key: text} as --backend-opt takes them
        self.notes = notes  # what the user should know: warnings of the definitions, options not passed on
        self.read_inputs = read_inputs  # () -> (inputs, how many storages hold random data)

    @property
    def save_dir(self):
        return self.run_options.get("save_dir")


def _parsed(path):
    """(the file's lines, its syntax tree); ReproFileError where it cannot be read or is not Python."""
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except (OSError, UnicodeDecodeError) as error:
        raise ReproFileError(f"{path}: cannot read it: {error}") from None
    lines = source.splitlines()
    try:
        return lines, ast.parse(source, filename=path)
    except SyntaxError as error:
        ends_there = error.lineno is not None and error.lineno >= len(lines)
        truncated = " (the file ends there: is it cut short?)" if ends_there else ""
        raise ReproFileError(f"{path}: line {error.lineno}: not Python: {error.msg}{truncated}") from None


def _missing_torch_import(node):
    """The module of a plain `import torch.X` this PyTorch lacks, else None: 2.0's repro.py begins with
    `import torch._inductor.overrides`, imported for its side effects and gone since 2.1."""
    if not isinstance(node, ast.Import):
        return None
    for alias in node.names:
        if alias.asname is None and alias.name.startswith("torch."):
            try:
                found = importlib.util.find_spec(alias.name) is not None
            except ModuleNotFoundError:
                found = False
            if not found:
                return alias.name
    return None


def _run_definitions(path, definitions, notes):
    """(namespace, backend options): the definitions run; what PyTorch warned while they ran is noted
    (2.0's config lines name keys this PyTorch no longer has)."""
    kept = []
    for node in definitions:
        missing = _missing_torch_import(node)
        if missing:
            notes.append(f"line {node.lineno}: `import {missing}` skipped: PyTorch {torch.__version__} has no such module")
        else:
            kept.append(node)
    # The names FX's generated code takes from its own globals (torch.fx.graph's custom builtins): a
    # graph's code may use `nan` where PyTorch 2.6's repro writer imported only `inf` (a launcher whose
    # graph holds a NaN constant fails under plain python with "name 'nan' is not defined").
    namespace = {"__name__": "minifyd_repro", "__file__": path, "inf": math.inf, "nan": math.nan}
    before = _configs()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(compile(ast.Module(body=kept, type_ignores=[]), path, "exec"), namespace)  # noqa: S102
        except USER_CODE_ERRORS as error:
            raise failure(path, "running its definitions failed", error) from None
    notes.extend(dict.fromkeys(str(warning.message) for warning in caught))
    options = _changed_options(before, _configs(), notes)
    try:
        compile_backends.config_patches(options)
    except compile_backends.OptionError as error:
        raise ReproFileError(f"{path}: its config lines make an option the worker cannot take: {error}") from None
    return namespace, options


def _repro_module(path, namespace):
    repro_class = namespace.get("Repro")
    if not (isinstance(repro_class, type) and issubclass(repro_class, torch.nn.Module)):
        raise ReproFileError(f"{path}: not an after_aot repro: it defines no class Repro(torch.nn.Module)")
    module = namespace.get("mod")
    if isinstance(module, repro_class):
        return module
    try:
        return repro_class()
    except USER_CODE_ERRORS as error:
        raise failure(path, "Repro() failed", error) from None


def _input_reader(path, repro_shape, namespace, line_count):
    """() -> (inputs, random storages), as the file's shape makes its inputs. after_aot writes what runs
    the repro last: a file without it was most likely cut short."""
    if repro_shape.format == FORMAT_20:
        args = namespace.get("args")
        return lambda: repro_inputs.from_args(path, args)
    ends = f"{path}: line {line_count}: the file ends"
    load_args = namespace.get("load_args")
    if not callable(load_args):
        raise ReproFileError(f"{ends} after class Repro without load_args(reader) (PyTorch 2.1 and later) or "
                             "`mod = make_fx(Repro(), ...)(*args)` (PyTorch 2.0): is it cut short?")
    if repro_shape.run_options is None:
        raise ReproFileError(f"{ends} without the `if __name__ == '__main__':` block calling run_repro that after_aot "
                             "writes last: is it cut short?")
    save_dir = repro_shape.run_options.get("save_dir")
    if save_dir is not None and not os.path.isabs(save_dir):
        save_dir = os.path.join(os.path.dirname(path), save_dir)
    return lambda: repro_inputs.from_load_args(path, load_args, save_dir)


def read(path):
    """The ReproFile at path; ReproFileError naming what is wrong, and where."""
    path = os.path.abspath(path)
    lines, tree = _parsed(path)
    repro_shape = shape(tree)
    notes = []
    namespace, options = _run_definitions(path, repro_shape.definitions, notes)
    module = _repro_module(path, namespace)
    read_inputs = _input_reader(path, repro_shape, namespace, len(lines))
    return ReproFile(path, repro_shape.format, module, repro_shape.run_options, options, notes, read_inputs)


def _copies(inputs):
    """The inputs on copies of their storages (views of one storage stay views of one copy)."""
    storages = {}

    def copy(tensor):
        key = gw.storage_key(tensor)
        if key not in storages:
            storages[key] = gf.untyped_storage(tensor).clone()
        return torch.empty(0, dtype=tensor.dtype, device=tensor.device).set_(
            storages[key], tensor.storage_offset(), tensor.shape, tensor.stride())

    return [copy(value) if isinstance(value, torch.Tensor) else value for value in inputs]


def _check_arity(repro, inputs):
    parameters = inspect.signature(repro.module.forward).parameters.values()
    if any(parameter.kind == parameter.VAR_POSITIONAL for parameter in parameters):
        return
    if len(parameters) != len(inputs):
        raise ReproFileError(f"{repro.path}: its inputs are {len(inputs)} but Repro.forward takes {len(parameters)}")


def _is_graph_input(value):
    """Whether a graph directory holds the value as an input: a tensor, or reader.symint's int (a SymInt
    input, kept even where no node uses it: with tracing_mode 'symbolic' tensor shapes may name it)."""
    return isinstance(value, torch.Tensor) or (isinstance(value, int) and not isinstance(value, bool))


def aten_graph(repro, inputs):
    """(GraphModule, its inputs): the Repro module traced as run_repro traces it (make_fx with the file's
    tracing_mode, under torch.no_grad), on copies of the inputs, since tracing runs the module and an
    in-place update must not reach the values stored. Traced symbolically, an int input is a SymInt
    placeholder; its input is the int the file gives. An input that is neither tensor nor int
    (reader.const's None) must be one the graph does not use."""
    _check_arity(repro, inputs)
    try:
        with torch.no_grad():
            gm = make_fx(repro.module, tracing_mode=repro.run_options.get("tracing_mode", "real"))(*_copies(inputs))
    except USER_CODE_ERRORS as error:
        raise failure(repro.path, "tracing Repro on its inputs failed", error) from None
    placeholders = [node for node in gm.graph.nodes if node.op == "placeholder"]
    for index, (node, value) in enumerate(zip(placeholders, inputs)):
        if not _is_graph_input(value):
            if node.users:
                raise ReproFileError(f"{repro.path}: input {index} is {value!r}, neither tensor nor int, and the "
                                     "graph uses it: a graph directory's inputs are tensors and SymInts")
            gm.graph.erase_node(node)
    gm.recompile()
    return gm, [value for value in inputs if _is_graph_input(value)]


def origin(repro, random_storages):
    """DIR/origin.json's document: where the graph came from and the configuration it fails under."""
    return {"source": repro.path, "format": repro.format, "backend_options": repro.backend_options,
            "random_storages": random_storages, "save_dir": repro.save_dir, "notes": repro.notes}


def import_file(path, out_dir):
    """Writes the repro file at path as the graph directory out_dir, with origin.json; returns the summary
    (origin.json's keys, nodes, inputs). Nothing is left at out_dir unless all of it was written."""
    with write_directory_atomically(out_dir) as staging:
        repro = read(path)
        inputs, random_storages = repro.read_inputs()
        gm, tensors = aten_graph(repro, inputs)
        try:
            doc = export.export(gm, tensors, staging)
        except gf.FormatError as error:
            raise ReproFileError(f"{repro.path}: {str(error).replace(staging, os.path.abspath(out_dir))}") from None
        document = origin(repro, random_storages)
        origin_file.write(staging, document)
    return {"nodes": len(doc["nodes"]), "inputs": len(doc["inputs"]), **document}


def main():
    parser = argparse.ArgumentParser(description="Write an after_aot repro file (minifier_launcher.py, repro.py) "
                                                 "as a minifyd graph directory; prints a JSON summary.")
    parser.add_argument("file", metavar="FILE.py")
    parser.add_argument("--out", required=True, metavar="DIR", help="graph directory to write (absent or empty)")
    args = parser.parse_args()
    # The file's code may print: what it writes to stdout goes to stderr, and stdout carries the
    # summary alone.
    sys.stdout.flush()
    summary_stream = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    try:
        summary = import_file(args.file, args.out)
    except (ReproFileError, OutputDirectoryError, OSError) as error:
        if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
            print(f"{error} (the disk is full)", file=sys.stderr)
            return NO_SPACE_EXIT
        sys.exit(str(error))
    path = os.path.abspath(args.file)
    for note in summary["notes"]:
        print(f"import: {path}: {note}", file=sys.stderr)
    if summary["random_storages"]:
        print(f"import: {path}: {summary['random_storages']} storages had no stored data and were filled with random "
              "values: a failure that depends on values may not reproduce", file=sys.stderr)
    print(json.dumps(summary), file=summary_stream, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
