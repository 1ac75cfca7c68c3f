// SPDX-License-Identifier: Apache-2.0
// The device copy, reported in the table: the bandwidth every case is a fraction of.
#include "bench_common.hpp"

namespace calm_bench {
namespace {

void copy_case(benchmark::State& state) {
  // reported for the table: the same copy the fractions are taken against
  for (auto _ : state) state.SetIterationTime(2.0 * (std::size_t(1) << (log2_keys() + 2)) * 4 / copy_rate());
  report_bytes(state, 2.0 * (std::size_t(1) << (log2_keys() + 2)) * 4, static_cast<double>(std::size_t(1) << log2_keys()));  // items: 16-byte words
}

[[maybe_unused]] bool const registered = [] {
  benchmark::RegisterBenchmark("copy", copy_case)->UseManualTime()->Iterations(1);
  return true;
}();

}  // namespace
}  // namespace calm_bench
