# Draws analysis.svg from analysis.json (`minify analyze`, docs/analyze.md): each node's error
# against the fp64 reference, along the graph's order, for the compiled values (in place and
# isolated) and eager's, with the first divergence marked. matplotlib draws it; this module needs
# no torch, so any python3 with matplotlib will do.
#   python3 -m minifyd.analysis_plot analysis.json analysis.svg
import argparse
import json
import sys

# Distinct, and told apart in grey too: the compiled curves solid, eager's dashed.
CURVES = (
    ("in_place", "compiled", "compiled, in place", "#d62728", "-"),
    ("isolated", "compiled", "compiled, isolated", "#ff7f0e", "-"),
    ("isolated", "eager", "eager", "#1f77b4", "--"),  # isolated first: it has every node's
    ("in_place", "eager", "eager", "#1f77b4", "--"),
)
# RMSEs of exactly 0 (an exact value) are drawn here on the log scale.
FLOOR = 1e-12


def curve(nodes, mode, who):
    points = []
    for index, node in enumerate(nodes):
        result = node.get(mode) or {}
        figures = (result.get("measurement") or {}).get(who)
        if figures is None:
            continue
        rmse = figures["rmse"]
        if isinstance(rmse, dict):  # {"float": "nan" | "inf"}: off the plot
            continue
        points.append((index, max(rmse, FLOOR)))
    return points


def draw(analysis, svg_path):
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    nodes = analysis["nodes"]
    figure, axes = plt.subplots(figsize=(10, 4.5))
    drawn = set()
    for mode, who, label, color, style in CURVES:
        points = curve(nodes, mode, who)
        if not points or label in drawn:
            continue
        drawn.add(label)
        xs, ys = zip(*points)
        axes.plot(xs, ys, style, color=color, label=label, linewidth=1.6, marker="." if len(xs) < 80 else None)
    first = analysis.get("first_divergence")
    if first is not None:
        index = next(i for i, node in enumerate(nodes) if node["node"] == first)
        axes.axvline(index, color="#2ca02c", linewidth=1.2)
        axes.annotate(f"first divergence: {first}", xy=(index, 1), xycoords=("data", "axes fraction"),
                      xytext=(4, -14), textcoords="offset points", color="#2ca02c")
    axes.set_yscale("log")
    axes.set_xlabel("node, in graph order (call_function nodes)")
    axes.set_ylabel("RMSE against fp64")
    axes.set_title(f"{analysis['backend']}: error against fp64 along the graph")
    if drawn:
        axes.legend(loc="lower right")
    axes.grid(True, which="major", alpha=0.3)
    figure.tight_layout()
    figure.savefig(svg_path, format="svg")
    plt.close(figure)


def main():
    parser = argparse.ArgumentParser(description="Draw analysis.svg from analysis.json")
    parser.add_argument("analysis", metavar="analysis.json")
    parser.add_argument("svg", metavar="analysis.svg")
    args = parser.parse_args()
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        sys.exit(f"{sys.executable} has no matplotlib (Debian: apt-get install python3-matplotlib)")
    try:
        with open(args.analysis) as file:
            analysis = json.load(file)
        draw(analysis, args.svg)
    except (OSError, ValueError, KeyError) as error:
        sys.exit(f"drawing {args.svg} from {args.analysis}: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
