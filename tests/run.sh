#!/usr/bin/env bash
# The test command (README.md, and what .ci/run calls). On a fresh Debian machine it installs what is
# missing, then:
#   1. host (OpenMP) build: conformance suite for W = 8, 16, 32, 64, the Kokkos tests (Debian's Kokkos,
#      Serial), the install + find_package test,
#      and the perf suite compiled;
#   2. the host tests again under AddressSanitizer and UndefinedBehaviorSanitizer (at -O1, as ASan
#      advises; on one of its files it compiled in a quarter less time than at -O2; line tables only, -g1);
#   3. CUDA compile-check of the library and its tests with nvcc for sm_90 (no GPU needed; not the perf
#      suite, which the GPU node builds for every measurement: BACKEND=cuda bash perf/run.sh);
#   4. HIP compile-check of the suite for gfx90a (wave64) and gfx1030 (wave32) with clang++-15 (the
#      conformance suite and the library; not the perf suite, whose 15 CPU minutes for two targets took
#      this script past CI's 90-minute limit on a 2-core machine: BACKEND=hip bash perf/run.sh builds it).
# The compile-checks build nothing that runs here, so they trade optimization for time: nvcc compiles
# host code at -O0 and runs ptxas at -O1 (NVVM keeps its -O3; on strategy_privatize 62 s instead of 96),
# and clang compiles HIP at -O0 (67 s instead of 211, both targets); every template, device function and
# kernel is still compiled and assembled for every target. The GPU node builds Release (-O3).
# A clean run took 79 and 84.5 minutes on a 2-core machine with the CUDA perf suite in step 3, and
# 62 minutes without it (at eed0e20; 57 at a05111b; 55 at 72f2944; 63 at 3696fe4); at 8eb4f68 it ran
# past 90 (the bulk and workload tests at -O3 took 12 CPU minutes with nvcc and 14 and more with clang);
# with the compile-checks' levels above, 72.5 minutes at 31e7b8b: step 1 21, step 2 26, step 3 12, step 4
# 12 (bulk_scatter alone 9 and 8.5 CPU minutes in steps 3 and 4; tests/CMakeLists.txt now starts it first).
# At 690280b it took 87 minutes, too near the limit: step 2 now keeps line tables only (-g1, enough for
# the sanitizers' stack traces; a test file compiled in 89 s instead of 132 with -g), and step 1 compiles at
# -O2 (35 s instead of 44 at -O3; the perf suite it compiles is only checked here, perf/run.sh builds its own);
# bulk_scatter's tests are two units now (bulk_automatic.hpp holds strategy::automatic's), so that its 14
# CPU minutes under the sanitizers no longer hold one core while the other has finished.
# Build trees go to build/ (CALM_BUILD_ROOT overrides). CALM_JOBS sets the parallel jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${CALM_BUILD_ROOT:-build}
jobs=${CALM_JOBS:-$(nproc)}
bash cmake/install_deps.sh base test perf hip kokkos

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

echo "== 1. host build and tests (OpenMP backend)"
cmake -S . -B "$root/openmp" -G Ninja -DBACKEND=openmp -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG"
cmake --build "$root/openmp" -j "$jobs"
status=0
run_ctest "$root/openmp" || status=1

echo "== 2. host tests under AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B "$root/sanitize" -G Ninja -DBACKEND=openmp -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCALM_SANITIZE=ON -DCALM_BUILD_PERF=OFF
cmake --build "$root/sanitize" -j "$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 run_ctest "$root/sanitize" || status=1

echo "== 3. CUDA compile-check (nvcc, sm_90; library and tests)"
nvcc=$(command -v nvcc || true)
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
if [ -n "$nvcc" ]; then
  cmake -S . -B "$root/cuda" -G Ninja -DBACKEND=cuda -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_FLAGS_RELEASE="-O0 -Xptxas -O1 -DNDEBUG" -DCALM_BUILD_PERF=OFF
  cmake --build "$root/cuda" -j "$jobs" && passed=$((passed + 1)) || { failed=$((failed + 1)); status=1; }
else
  echo "calm: no nvcc on this machine (PATH or /usr/local/cuda/bin): CUDA compile-check not run" >&2
  failed=$((failed + 1)); status=1
fi

echo "== 4. HIP compile-check (clang++-15 -x hip, gfx90a + gfx1030)"
cmake -S . -B "$root/hip" -G Ninja -DBACKEND=hip -DCMAKE_CXX_COMPILER=clang++-15 -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O0 -DNDEBUG" -DCALM_HIP_ARCHITECTURES="gfx90a;gfx1030" -DCALM_BUILD_PERF=OFF
cmake --build "$root/hip" -j "$jobs" && passed=$((passed + 1)) || { failed=$((failed + 1)); status=1; }

echo
echo "calm tests: $passed passed, $failed failed"
exit $status
