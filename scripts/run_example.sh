#!/usr/bin/env bash
# The last step of README command (A): exports the bundled example (torchvision's resnet18, 273
# aten nodes) and runs minifyd on it: validation, an isolated query under eager, the same query
# under a backend that segfaults on relu_ (contained, reported as a verdict), and a standalone repro.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
out=${1:-example-out}
python=${MINIFYD_PYTHON:-/usr/bin/python3}
minify="$build_dir/daemon/minify"
faulty="$build_dir/tests/plugins/libminifyd_faulty_backend.so"
graph="$out/resnet18"

step() { printf '\n== %s\n' "$*"; }

step "export scripts/examples/resnet18.py with make_fx"
rm -rf "$graph"
"$python" scripts/export_fx.py scripts/examples/resnet18.py --out "$graph"

step "minify validate --check-store"
"$minify" validate --check-store "$graph"

step "minify query --backend eager (the reference: passes)"
"$minify" query "$graph" --backend eager

if [ -f "$faulty" ]; then
  step "minify query with a backend that segfaults on aten::relu_ (resnet18 uses in-place relu; the crash is contained)"
  status=0
  "$minify" query "$graph" --backend "plugin:$faulty" --backend-opt op=aten::relu_ --backend-opt fault=segfault || status=$?
  [ "$status" -eq 1 ] || { echo "expected exit code 1 (fails), got $status" >&2; exit 1; }
fi

step "standalone repro"
"$python" scripts/repro_from_graph.py "$graph"
"$python" "$graph/repro.py"
printf '\nThe example graph is in %s; its standalone repro is %s\n' "$graph" "$graph/repro.py"
