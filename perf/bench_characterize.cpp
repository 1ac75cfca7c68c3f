// SPDX-License-Identifier: Apache-2.0
// Device characterization after section 2 of 001 (Gomez-Luna et al.) on current hardware: throughput
// and latency of block-local and device atomic adds under n-way position conflicts inside a warp and
// across warps, bank conflicts (distinct addresses n words apart) and lock aliasing (1,024 words
// apart, the Fermi lock-table size). Names: characterize/<scope>/<pattern>/<n>/<throughput|latency>.
#include "bench_common.hpp"

#include <type_traits>

namespace calm_bench {
namespace {

enum class pattern { intra_warp, inter_warp, stride };
char const* to_string(pattern p) { return p == pattern::intra_warp ? "intra_warp" : p == pattern::inter_warp ? "inter_warp" : "stride"; }

constexpr int probe_threads = 256;

/// Every lane adds 1 to its slot `iters` times, at Scope. intra_warp: n lanes of a warp share a
/// slot (n-way position conflicts inside the warp, none between warps); inter_warp: each lane its own
/// slot, n warps of the block share them (conflicts between warps only); stride: lane l at word l * n
/// (distinct addresses; n = 32 puts every lane in one bank). Fetch: each update waits for the one before
/// it (latency); otherwise the updates are independent (throughput).
template <class Scope, bool Fetch>
struct atomic_probe {
  std::uint32_t* global;  // device scope: block b uses words [b * span, (b + 1) * span)
  index_t span;
  pattern kind;
  int n, iters;
  std::uint32_t* sink;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    constexpr bool shared = std::is_same<Scope, calm::scope::block_local>::value;
    std::uint32_t* const base = shared ? blk.template scratch<std::uint32_t>() : global + blk.index() * span;
    index_t const words = span;
    int const threads = blk.threads();
    if (shared) {
      for (index_t b = 0; b < words; b += threads)
        blk.for_each_warp([&](auto const& w, auto t) {
          auto const e = calm::map([b](int tt) { return b + tt; }, t);
          calm::when(w, e < words, [&](auto const& u) { calm::store(u, base, e, 0u); });
        });
      blk.sync();
    }
    pattern const k = kind;
    int const nn = n, rounds = iters;
    std::uint32_t* const out = sink;
    blk.for_each_warp([&](auto const& w, auto t) {
      int const ws = std::decay_t<decltype(w)>::size;
      auto const slot = calm::map(
          [k, nn, ws](int tt) -> index_t {
            int const lane = tt % ws, warp = tt / ws;
            if (k == pattern::intra_warp) return static_cast<index_t>(warp) * ws + lane / nn;
            if (k == pattern::inter_warp) return static_cast<index_t>(warp / nn) * ws + lane;
            return static_cast<index_t>(lane) * nn;
          },
          t);
      if constexpr (Fetch) {
        auto v = calm::map([](int) { return 0u; }, t);
        for (int r = 0; r < rounds; ++r) {  // the next address depends on the value fetched (it is never all ones)
          auto const at = base + (slot + calm::map([](std::uint32_t x) { return static_cast<index_t>(x == 0xffffffffu); }, v));
          v = calm::atomic_fetch_update(w, calm::plus{}, Scope{}, at, 1u);
        }
        calm::store(w, out, t, v);
      } else {
        auto const at = base + slot;
        for (int r = 0; r < rounds; ++r) calm::atomic_update(w, calm::plus{}, Scope{}, at, 1u);
      }
    });
  }
};

bool on_host() { return std::string(backend::backend_name) == "openmp"; }

template <class Scope, bool Fetch>
void probe_case(benchmark::State& state, pattern kind, int n) {
  calm::default_exec const ex{};
  index_t const blocks = Fetch ? 1 : ex.resident_blocks_hint();
  int const threads = Fetch ? backend::default_warp::size : probe_threads;
  int const iters = on_host() ? 64 : (Fetch ? 8192 : 4096);  // GPU kernels of 0.1 ms and more: launch costs a few us
  index_t const span = std::max<index_t>(static_cast<index_t>(threads) + 32, static_cast<index_t>(backend::default_warp::size) * n + 32);
  constexpr bool shared = std::is_same<Scope, calm::scope::block_local>::value;
  backend::device_buffer<std::uint32_t> table(shared ? 1 : static_cast<std::size_t>(span * blocks)), sink(static_cast<std::size_t>(threads));
  table.fill_bytes(0);
  atomic_probe<Scope, Fetch> const p{table.data(), span, kind, n, iters, sink.data()};
  std::size_t const bytes = shared ? static_cast<std::size_t>(span) * 4 : 0;
  auto run = [&] { ex.for_each_block(blocks, threads, bytes, p); };
  run();
  for (auto _ : state) state.SetIterationTime(time_device(run));
  double const updates = static_cast<double>(blocks) * threads * iters;
  if (Fetch) state.counters["ns_per_update"] = benchmark::Counter(iters * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  else state.counters["Gupdates_per_s"] = benchmark::Counter(updates * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

template <class F, class... A>
void add(std::string const& name, F f, A... a) {
  benchmark::RegisterBenchmark(name.c_str(), f, a...)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(0.02);
}

[[maybe_unused]] bool const registered = [] {
  for (pattern k : {pattern::intra_warp, pattern::inter_warp, pattern::stride}) {
    std::vector<int> ns = k == pattern::stride ? std::vector<int>{1, 2, 4, 8, 16, 32, 33, 1024} : std::vector<int>{1, 2, 4, 8, 16, 32};
    for (int n : ns) {
      if (k == pattern::inter_warp && n > probe_threads / backend::default_warp::size) continue;
      if (k == pattern::intra_warp && n > backend::default_warp::size) continue;
      std::string const tail = std::string("/") + to_string(k) + "/" + std::to_string(n);
      add("characterize/shared" + tail + "/throughput", probe_case<calm::scope::block_local, false>, k, n);
      if (k != pattern::inter_warp) add("characterize/shared" + tail + "/latency", probe_case<calm::scope::block_local, true>, k, n);
      if (k != pattern::stride || n <= 32) {
        add("characterize/global" + tail + "/throughput", probe_case<calm::scope::device, false>, k, n);
        if (k != pattern::inter_warp) add("characterize/global" + tail + "/latency", probe_case<calm::scope::device, true>, k, n);
      }
    }
  }
  return true;
}();

}  // namespace
}  // namespace calm_bench
