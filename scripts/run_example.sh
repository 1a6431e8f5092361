#!/usr/bin/env bash
# The last step of README command (A): exports the bundled example (torchvision's resnet18, 273
# aten nodes), checks it, and minifies it end to end against a backend that segfaults on relu_:
# every crash is contained in a sandboxed worker, and the result is a few-node graph with a repro.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
out=${1:-example-out}
python=${MINIFYD_PYTHON:-/usr/bin/python3}
minify="$build_dir/daemon/minify"
faulty="$build_dir/tests/plugins/libminifyd_faulty_backend.so"
graph="$out/resnet18"
minimized="$out/resnet18-minimized"

step() { printf '\n== %s\n' "$*"; }

step "export scripts/examples/resnet18.py with make_fx"
rm -rf "$graph" "$minimized"
"$python" scripts/export_fx.py scripts/examples/resnet18.py --out "$graph"

step "minify validate --check-store"
"$minify" validate --check-store "$graph"

step "minify query --backend eager (the reference: passes)"
"$minify" query "$graph" --backend eager

step "minify run with a backend that segfaults on aten::relu_ (resnet18 uses in-place relu)"
"$minify" run "$graph" --out "$minimized" --backend "plugin:$faulty" \
  --backend-opt op=aten::relu_ --backend-opt fault=segfault

step "the repro reproduces the crash (exit 1: it fails)"
status=0
"$python" "$minimized/repro.py" || status=$?
[ "$status" -eq 1 ] || { echo "expected repro.py to exit 1 (fails), got $status" >&2; exit 1; }

printf '\nThe minimized graph is in %s; its repro is %s and its report %s\n' \
  "$minimized" "$minimized/repro.py" "$minimized/report.md"
