#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The sweep behind strategy::automatic (perf/bench_bulk.cpp): every strategy forced, and automatic, on
# the training inputs or on the held-out ones; then the tree is fitted (train) or scored (heldout).
#   BACKEND=cuda bash perf/bulk_sweep.sh train   OUT.json   # a GPU node: then python3 perf/fit_tree.py OUT.json --family hopper --out algorithms/choice/models/hopper.inc
#   BACKEND=cuda bash perf/bulk_sweep.sh train_items OUT.json  # the training distributions with a quarter of the keys (log2_items)
#   BACKEND=cuda bash perf/bulk_sweep.sh train_coo OUT.json    # coo_rows (sorted sparse-matrix rows), both key counts
#   BACKEND=cuda bash perf/bulk_sweep.sh train_window OUT.json # window16, window64 (keys that crowd table lines), tables larger than a block
#   BACKEND=cuda bash perf/bulk_sweep.sh train_sorted OUT.json # sorted keys, both key counts (as train_coo)
#   CALM_BULK_LIST=FILE BACKEND=cuda bash perf/bulk_sweep.sh list OUT.json  # the inputs FILE names (fit_tree.py --list-fitting or --list-larger writes one);
#                                                          # CALM_BULK_FILTER=... narrows the cases (e.g. '/privatize_adaptive/')
#   BACKEND=cuda bash perf/bulk_sweep.sh path OUT.json         # the parts of automatic's sampled path, timed apart
#   BACKEND=cuda bash perf/bulk_sweep.sh heldout OUT.json   # after rebuilding with the new tree: python3 perf/eval_tree.py OUT.json
#   bash perf/bulk_sweep.sh train OUT.json                  # the host (OpenMP), fitted with --family host
# CALM_DEPS_ROOT, CALM_BUILD_ROOT and CALM_JOBS as for perf/run.sh; CALM_BENCH_LOG2_KEYS sets the key count (the
# sweep uses half of it, and a quarter and all of it for held-out sizes).
set -euo pipefail
cd "$(dirname "$0")/.."
set_=${1:?usage: bulk_sweep.sh train|train_items|train_coo|train_window|train_sorted|heldout|path|list OUT.json}
out=${2:?usage: bulk_sweep.sh train|train_items|train_coo|train_window|train_sorted|heldout|path|list OUT.json}
names=${set_%%_*}  # train_items, train_coo, train_window and train_sorted register their inputs as bulk/train/...
[ "$set_" = list ] && names='[^/]+'  # a list names each input's set
backend=${BACKEND:-openmp}
root=${CALM_BUILD_ROOT:-build}
jobs=${CALM_JOBS:-$(nproc)}
if [ -z "${CALM_DEPS_ROOT:-}" ]; then bash cmake/install_deps.sh base perf; fi
extra=()
[ -n "${CALM_DEPS_ROOT:-}" ] && extra+=(-DCALM_DEPS_ROOT="$CALM_DEPS_ROOT")
[ "$backend" = hip ] && extra+=(-DCMAKE_CXX_COMPILER=clang++-15)
cmake -S . -B "$root/perf-$backend" -G Ninja -DBACKEND="$backend" -DCMAKE_BUILD_TYPE=Release -DCALM_BUILD_TESTS=OFF "${extra[@]}" > /dev/null
cmake --build "$root/perf-$backend" -j "$jobs" --target calm_bench
CALM_BULK_SET=$set_ "$root/perf-$backend/perf/calm_bench" --benchmark_filter="^bulk/$names/.*${CALM_BULK_FILTER:-}" --benchmark_out="$out" \
  --benchmark_out_format=json --benchmark_format=console 2>&1 | awk 'NR % 50 == 1 { print; fflush() }'
echo "bulk_sweep: $set_ written to $out"
