#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The test command (README.md, and what .ci/run calls). On a fresh Debian machine it installs what is
# missing, then:
#   1. host (OpenMP) build: the conformance suite for W = 64 (the warp layer also for W = 8 and 16),
#      the host-only tests, the MPI tables' tests (mpirun, 2 and 3 ranks), the Kokkos tests (Debian's
#      Kokkos, Serial), the install + find_package test,
#      the Python package's tests (pytest, numpy and torch CPU arrays), the perf suite compiled
#      without optimization (a compile-check: perf/run.sh builds its own), and the API docs (Doxygen);
#   2. the conformance suite for W = 32 under AddressSanitizer and UndefinedBehaviorSanitizer (-Og, line
#      tables only: -g1; the largest test matrices run a third to a half of their combinations there,
#      every pair of values of two axes still met: runs_in_this_build in tests/support/harness.hpp; the bulk
#      fuzz test for CALM_FUZZ_SECONDS, 60 here, 10 in the other runs), and
#      the thread tests (tests/host/threads.cpp) under ThreadSanitizer with clang++-15 and LLVM's libomp;
#   3. CUDA compile-check of the library and its tests with nvcc for compute_90 (PTX; no GPU needed; the
#      GPU node builds, assembles and runs them: tests/run_gpu.sh);
#   4. HIP compile-check of the suite with clang++-15: gfx90a (wave64) to machine code, gfx1030 (wave32)
#      to LLVM IR (CALM_HIP_IR_ARCHITECTURES).
# The compile-checks build nothing that runs here, so they trade optimization for time (nvcc: host code
# and cicc at -O0, no ptxas; clang: HIP at -O0); every template, device function and kernel is still
# compiled for every target.
# Each step prints its minutes. A clean run on the 2-core machine took (minutes) 1: 6.3 (each full conformance suite
# runs as two halves side by side), 2: 8.8 (the W = 32 suite under ASan with a minute of fuzzing, the thread tests'
# TSan build), 3: 2.7, 4: 2.8 (20.5 in all, dependencies installed); CI's limit is 90, the budget 35.
# Build trees go to build/ (CALM_BUILD_ROOT overrides). CALM_JOBS sets the parallel jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${CALM_BUILD_ROOT:-build}
jobs=${CALM_JOBS:-$(nproc)}
bash cmake/install_deps.sh base test perf hip kokkos python threads docs mpi
# the Python that has Debian's numpy and torch (a PATH python3 of pyenv or a venv may lack them)
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3)

passed=0 failed=0
run_ctest() {  # ctest in $1; adds its counts to the totals
  local log rc=0
  log=$(mktemp)
  (cd "$1" && ctest --output-on-failure -j "$jobs") 2>&1 | tee "$log" || rc=$?
  local line
  line=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$log" | tail -1 || true)
  if [ -n "$line" ]; then
    local total fail
    total=$(echo "$line" | sed -E 's/.*out of ([0-9]+).*/\1/')
    fail=$(echo "$line" | sed -E 's/.*tests passed, ([0-9]+) tests? failed.*/\1/')
    passed=$((passed + total - fail)); failed=$((failed + fail))
  else
    failed=$((failed + 1))
  fi
  rm -f "$log"
  return $rc
}

step_start=$SECONDS
step_done() { echo "== step $1 took $(( (SECONDS - step_start) / 60 )) min $(( (SECONDS - step_start) % 60 )) s"; step_start=$SECONDS; }

echo "== 1. host build and tests (OpenMP backend)"
cmake -S . -B "$root/openmp" -G Ninja -DBACKEND=openmp -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DCALM_PERF_COMPILE_CHECK=ON \
  -DCALM_PYTHON=ON -DPython3_EXECUTABLE="$python"
cmake --build "$root/openmp" -j "$jobs"
status=0
run_ctest "$root/openmp" || status=1
echo "   the API docs (Doxygen; an undocumented public entity fails them)"
cmake --build "$root/openmp" --target docs && passed=$((passed + 1)) || { failed=$((failed + 1)); status=1; }
step_done 1

echo "== 2. host tests (W = 32) under AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B "$root/sanitize" -G Ninja -DBACKEND=openmp -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-Og -g1 -DNDEBUG" \
  -DCALM_SANITIZE=ON -DCALM_BUILD_PERF=OFF
cmake --build "$root/sanitize" -j "$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 CALM_FUZZ_SECONDS=${CALM_FUZZ_SECONDS:-60} run_ctest "$root/sanitize" || status=1
echo "   ThreadSanitizer: the thread tests (clang++-15 with LLVM's libomp and its Archer tool)"
cmake -S . -B "$root/tsan" -G Ninja -DBACKEND=openmp -DCMAKE_CXX_COMPILER=clang++-15 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCALM_TSAN=ON -DCALM_BUILD_PERF=OFF
cmake --build "$root/tsan" -j "$jobs"
run_ctest "$root/tsan" || status=1
step_done 2

echo "== 3. CUDA compile-check (nvcc, sm_90; library and tests)"
nvcc=$(command -v nvcc || true)
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
if [ -n "$nvcc" ]; then
  cmake -S . -B "$root/cuda" -G Ninja -DBACKEND=cuda -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES=90-virtual -DCMAKE_CUDA_FLAGS_RELEASE="-O0 -Xcicc -O0 -DNDEBUG" -DCALM_BUILD_PERF=OFF
  cmake --build "$root/cuda" -j "$jobs" && passed=$((passed + 1)) || { failed=$((failed + 1)); status=1; }
else
  echo "calm: no nvcc on this machine (PATH or /usr/local/cuda/bin): CUDA compile-check not run" >&2
  failed=$((failed + 1)); status=1
fi
step_done 3

echo "== 4. HIP compile-check (clang++-15 -x hip, gfx90a + gfx1030)"
cmake -S . -B "$root/hip" -G Ninja -DBACKEND=hip -DCMAKE_CXX_COMPILER=clang++-15 -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O0 -DNDEBUG" -DCALM_HIP_ARCHITECTURES=gfx90a -DCALM_HIP_IR_ARCHITECTURES=gfx1030 \
  -DCALM_BUILD_PERF=OFF
cmake --build "$root/hip" -j "$jobs" && passed=$((passed + 1)) || { failed=$((failed + 1)); status=1; }
step_done 4

echo
echo "calm tests: $passed passed, $failed failed"
exit $status
