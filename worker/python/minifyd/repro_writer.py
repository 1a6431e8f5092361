# Writes a standalone repro.py that rebuilds a graph directory as a torch.fx GraphModule and runs it
# with eager (the reference): the template minifyd/repro_template.py, filled in as `minify run` fills it.
import argparse
import ast
import json
import os

from minifyd import graph_format as gf
from minifyd import output_checks

TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "repro_template.py")
# Where the template is filled in; daemon/run/repro_script.cpp fills in the same lines.
LOADER_END = "# ---- end of the loader:"
LOADER_LINE = "from minifyd.graph_format import"
CHECKS_LINE = "from minifyd.output_checks import"
SETTINGS_LINE = "SETTINGS_JSON = "
TARGETS_LINE = "GRAPH_TARGETS_JSON = "


def _replace_line(text, prefix, replacement):
    """text with its one line that starts with prefix replaced by replacement (which ends in a newline)."""
    lines = text.splitlines(keepends=True)
    found = [i for i, line in enumerate(lines) if line.startswith(prefix)]
    if len(found) != 1:
        raise SystemExit(f"repro_from_graph: {TEMPLATE} has {len(found)} lines starting {prefix!r}, expected 1")
    lines[found[0]] = replacement
    return "".join(lines)


def loader_source(loader):
    """The loader with the graph-target rule written in, as daemon/run/embed_repro_template.cmake writes it."""
    if "'''" in gf.GRAPH_TARGETS_JSON or "\\" in gf.GRAPH_TARGETS_JSON:
        raise SystemExit("repro_from_graph: graph_targets.json holds ''' or a backslash, which a raw string cannot")
    return _replace_line(loader, TARGETS_LINE, TARGETS_LINE + "r'''" + gf.GRAPH_TARGETS_JSON + "'''\n")


def repro_source(graph_dir):
    """repro.py's text: the template with graph_format.py's loader, output_checks.py and settings for eager
    on graph_dir."""
    with open(gf.__file__) as f:
        source = f.read()
    if LOADER_END not in source:
        raise SystemExit(f"repro_from_graph: {gf.__file__} lacks the line {LOADER_END!r} that ends its loader")
    with open(TEMPLATE) as f:
        template = f.read()
    # The template's own settings are eager's; only the graph directory is this one.
    template_settings = next(line for line in template.splitlines() if line.startswith(SETTINGS_LINE))
    settings = json.loads(ast.literal_eval(template_settings[len(SETTINGS_LINE):]))
    settings["graph_dir"] = os.path.abspath(graph_dir)
    # JSON inside a JSON string: a valid Python string literal, whatever the path holds.
    filled = _replace_line(template, SETTINGS_LINE, SETTINGS_LINE + json.dumps(json.dumps(settings)) + "\n")
    with open(output_checks.__file__) as f:
        filled = _replace_line(filled, CHECKS_LINE, f.read())
    return _replace_line(filled, LOADER_LINE, loader_source(source.split(LOADER_END)[0]))


def main():
    parser = argparse.ArgumentParser(description="Write a standalone repro.py for a graph directory.")
    parser.add_argument("graph_dir", metavar="DIR", help="graph directory (graph.json + store/)")
    parser.add_argument("--out", metavar="PATH", help="where to write repro.py (default: DIR/repro.py)")
    args = parser.parse_args()
    if not os.path.isfile(os.path.join(args.graph_dir, "graph.json")):
        raise SystemExit(f"repro_from_graph: {args.graph_dir} has no graph.json")
    out = args.out or os.path.join(args.graph_dir, "repro.py")
    with open(out, "w") as f:
        f.write(repro_source(args.graph_dir))
    print(f"wrote {out}: /usr/bin/python3 {out} [--print-graph] [--eager-only] [--save-outputs FILE]")
