#!/usr/bin/env bash
# Configures and builds minifyd into build/ (or $BUILD_DIR). Extra arguments go to cmake's
# configure step, e.g. -DCMAKE_PREFIX_PATH=<torch.utils.cmake_prefix_path> for another LibTorch.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja "$@"
cmake --build "$build_dir" -j "$(nproc)"
