#!/usr/bin/env bash
# Run THERE, on the GPU machine, from the repository root with .gpu-debs/ carried
# (scripts/fetch_gpu_debs.sh made it): unpacks the Debian packages into a prefix (never into /),
# configures against the LibTorch of the machine's PyTorch (torch.utils.cmake_prefix_path),
# builds, and runs the tests given as ctest arguments (default: the whole suite, the extended tests
# that CI leaves out for time included: tests/CMakeLists.txt).
#   scripts/gpu_build.sh [ctest args...]      e.g. scripts/gpu_build.sh -L 'unit|worker|e2e'
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${MINIFYD_DEB_PREFIX:-/tmp/minifyd-debs}
build=${BUILD_DIR:-build-gpu}
python=${MINIFYD_PYTHON:-python3}
mkdir -p "$prefix"
for deb in .gpu-debs/*.deb; do dpkg -x "$deb" "$prefix"; done
multiarch="$prefix/usr/lib/x86_64-linux-gnu"
torch_prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)')
export LD_LIBRARY_PATH="$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cmake -S . -B "$build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$torch_prefix;$prefix/usr;$multiarch/cmake;$prefix/usr/share/cmake;$prefix/usr/lib/cmake" \
  -DOPENSSL_ROOT_DIR="$prefix/usr" -DOPENSSL_INCLUDE_DIR="$prefix/usr/include" \
  -DMINIFYD_PYTHON="$(command -v "$python")" -DMINIFYD_TORCH2_PYTHON="$(command -v "$python")" \
  -DMINIFYD_EXTENDED_TESTS=ON
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure -j 8 "$@"
