#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job (README.md): build the perf suite for a backend (default openmp), run it, write the
# Google Benchmark JSON and print the table.
#   bash perf/run.sh                      # host, 2^24 keys, the short sweep (a few minutes on 2 cores)
#   CALM_SWEEP=full bash perf/run.sh      # every strategy, distribution and table size
#   BACKEND=cuda bash perf/run.sh         # on a GPU node (2^26 keys, full sweep); CALM_DEPS_ROOT=... offline,
#                                         # CALM_KOKKOS_ROOT=<Kokkos built with CUDA> for the ScatterView cases
# Extra arguments go to the benchmark binary (e.g. --benchmark_filter=histogram).
# The results are named by backend, device and date, beside the build: build/perf-<backend>/
# <backend>-<device>-<date>[-<CALM_PERF_TAG>].json, the table as .md, the plots as -<workload>.png
# (CALM_PERF_OUT=FILE.json names the JSON instead).
set -euo pipefail
case "${1:-}" in -h | --help)  # the header above, at once (nothing is built)
  sed -n '2,/^set -euo/p' "$0" | sed '$d; /SPDX-License-Identifier/d; s/^# \{0,1\}//'
  exit 0 ;;
esac
cd "$(dirname "$0")/.."
backend=${BACKEND:-openmp}
root=${CALM_BUILD_ROOT:-build}
jobs=${CALM_JOBS:-$(nproc)}
if [ -z "${CALM_DEPS_ROOT:-}" ]; then bash cmake/install_deps.sh base perf kokkos plot; fi
extra=()
[ -n "${CALM_DEPS_ROOT:-}" ] && extra+=(-DCALM_DEPS_ROOT="$CALM_DEPS_ROOT")
# a Kokkos for this backend adds calm::kokkos::ScatterView beside Kokkos's (Debian's Serial one on the host)
[ -n "${CALM_KOKKOS_ROOT:-}" ] && extra+=(-DKokkos_ROOT="$CALM_KOKKOS_ROOT")
[ "$backend" = hip ] && extra+=(-DCMAKE_CXX_COMPILER=clang++-15)
cmake -S . -B "$root/perf-$backend" -G Ninja -DBACKEND="$backend" -DCMAKE_BUILD_TYPE=Release -DCALM_BUILD_TESTS=OFF "${extra[@]}"
cmake --build "$root/perf-$backend" -j "$jobs" --target calm_bench
out=${CALM_PERF_OUT:-$root/perf-$backend/run.json}
sweep=${CALM_SWEEP:-$([ "$backend" = openmp ] && echo short || echo full)}
filter=()
# the short sweep: three distributions at 1, 256 and 65,536 bins, every strategy and peer, both
# workloads, the Kokkos ScatterViews, the global max, the bulk calls (automatic beside every strategy,
# perf/bench_bulk.cpp's demo set) and one input of each routine of perf/bench_workloads.cpp; the
# replication sweep, rsweep_*, only in the full one; on the host, calm beside the OpenMP loops (perf/bench_cpu.cpp)
[ "$sweep" = short ] && filter=(--benchmark_filter='^(copy|setup_cost|global_max|bulk/demo)|^(histogram|scatter_f32|kokkos_histogram|kokkos_scatter_f32)/.*/(uniform|runs32|halfhot)/(1|256|65536)(/|$)|^cpu/.*/(uniform|halfhot)/(1|256|65536|1048576)/|^(spmv/stencil2d|kmeans/d4/k128|sum_compacted/m1024|count_duplicates/uniform/65536)/')
bench="$root/perf-$backend/perf/calm_bench"
# the number of cases, for the progress line on stderr
CALM_BENCH_TOTAL=$("$bench" --benchmark_list_tests "${filter[@]}" "$@" | wc -l) \
  "$bench" --benchmark_out="$out" --benchmark_out_format=json --benchmark_min_time="${CALM_MIN_TIME:-0.2}" "${filter[@]}" "$@"
if [ -z "${CALM_PERF_OUT:-}" ]; then  # <backend>-<device>-<date>, from what the run recorded
  name=$(python3 - "$out" "${CALM_PERF_TAG:-}" <<'PY'
import json, re, sys
ctx = json.load(open(sys.argv[1]))["context"]
slug = lambda s: re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")
parts = [ctx.get("calm_backend", "unknown"), slug(ctx.get("calm_device", "unknown")), ctx.get("date", "")[:10]]
print("-".join(p for p in parts + [slug(sys.argv[2])] if p))
PY
)
  mv "$out" "$(dirname "$out")/$name.json"
  out="$(dirname "$out")/$name.json"
fi
echo
python3 perf/report.py "$out" --out "${out%.json}.md"
echo "results: $out, the table ${out%.json}.md"
# the plots beside the JSON (perf/plot.py), where a Python with matplotlib is found
for py in python3 /usr/bin/python3; do
  if "$py" -c 'import matplotlib' 2>/dev/null; then "$py" perf/plot.py "$out"; break; fi
done
