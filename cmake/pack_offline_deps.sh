#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Pack what a CUDA build of calm's tests and perf suite needs beyond the CUDA toolkit (Catch2 and
# Google Benchmark, from Debian's packages) into a folder, for GPU nodes without network:
#   cmake/pack_offline_deps.sh .deps            # here, with network
#   cmake -S . -B build-cuda -DBACKEND=cuda -DCALM_DEPS_ROOT=$PWD/.deps   # on the node
# The folder holds the packages unpacked (usr/include, usr/lib, their CMake configs); nothing is built.
set -euo pipefail
dest=$(realpath -m "${1:-.deps}")
mkdir -p "$dest/debs"
cd "$dest/debs"
pkgs="catch2 libbenchmark-dev libbenchmark1debian"
if ! apt-get download $pkgs >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -q >/dev/null
  apt-get download $pkgs
fi
for d in *.deb; do dpkg -x "$d" "$dest"; done
echo "calm: packed $(ls *.deb | tr '\n' ' ')into $dest" >&2
