#!/usr/bin/env bash
# Installs the Debian packages tcnla builds and tests with, when missing.
set -euo pipefail
pkgs=(build-essential gfortran pkg-config libblas-dev liblapack-dev libopenblas-dev libtmglib-dev libmpfr-dev libgmp-dev librandom123-dev python3-numpy python3-venv clang libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
