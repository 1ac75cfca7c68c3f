#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install the Debian packages calm's builds need, only those missing. Usage:
#   cmake/install_deps.sh [base] [test] [perf] [hip] [kokkos] [python] [plot] [threads] [docs] [mpi]
# base: cmake, a C++ compiler, ninja; test: Catch2; perf: Google Benchmark; hip: hipcc + clang-15 +
# ROCm headers, device libraries and rocPRIM (the HIP peer of the perf suite); kokkos: Debian's Kokkos (Serial); python: pybind11, numpy, pytest and torch (CPU) for the Python module; plot: matplotlib (perf/plot.py);
# threads: clang-15 and LLVM's libomp (the ThreadSanitizer build: CALM_TSAN); docs: Doxygen (the docs target);
# mpi: OpenMPI (calm/mpi.hpp: calm::mpi, its tests under mpirun and calm_bench_mpi).
# Runs apt-get as root (or sudo).
set -euo pipefail

declare -A groups=(
  [base]="cmake g++ ninja-build"
  [test]="catch2"
  [perf]="libbenchmark-dev"
  [hip]="hipcc clang-15 libamdhip64-dev rocm-device-libs librocprim-dev"
  [kokkos]="libtrilinos-kokkos-dev"
  [python]="pybind11-dev python3-dev python3-numpy python3-pytest python3-torch"
  [plot]="python3-matplotlib"
  [threads]="clang-15 libomp-15-dev"
  [docs]="doxygen"
  [mpi]="libopenmpi-dev openmpi-bin"
)
[ $# -eq 0 ] && set -- base test perf
want=()
for g in "$@"; do
  for p in ${groups[$g]:?unknown group $g}; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || want+=("$p")
  done
done
[ ${#want[@]} -eq 0 ] && exit 0
echo "calm: installing ${want[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q >&2
$sudo apt-get install -y -q --no-install-recommends "${want[@]}" >&2
