#!/usr/bin/env bash
# Installs every Debian 12 package minifyd needs to build, test and run its examples.
# Idempotent and non-interactive; elevates with sudo when not run as root.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libtorch-dev python3-torch python3-torchvision
  libboost-dev libboost-filesystem-dev
  nlohmann-json3-dev libspdlog-dev libcli11-dev catch2
  libssl-dev libsqlite3-dev
  libre2-dev  # --check-str: regexes in linear time (RE2)
  libpq-dev postgresql  # the PostgreSQL job queue; the tests start their own server
  graphviz
  python3-matplotlib  # minify analyze draws analysis.svg with it
  chromium  # the analyze tests look at analysis.svg in a real browser
  debootstrap  # scripts/torch2_env.sh: a Debian 13 root with PyTorch 2.x for the torch.compile backends
)

as_root=()
if [ "$(id -u)" -ne 0 ]; then as_root=(sudo); fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#packages[@]} packages already installed"
  exit 0
fi
echo "install_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
"${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
