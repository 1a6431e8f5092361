# The shape of an after_aot repro file, from its syntax alone: which PyTorch wrote it, the statements
# that define the repro, and the literal arguments of the call that would run it.
#  - PyTorch 2.1 and later, "pytorch-2.x": config lines, `class Repro`, `def load_args(reader)`, and a
#    __main__ block calling run_repro(mod, load_args, save_dir=..., tracing_mode=...);
#  - PyTorch 2.0, "pytorch-2.0": config lines (load_config of each whole config, pickled), `class
#    Repro`, `args = [(shape, stride, dtype, device), ...]` made tensors by rand_strided, and
#    `mod = make_fx(Repro(), tracing_mode=...)(*args)`, after which the file compiles the graph
#    (repro.py) or minifies it (minifier_launcher.py) at top level: 2.0 wrote no __main__ block.
import ast

FORMAT_2X, FORMAT_20 = "pytorch-2.x", "pytorch-2.0"


class ReproShape:
    def __init__(self, file_format, definitions, run_options):
        self.format = file_format
        self.definitions = definitions  # the statements that define the repro, and nothing that runs it
        # run_repro's literal keyword arguments (2.0: make_fx's); None where no __main__ block calls run_repro
        self.run_options = run_options


def _is_main_guard(node):
    """`if __name__ == '__main__':`"""
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def _called_name(call):
    return getattr(call.func, "id", getattr(call.func, "attr", None))


def _literal_keywords(call):
    """The keyword arguments of call whose values are literals (a name is unknowable without running it)."""
    options = {}
    for keyword in call.keywords:
        try:
            options[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError:
            continue
    return options


def _run_repro_options(main_blocks):
    """The literal keyword arguments of the first run_repro(...) call in the __main__ blocks; None if none calls it."""
    for block in main_blocks:
        for node in ast.walk(block):
            if isinstance(node, ast.Call) and _called_name(node) == "run_repro":
                return _literal_keywords(node)
    return None


def _make_fx_options(node):
    """make_fx's keyword arguments where node is 2.0's `mod = make_fx(Repro(), tracing_mode=...)(*args)`, else None."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and getattr(node.targets[0], "id", None) == "mod"
            and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Call)):
        return None
    make = node.value.func
    traces_repro = (_called_name(make) == "make_fx" and make.args and isinstance(make.args[0], ast.Call)
                    and _called_name(make.args[0]) == "Repro")
    return {"tracing_mode": "real", **_literal_keywords(make)} if traces_repro else None


def shape(tree):
    """The ReproShape of a module: 2.0's where a statement is its make_fx line (what follows runs the
    repro), PyTorch 2.x's otherwise. __main__ blocks are never among the definitions."""
    body = [node for node in tree.body if not _is_main_guard(node)]
    for index, node in enumerate(body):
        options = _make_fx_options(node)
        if options is not None:
            return ReproShape(FORMAT_20, body[:index], options)
    return ReproShape(FORMAT_2X, body, _run_repro_options([node for node in tree.body if _is_main_guard(node)]))
