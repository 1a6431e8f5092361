#!/usr/bin/env bash
# Exports the benchmark graphs and measures per-query latency of a warm minifyd worker on each,
# side by side with a fresh Python process per query (PyTorch's isolated minifier).
#   bench/run_query_latency.sh [BUILD_DIR]   (default build/)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
python=${MINIFYD_PYTHON:-/usr/bin/python3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$python" scripts/export_fx.py bench/examples/ten_nodes.py --out "$out/ten_nodes" >/dev/null
"$python" scripts/export_fx.py scripts/examples/resnet18.py --out "$out/resnet18" >/dev/null
"$build/bench/minifyd_bench_query_latency" "$out/ten_nodes" --backend eager -n 2000
"$build/bench/minifyd_bench_query_latency" "$out/resnet18" --backend eager -n 50
"$python" bench/fresh_python_query.py "$out/ten_nodes" -n 5
"$python" bench/fresh_python_query.py "$out/resnet18" -n 5
