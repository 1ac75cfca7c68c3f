#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CUDA tests on a GPU node (no network needed): build with the CUDA backend, run the conformance
# suite, then run parts of it under compute-sanitizer (memcheck on everything per-index, racecheck on
# the block programs). Writes a log headed by device, date, commit and command.
#   cmake/pack_offline_deps.sh .deps                 # beforehand, on a machine with network
#   CALM_DEPS_ROOT=$PWD/.deps bash tests/run_gpu.sh [log]
# CALM_KOKKOS_ROOT=<a Kokkos installed with CUDA> also builds and runs the Kokkos tests (tests/kokkos);
# CALM_NCCL_ROOT=<NCCL's folder, with include/ and lib/> the NCCL tests (tests/nccl) where the toolkit has none.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${CALM_BUILD_ROOT:-build}
log=$(realpath -m "${1:-$root/cuda-tests.log}")
mkdir -p "$(dirname "$log")"
deps=()
[ -n "${CALM_DEPS_ROOT:-}" ] && deps=(-DCALM_DEPS_ROOT="$(realpath "$CALM_DEPS_ROOT")")
[ -n "${CALM_KOKKOS_ROOT:-}" ] && deps+=(-DKokkos_ROOT="$(realpath "$CALM_KOKKOS_ROOT")")
[ -n "${CALM_NCCL_ROOT:-}" ] && deps+=(-DCALM_NCCL_ROOT="$(realpath "$CALM_NCCL_ROOT")")
cmake -S . -B "$root/cuda" -G Ninja -DBACKEND=cuda -DCMAKE_BUILD_TYPE=Release "${deps[@]}" -DCALM_BUILD_PERF=OFF
cmake --build "$root/cuda" -j "${CALM_JOBS:-$(nproc)}"
{
  echo "device: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: ${CALM_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
  echo "command: CALM_DEPS_ROOT=...${CALM_KOKKOS_ROOT:+ CALM_KOKKOS_ROOT=...} bash tests/run_gpu.sh"
  echo "nvcc: $(nvcc --version | tail -1)"
  echo
} > "$log"
status=0
(cd "$root/cuda" && ctest --output-on-failure) 2>&1 | tee -a "$log" || status=1
bin="$root/cuda/tests/conformance_cuda"
if [ "${CALM_SANITIZER:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    filter='[lanes],[votes],[divergence],[launch],[example],[per_lane],[threshold]'
    [ $tool = racecheck ] && filter='[block],[block_scope],[privatize],[two_level],[hot_key],[partitioned]'
    echo "== compute-sanitizer --tool $tool $filter" | tee -a "$log"
    timeout "${CALM_SANITIZER_TIMEOUT:-300}" compute-sanitizer --tool $tool --error-exitcode 3 "$bin" "$filter" --rng-seed time 2>&1 \
      | tail -5 | tee -a "$log" || status=1
  done
  if [ -x "$root/cuda/tests/kokkos_tests" ]; then
    echo "== compute-sanitizer --tool memcheck kokkos_tests" | tee -a "$log"
    timeout "${CALM_SANITIZER_TIMEOUT:-300}" compute-sanitizer --tool memcheck --error-exitcode 3 "$root/cuda/tests/kokkos_tests" "ScatterView: ++*,ScatterView: reset*,[per_lane]" --rng-seed time 2>&1 \
      | tail -5 | tee -a "$log" || status=1
  fi
fi
echo "calm GPU tests: exit status $status" | tee -a "$log"
exit $status
