# scripts/check_layering.py on small trees of its own: each breach of the layering it exists to catch
# is reported, naming the files and targets, and a tree that keeps to its links passes.
#   test_check_layering.py --script scripts/check_layering.py --work DIR --case NAME
import argparse
import os
import shutil
import subprocess
import sys

DOCS_BEGIN = "<!-- targets: begin (scripts/check_layering.py compares this with CMake's) -->"
DOCS_END = "<!-- targets: end -->"

# The tree every case starts from: common <- daemon/pool <- daemon/run, each a library.
BASE_FILES = {
    "common/value.h": "#pragma once\nnamespace minifyd {\n}\n",
    "common/value.cpp": '#include "common/value.h"\n',
    "daemon/pool/pool.h": '#pragma once\n#include "common/value.h"\nnamespace minifyd::pool {\n}\n',
    "daemon/pool/pool.cpp": '#include "daemon/pool/pool.h"\n',
    "daemon/run/run.h": '#pragma once\n#include "daemon/pool/pool.h"\n',
    "daemon/run/run.cpp": '#include "daemon/run/run.h"\n#include "daemon/run/plan.h"\n',
    "daemon/run/plan.h": "#pragma once\n",
    "daemon/run/plan.cpp": '#include "daemon/run/plan.h"\n',
    "daemon/main.cpp": '#include "daemon/run/run.h"\n',
}
BASE_TARGETS = [
    ("lib_common", "STATIC_LIBRARY", "common", [], ["common/value.cpp"]),
    ("lib_pool", "STATIC_LIBRARY", "daemon/pool", ["lib_common"], ["daemon/pool/pool.cpp"]),
    ("lib_run", "STATIC_LIBRARY", "daemon/run", ["lib_pool", "Threads::Threads"],
     ["daemon/run/run.cpp", "daemon/run/plan.cpp"]),
    ("main", "EXECUTABLE", "daemon", ["lib_run"], ["daemon/main.cpp"]),
]
BASE_DOCS = "lib_common → (none)\nlib_pool → lib_common\nlib_run → lib_pool\nmain → lib_run\n"


def add_include(files, path, included):
    files[path] = files.get(path, "") + f'#include "{included}"\n'


# Each case: how it changes the tree, and what the check must say (None: it must pass).
def case_clean(files, targets, docs):
    return None


def case_include_against_link(files, targets, docs):
    add_include(files, "daemon/pool/pool.cpp", "daemon/run/run.h")
    return "daemon/pool/pool.cpp includes daemon/run/run.h, but lib_pool does not link lib_run"


def case_transitive_include(files, targets, docs):
    add_include(files, "daemon/run/run.cpp", "common/value.h")  # run links pool, which links common
    return None


def case_link_loop(files, targets, docs):
    targets[1] = ("lib_pool", "STATIC_LIBRARY", "daemon/pool", ["lib_common", "lib_run"], ["daemon/pool/pool.cpp"])
    docs[0] = docs[0].replace("lib_pool → lib_common", "lib_pool → lib_common lib_run")
    return "these libraries link each other round a loop: lib_pool, lib_run"


def case_unit_loop(files, targets, docs):
    add_include(files, "daemon/run/plan.cpp", "daemon/run/run.h")
    return "these units of one library include each other round a loop"


def case_two_libraries_in_a_folder(files, targets, docs):
    targets.append(("lib_pool_two", "STATIC_LIBRARY", "daemon/pool", ["lib_common"], []))
    docs[0] += "lib_pool_two → lib_common\n"
    return "daemon/pool/ holds two libraries"


def case_docs_differ(files, targets, docs):
    docs[0] = docs[0].replace("lib_run → lib_pool", "lib_run → lib_common")
    return "target graph is not CMake's; CMake's is:\nlib_common → (none)\nlib_pool → lib_common\nlib_run → lib_pool"


def case_namespace_of_another_folder(files, targets, docs):
    files["daemon/run/plan.h"] += "namespace minifyd::pool {\n}\n"
    return "daemon/run/plan.h declares namespace minifyd::pool, but lib_run's is minifyd::run"


def case_namespace_of_a_library_nested_in_common(files, targets, docs):
    files["common/value.h"] += "namespace minifyd::pool {\n}\n"  # nested in minifyd, but the pool's
    return "common/value.h declares namespace minifyd::pool, but lib_common's is minifyd"


def case_file_of_no_target(files, targets, docs):
    files["protocol/wire.h"] = "#pragma once\n"
    targets.append(("lib_protocol", "STATIC_LIBRARY", "protocol", [], []))
    docs[0] += "lib_protocol → (none)\n"
    files["daemon/stray/stray.cpp"] = "\n"
    return "daemon/stray/stray.cpp belongs to no target"


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--case", required=True, choices=sorted(CASES))
    args = parser.parse_args()
    root = os.path.join(args.work, "tree")
    shutil.rmtree(args.work, ignore_errors=True)
    files, targets, docs = dict(BASE_FILES), list(BASE_TARGETS), [BASE_DOCS]
    expected = CASES[args.case](files, targets, docs)
    for path, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
        with open(os.path.join(root, path), "w") as f:
            f.write(text)
    targets_file = os.path.join(args.work, "targets.txt")
    with open(targets_file, "w") as f:
        for name, kind, folder, linked, sources in targets:
            f.write("|".join([name, kind, os.path.join(root, folder), ";".join(linked),
                              ";".join(os.path.join(root, s) for s in sources)]) + "\n")
    docs_file = os.path.join(args.work, "architecture.md")
    with open(docs_file, "w") as f:
        f.write(f"# Targets\n{DOCS_BEGIN}\n```\n{docs[0]}```\n{DOCS_END}\n")
    run = subprocess.run([sys.executable, args.script, "--root", root, "--targets", targets_file, "--docs", docs_file],
                         capture_output=True, text=True)
    said = run.stdout + run.stderr
    if expected is None:
        if run.returncode != 0:
            sys.exit(f"the check refused a tree that keeps its layering:\n{said}")
    else:
        if run.returncode == 0:
            sys.exit(f"the check passed a tree that breaks its layering (expected: {expected}):\n{said}")
        if expected not in said:
            sys.exit(f"the check failed without saying {expected!r}:\n{said}")
    print(f"{args.case}: ok")


if __name__ == "__main__":
    main()
