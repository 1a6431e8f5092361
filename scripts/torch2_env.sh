#!/usr/bin/env bash
# A PyTorch 2.x environment with Inductor on a Debian 12 machine, whose own torch (1.13) has no
# torch.compile. Builds, once, a Debian 13 (trixie) root with python3-torch 2.x and the compiler and
# headers Inductor's C++ backend needs, then prints the path of a `python3` launcher that runs inside
# that root with the host's own directories (the repository, /tmp, /work, /home, ...) visible at the
# same paths, so it can be given as `--python` to minify and minifyd.
#
#   scripts/torch2_env.sh            build the root if needed, print the launcher's path
#   scripts/torch2_env.sh --path     print where the launcher is (or will be) without building
#
# The root lives in $MINIFYD_TORCH2_ROOT (default /var/cache/minifyd/torch2-trixie); building it takes
# about 3 minutes from Debian's mirror and needs root (debootstrap, chroot and mount namespaces).
# Idempotent: a root that is complete (its marker file written last) is reused as it is.
set -euo pipefail

root=${MINIFYD_TORCH2_ROOT:-/var/cache/minifyd/torch2-trixie}
launcher="$root.python3"
marker="$root/.minifyd-torch2-complete"
packages=python3-torch,libtorch-dev,g++,python3-dev,python-is-python3,python3-torchvision,python3-numpy

if [ "${1:-}" = "--path" ]; then
  echo "$launcher"
  exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then as_root=(sudo); fi

if [ ! -f "$marker" ]; then
  if ! command -v debootstrap >/dev/null; then
    echo "torch2_env: debootstrap is not installed (scripts/install_deps.sh installs it)" >&2
    exit 1
  fi
  echo "torch2_env: building a Debian 13 root with PyTorch 2.x in $root (about 3 minutes)" >&2
  "${as_root[@]}" rm -rf "$root"
  "${as_root[@]}" mkdir -p "$(dirname "$root")"
  if ! "${as_root[@]}" debootstrap --variant=minbase --include="$packages" trixie "$root" >"$root.log" 2>&1; then
    echo "torch2_env: debootstrap failed; its log: $root.log" >&2
    tail -n 20 "$root.log" >&2
    exit 1
  fi
  version=$("${as_root[@]}" chroot "$root" python3 -c 'import torch, torch._inductor; print(torch.__version__)')
  echo "torch2_env: torch $version with Inductor in $root" >&2
  "${as_root[@]}" touch "$marker"
fi

# The launcher: a mount namespace of its own (the binds vanish with the process), the host's
# non-system top-level directories bound at their own paths, then chroot into the root with the
# same working directory. Each step execs the next, so the launcher's pid is python's: the
# coordinator's process group, parent-death signal and signals reach python itself.
tmp_launcher=$(mktemp "$launcher.XXXXXX")
cat >"$tmp_launcher" <<EOF
#!/bin/sh
# Runs python3 of the PyTorch 2.x root $root (written by scripts/torch2_env.sh).
exec unshare --mount --propagation private /bin/sh -c '
  root=\$1; shift
  for dir in /*; do
    case "\$dir" in
      /bin|/boot|/etc|/lib|/lib32|/lib64|/libx32|/sbin|/usr|/var|/run|/lost+found) continue ;;
      /dev|/proc|/sys) mount --rbind "\$dir" "\$root\$dir" ;;
      *) [ -d "\$dir" ] && [ ! -L "\$dir" ] && mkdir -p "\$root\$dir" && mount --rbind "\$dir" "\$root\$dir" ;;
    esac
  done
  mkdir -p "\$root/var/tmp" && mount --bind /var/tmp "\$root/var/tmp"
  # The root is a system of its own: its programs (python, g++), not those on the host PATH.
  unset LD_LIBRARY_PATH
  export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  exec chroot "\$root" /bin/sh -c "cd \"\\\$1\" 2>/dev/null || cd /; shift; exec /usr/bin/python3 \"\\\$@\"" sh "\$PWD" "\$@"
' sh "$root" "\$@"
EOF
chmod 755 "$tmp_launcher"
mv -f "$tmp_launcher" "$launcher"
echo "$launcher"
