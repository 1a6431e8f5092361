# Checks the source tree's layering against CMake's own target graph (docs/architecture.md, "Targets"):
# every library is one folder and one namespace (minifyd::FOLDER, or one nested in it that is no other
# library's; common's is minifyd), every #include
# between folders follows a link of their libraries,
# the libraries link without a loop, no two units of one folder include each other round a loop, and the
# graph docs/architecture.md draws is CMake's. Run by ctest (layering.check) on every build.
#   check_layering.py --root SOURCE_DIR --targets BUILD_DIR/minifyd_targets.txt [--docs docs/architecture.md]
# The targets file is written by the top CMakeLists.txt at configure time: one line per target,
# NAME|TYPE|SOURCE_DIR|LINKED;...|SOURCES;...
import argparse
import os
import re
import sys

CODE_FOLDERS = ("common", "protocol", "daemon", "worker")
SOURCE_SUFFIXES = (".h", ".cpp")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
NAMESPACE = re.compile(r'^namespace (minifyd(?:::\w+)*) \{', re.MULTILINE)
ROOT_NAMESPACE = "minifyd"  # common/'s, which every other library's is nested in
DOCS_BEGIN = "<!-- targets: begin (scripts/check_layering.py compares this with CMake's) -->"
DOCS_END = "<!-- targets: end -->"
NO_LINKS = "(none)"  # a target that links none of the others


class Target:
    def __init__(self, name, kind, folder, linked, sources):
        self.name = name
        self.kind = kind
        self.folder = folder
        self.linked = linked
        self.sources = sources


def read_targets(path, root):
    targets = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            name, kind, folder, linked, sources = line.split("|")
            folder = os.path.relpath(folder, root)
            targets[name] = Target(name, kind, folder, [l for l in linked.split(";") if l],
                                   [os.path.relpath(s, root) for s in sources.split(";") if s])
    for target in targets.values():
        target.linked = [l for l in target.linked if l in targets]
    return targets


def code_files(root, tops):
    for top in tops:
        for directory, subdirs, files in os.walk(os.path.join(root, top)):
            subdirs[:] = sorted(d for d in subdirs if d != "python")
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(directory, name), root)


def owner_of(path, libraries_by_folder, executables_by_source):
    """The target a file belongs to: the executable that lists it, else the library of its nearest folder."""
    if path in executables_by_source:
        return executables_by_source[path]
    folder = os.path.dirname(path)
    while folder:
        if folder in libraries_by_folder:
            return libraries_by_folder[folder]
        folder = os.path.dirname(folder)
    return None


def reachable(targets, start):
    seen, todo = set(), [start]
    while todo:
        for linked in targets[todo.pop()].linked:
            if linked not in seen:
                seen.add(linked)
                todo.append(linked)
    return seen


def loops(nodes, edges):
    """The strongly connected components of more than one node (Tarjan's algorithm), each sorted."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return sorted(found)


def docs_graph(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if DOCS_BEGIN not in text or DOCS_END not in text:
        return None
    block = text.split(DOCS_BEGIN, 1)[1].split(DOCS_END, 1)[0]
    graph = {}
    for line in block.splitlines():
        line = line.strip().strip("`")
        if "→" not in line:
            continue
        name, linked = line.split("→", 1)
        graph[name.strip()] = sorted(l for l in linked.split() if l != NO_LINKS)
    return graph


def namespace_of(library_folder):
    """A library's namespace: minifyd for common/, else minifyd:: and its folder's name."""
    name = os.path.basename(library_folder)
    return ROOT_NAMESPACE if name == "common" else f"{ROOT_NAMESPACE}::{name}"


def cmake_graph(targets):
    return {t.name: sorted(t.linked) for t in targets.values()}


def render_graph(graph):
    return "\n".join(f"{name} → {' '.join(linked) or NO_LINKS}" for name, linked in sorted(graph.items()))


def check(root, targets, docs):
    problems = []
    libraries_by_folder = {}
    executables_by_source = {}
    for target in targets.values():
        if target.kind == "EXECUTABLE":
            for source in target.sources:
                executables_by_source[source] = target.name
            continue
        if target.folder in libraries_by_folder:
            problems.append(f"{target.folder}/ holds two libraries, {libraries_by_folder[target.folder]} and "
                            f"{target.name}: one folder, one library")
        libraries_by_folder[target.folder] = target.name
        for source in target.sources:
            if source.split(os.sep, 1)[0] not in CODE_FOLDERS:
                continue  # generated at build time
            if os.path.dirname(source) != target.folder and not source.startswith(target.folder + "/"):
                problems.append(f"{target.name} (of {target.folder}/) compiles {source}, a file of another folder")

    for loop in loops(targets.keys(), {t.name: t.linked for t in targets.values()}):
        problems.append("these libraries link each other round a loop: " + ", ".join(loop))

    # A folder whose targets this build leaves out (worker/ without LibTorch) is not checked.
    built_tops = {target.folder.split(os.sep, 1)[0] for target in targets.values()}
    files = list(code_files(root, [top for top in CODE_FOLDERS if top in built_tops]))
    owners = {path: owner_of(path, libraries_by_folder, executables_by_source) for path in files}
    closure = {name: reachable(targets, name) for name in targets}
    library_namespaces = {namespace_of(folder) for folder in libraries_by_folder}
    components = {}
    for path in files:
        owner = owners[path]
        if owner is None:
            problems.append(f"{path} belongs to no target")
            continue
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        includes = INCLUDE.findall(text)
        if targets[owner].kind != "EXECUTABLE":
            expected = namespace_of(targets[owner].folder)
            for namespace in sorted(set(NAMESPACE.findall(text))):
                nested = namespace.startswith(expected + "::") and namespace not in library_namespaces
                if namespace != expected and not nested:
                    problems.append(f"{path} declares namespace {namespace}, but {owner}'s is {expected}")
        unit = os.path.splitext(path)[0]
        for included in includes:
            if included not in owners:
                continue
            used = owners[included]
            if used is not None and used != owner and used not in closure[owner]:
                problems.append(f"{path} includes {included}, but {owner} does not link {used}")
            if used == owner:
                components.setdefault(unit, set()).add(os.path.splitext(included)[0])
    for unit in components:
        components[unit].discard(unit)
    for loop in loops(components.keys(), components):
        problems.append("these units of one library include each other round a loop (a header and its .cpp are "
                        "one unit): " + ", ".join(loop))

    if docs is not None:
        drawn = docs_graph(docs)
        actual = cmake_graph(targets)
        if drawn is None:
            problems.append(f"{docs} has no target graph between {DOCS_BEGIN!r} and {DOCS_END!r}")
        elif drawn != actual:
            problems.append(f"{docs}'s target graph is not CMake's; CMake's is:\n{render_graph(actual)}")
    return problems


def main():
    parser = argparse.ArgumentParser(description="the source tree's layering against CMake's target graph")
    parser.add_argument("--root", required=True)
    parser.add_argument("--targets", required=True)
    parser.add_argument("--docs")
    parser.add_argument("--print-graph", action="store_true", help="print CMake's target graph as docs draw it")
    args = parser.parse_args()
    root = os.path.realpath(args.root)
    targets = read_targets(args.targets, root)
    if args.print_graph:
        print(render_graph(cmake_graph(targets)))
        return 0
    problems = check(root, targets, args.docs)
    for problem in problems:
        print(f"layering: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"layering: {len(targets)} targets, no include against a link, no loop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
