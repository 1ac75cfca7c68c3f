// SPDX-License-Identifier: Apache-2.0
// The set-up cost s of inequalities (1) and (2) of 000 section 3.1, measured on this device: the time
// of scan_reduce's, vote_reduce's and peer_reduce's grouping (boundary checks, pre-check ballot; sampling and vote; match_any)
// in units of one step of the local reduction. Results go into each backend's *_setup_steps constants.
#include "bench_common.hpp"

namespace calm_bench {
namespace {

enum class probe { loop, step, scan_setup, vote_setup, peer_setup };

// Every lane runs `rounds` dependent rounds of the probed work on register values; the result is
// stored so nothing is optimized away.
template <probe P>
void run_probe(index_t lanes, int rounds, std::uint32_t* sink) {
  std::uint32_t* table = sink;  // only its address is used, as a key base
  backend::for_each_index(lanes, CALM_LAMBDA(auto const& w, auto i) {
    std::uint32_t* const base = table;  // first captured outside the constexpr-if (nvcc needs that)
    auto x = calm::map([](index_t j) { return static_cast<std::uint32_t>(j * 2654435761u); }, i);
    auto done = calm::map([](std::uint32_t v) { return (v & 3u) == 0; }, x);
    for (int r = 0; r < rounds; ++r) {
      x = x * 1664525u + 1013904223u;  // every probe: a step the compiler cannot fold across rounds
      if constexpr (P == probe::step) {  // one step of Alg. 1's segmented reduction
        auto const t = calm::shuffle_up(w, x, 1 + (r & 3));
        auto const f = calm::shuffle_up(w, done, 1 + (r & 3));
        x = calm::select(done, x, x + t);
        done = calm::select(done, done, f);
      } else if constexpr (P == probe::scan_setup) {
        auto const g = calm::scan_reduce{}.group(w, base + (x & 7u));
        x = x + static_cast<std::uint32_t>(calm::popc(w, g.heads) + g.reduce);
      } else if constexpr (P == probe::vote_setup) {
        auto const g = calm::vote_reduce<1>{static_cast<std::uint32_t>(r)}.group(w, base + (x & 7u));
        x = x + calm::map([](int c) { return static_cast<std::uint32_t>(c); }, calm::popc(w, g.peers)) + static_cast<std::uint32_t>(g.merged);
      } else if constexpr (P == probe::peer_setup) {  // match_any (native on sm_70+) or its ballot loop
        auto const g = calm::peer_reduce{}.group(w, base + (x & 7u));
        x = x + calm::map([](int c) { return static_cast<std::uint32_t>(c); }, calm::popc(w, g.peers)) + static_cast<std::uint32_t>(g.merged);
      }
    }
    calm::store(w, sink, i, x);
  });
}

void setup_cost_case(benchmark::State& state) {
  index_t const lanes = std::string(backend::backend_name) == "openmp" ? index_t(1) << 12 : index_t(1) << 20;
  int const rounds = 4096;
  backend::device_buffer<std::uint32_t> sink(lanes);
  double t[5] = {0, 0, 0, 0, 0};
  std::uint32_t* out = sink.data();
  void (*probes[5])(index_t, int, std::uint32_t*) = {run_probe<probe::loop>, run_probe<probe::step>, run_probe<probe::scan_setup>,
                                                     run_probe<probe::vote_setup>, run_probe<probe::peer_setup>};
  for (auto* f : probes) f(lanes, 16, out);  // warm up
  for (auto _ : state) {
    for (int p = 0; p < 5; ++p) t[p] += time_device([&] { probes[p](lanes, rounds, out); });
    state.SetIterationTime(t[0]);
  }
  double const step = t[1] - t[0];
  state.counters["step_ns"] = 1e9 * step / state.iterations() / rounds / (lanes / double(backend::default_warp::size));
  state.counters["scan_reduce_setup_steps"] = (t[2] - t[0]) / step;
  state.counters["vote_reduce_setup_steps"] = (t[3] - t[0]) / step;
  state.counters["peer_reduce_setup_steps"] = (t[4] - t[0]) / step;
}

[[maybe_unused]] bool const registered = [] {
  benchmark::RegisterBenchmark("setup_cost", setup_cost_case)->UseManualTime()->Iterations(5);
  return true;
}();

}  // namespace
}  // namespace calm_bench
