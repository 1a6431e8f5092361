#!/usr/bin/env bash
# Run HERE (Debian 12, with package access): downloads the Debian packages the build needs that
# the GPU machine (Ubuntu 24.04, PyTorch 2.x, no package access) lacks, into .gpu-debs/, which the
# device run carries (it is git-ignored, so the run names it in `carry`). scripts/gpu_build.sh unpacks them there into a prefix, never into /.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(
  nlohmann-json3-dev libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 libcli11-dev catch2
  libboost1.74-dev libboost-filesystem1.74-dev libboost-filesystem1.74.0
  libboost-system1.74-dev libboost-system1.74.0 libboost-atomic1.74-dev libboost-atomic1.74.0
  libssl-dev libssl3 libsqlite3-dev libsqlite3-0 libpq-dev libpq5 libldap-2.5-0
  libre2-dev libre2-9
)
mkdir -p .gpu-debs
cd .gpu-debs
rm -f ./*.deb
apt-get download "${packages[@]}"
du -sh .
