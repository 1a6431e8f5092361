#!/usr/bin/env bash
# Minimizes every acceptance case of tests/run/cases.py with `minify run --json` and with PyTorch's
# functorch minifier (in-process and isolated, bench/functorch_minifier.py), and prints a markdown
# table (case, peer, final nodes, queries, wall time, whether the case's expectation was met) for
# docs/benchmarks.md.
#   bench/run_minifier_comparison.sh [BUILD_DIR] [WORKERS] [CASES]   (default build/, 2, all)
# CASES: comma-separated case names. MINIFYD_PYTHON: the Python with torch (default /usr/bin/python3).
# FUNCTORCH_MODES: the functorch minifier's modes to run (default inprocess,isolated; the isolated one
# takes about 25 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
workers=${2:-2}
selected=${3:-all}
python=${MINIFYD_PYTHON:-/usr/bin/python3}
functorch_modes=${FUNCTORCH_MODES:-inprocess,isolated}
minify="$build/daemon/minify"
faulty="$(realpath "$build/tests/plugins/libminifyd_faulty_backend.so")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ $selected == all ]]; then
  mapfile -t names < <("$python" tests/run/cases.py --list)
else
  IFS=, read -r -a names <<<"$selected"
fi

mkdir -p "$work/graphs" "$work/minify"
for name in "${names[@]}"; do
  "$python" tests/run/cases.py --export "$name" --out "$work/graphs/$name" >/dev/null
  mapfile -t args < <("$python" tests/run/cases.py --args "$name" --faulty "$faulty")
  echo "minify run: $name" >&2
  code=0
  "$minify" run "$work/graphs/$name" --out "$work/minify/$name.out" "${args[@]}" --workers "$workers" --json \
    >"$work/minify/$name.json" 2>"$work/minify/$name.stderr" || code=$?
  echo "$code" >"$work/minify/$name.exit"
  if [[ $code != 0 && $code != 4 ]]; then
    echo "minify run $name: exit $code" >&2
    tail -n 20 "$work/minify/$name.stderr" >&2
  fi
done

echo "functorch minifier: ${names[*]}" >&2
(IFS=,; "$python" bench/functorch_minifier.py --cases "${names[*]}" --modes "$functorch_modes") >"$work/functorch.jsonl"

"$python" bench/comparison_table.py --functorch "$work/functorch.jsonl" --minify-dir "$work/minify" --workers "$workers"
