# Config values as `--backend-opt KEY=VALUE` takes them (compile_backends.config_patches reads them
# back): Inductor's keys unprefixed, Dynamo's and functorch's with their module as prefix. A user's
# configuration reaches the workers this way, as the values that differ from a reference: an after_aot
# repro file's config lines (repro_file.py: after its definitions ran against before) and the
# configuration a captured or exported graph was compiled under (compile_options(): against the defaults).
import importlib

from minifyd.compile_backends import CONFIG_MODULES, option_refusal

INDUCTOR_CONFIG = "torch._inductor.config"
# Config values the worker decides, not the user's run: it compiles every candidate in its own process
# (a pool of compile workers would make a failure's text depend on how far the pool had started).
# PyTorch 2.0's repro files save the whole config, so they carry the user's core count as compile_threads.
WORKER_DECIDES = {"compile_threads"}


def configs():
    """{config module: {name: value}} as the values are now."""
    return {module: importlib.import_module(module).get_config_copy() for module in CONFIG_MODULES.values()}


def defaults():
    """{config module: {name: value}} as torch defines them, before a program or its environment
    changed any (PyTorch 2.6's config modules keep each default in their entry)."""
    return {module: {name: entry.default for name, entry in importlib.import_module(module)._config.items()}
            for module in CONFIG_MODULES.values()}


def _option_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else repr(value)


def changed_options(before, after, notes):
    """{--backend-opt key: text} for each config value that differs in after from before; a change
    that is not passed on (the worker's to decide, or refused by compile_backends' rule: a path, a
    command) is said in notes (a list)."""
    options = {}
    for prefix, module in CONFIG_MODULES.items():
        for name, value in after[module].items():
            if name in before[module] and before[module][name] != value:
                key = name if module == INDUCTOR_CONFIG else prefix + name
                refusal = option_refusal(key, before[module][name], _option_text(value))
                if key in WORKER_DECIDES:
                    notes.append(f"{key} = {value!r} is not passed on: the worker compiles every candidate in "
                                 "its own process")
                elif refusal:
                    notes.append(f"{key} = {value!r} is not passed on: {refusal}")
                else:
                    options[key] = _option_text(value)
    return options


# The capture hook and export_fx.py --aot turn AOT autograd's cache off (capture.py says why): the
# setting is theirs, not the program's, so it stays out of a graph's options.
AUTOGRAD_CACHE_OPTION = "torch._functorch.config.enable_autograd_cache"


def compile_options(notes):
    """{--backend-opt key: text} of the configuration a graph is being compiled under, as it differs from
    torch's defaults: the program's settings (fallback_random) and Inductor's own patches for the compile;
    what is not passed on is said in notes."""
    options = changed_options(defaults(), configs(), notes)
    options.pop(AUTOGRAD_CACHE_OPTION, None)
    return options
