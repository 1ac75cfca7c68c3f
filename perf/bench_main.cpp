// SPDX-License-Identifier: Apache-2.0
// The perf suite's main: names the device, measures its copy bandwidth once, then runs the cases.
#include "bench_common.hpp"

#if defined(CALM_BENCH_KOKKOS)
#include <Kokkos_Core.hpp>
#endif

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>

namespace calm_bench {

namespace {
double g_copy_rate = 0, g_read_rate = 0;
struct alignas(16) vec4 {
  std::uint32_t x[4];
};
}  // namespace

double copy_rate() { return g_copy_rate; }
double read_rate() { return g_read_rate; }

// A device-to-device copy with 16-byte elements over a buffer far larger than any cache.
void measure_copy_rate() {
  std::size_t const n = std::size_t(1) << (log2_keys() - 2 + 2);  // as many bytes as 4x the keys
  backend::device_buffer<vec4> src(n), dst(n);
  src.fill_bytes(0x5a);
  dst.fill_bytes(0);
  vec4 const* ps = src.data();
  vec4* pd = dst.data();
  auto copy = [&] {
    backend::for_each_index(static_cast<index_t>(n), CALM_LAMBDA(auto const& w, auto i) {
      calm::store(w, pd, i, calm::load(w, ps, i));
    });
  };
  copy();  // warm up
  std::vector<double> t;
  for (int r = 0; r < 7; ++r) t.push_back(time_device(copy));
  std::sort(t.begin(), t.end());
  g_copy_rate = 2.0 * n * sizeof(vec4) / t[t.size() / 2];
}

// Every thread streams 16-byte words with a grid stride over resident blocks and folds them into one
// word, stored only if it equals a value it never has (so the loads cannot be dropped).
void measure_read_rate() {
  std::size_t const n = std::size_t(1) << log2_keys();  // 16 bytes each (1 GiB on a GPU, 256 MiB on the host), a multiple of 1024 x 8
  backend::device_buffer<vec4> src(n);
  backend::device_buffer<std::uint32_t> sink(1);
  src.fill_bytes(0x5a);
  vec4 const* ps = src.data();
  std::uint32_t* out = sink.data();
  calm::default_exec ex;
  int threads = 256;
  auto read = [&] {
    ex.for_each_resident_block(static_cast<index_t>(n / threads), threads, threads * sizeof(std::uint32_t), CALM_LAMBDA(auto const& blk) {
      // the tile loop outside for_each_warp: on the host a block's warps then read each tile together
      std::uint32_t* acc = blk.template scratch<std::uint32_t>();
      blk.for_each_warp([&](auto const& w, auto t) { calm::store(w, acc, t, 0u); });
      constexpr int U = 8;  // loads in flight per thread
      index_t const tile_chunks = static_cast<index_t>(blk.threads()) * U;
      blk.for_each_tile(static_cast<index_t>(n) / tile_chunks, [&](index_t tile) {
        index_t const base = tile * tile_chunks;
        blk.for_each_warp([&](auto const& w, auto t) {
          auto const i = calm::map([base](int tt) { return base + tt; }, t);
          decltype(calm::load(w, ps, i)) x[U];
          for (int u = 0; u < U; ++u) x[u] = calm::load(w, ps, i + u * blk.threads());
          auto a = calm::load(w, acc, t);
          for (int u = 0; u < U; ++u) a = a ^ calm::map([](vec4 q) { return q.x[0] ^ q.x[1] ^ q.x[2] ^ q.x[3]; }, x[u]);
          calm::store(w, acc, t, a);
        });
      });
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const a = calm::load(w, acc, t);
        calm::when(w, a == 0x9e3779b9u, [&](auto const& v) { calm::store(v, out, 0, a); });
      });
    });
  };
  // the best of a few block sizes (the median of 7 runs each): the rate the device can read at
  for (int shape : {256, 512, 1024}) {
    threads = shape;
    read();  // warm up
    std::vector<double> t;
    for (int r = 0; r < 7; ++r) t.push_back(time_device(read));
    std::sort(t.begin(), t.end());
    g_read_rate = std::max(g_read_rate, static_cast<double>(n * sizeof(vec4)) / t[t.size() / 2]);
  }
}

std::vector<std::uint32_t> make_keys(std::size_t n, std::uint32_t bins, dist d, std::uint64_t seed) {
  std::vector<std::uint32_t> keys(n);
  std::uint64_t s = seed;
  auto next = [&s] { return splitmix64(s); };
  std::uint32_t run = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t r = next();
    switch (d) {
      case dist::uniform: keys[i] = static_cast<std::uint32_t>(r % bins); break;
      case dist::runs32:
        if (i % 32 == 0) run = static_cast<std::uint32_t>(r % bins);
        keys[i] = run;
        break;
      case dist::halfhot: keys[i] = (r >> 63) ? 0u : static_cast<std::uint32_t>(r % bins); break;
      case dist::zipf: {
        double u = static_cast<double>(r >> 11) * 0x1.0p-53;
        keys[i] = static_cast<std::uint32_t>(bins * (u * u) * (u * u)) % bins;
        break;
      }
      case dist::image: keys[i] = static_cast<std::uint32_t>((i / 64 + (r & 15)) % bins); break;
    }
  }
  return keys;
}

backend::device_buffer<std::uint32_t> const& device_keys(std::uint32_t bins, dist d) {
  static std::map<std::pair<std::uint32_t, int>, backend::device_buffer<std::uint32_t>> cache;
  auto key = std::make_pair(bins, static_cast<int>(d));
  auto it = cache.find(key);
  if (it == cache.end())
    it = cache.emplace(key, backend::device_buffer<std::uint32_t>(make_keys(std::size_t(1) << log2_keys(), bins, d, 42))).first;
  return it->second;
}

/// The console output of Google Benchmark, plus a progress line on stderr at most every 10 s on a
/// long sweep: cases done (of CALM_BENCH_TOTAL, which perf/run.sh counts with --benchmark_list_tests),
/// the time so far and an estimate of the time left.
class progress_reporter : public benchmark::ConsoleReporter {
 public:
  progress_reporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Color : OO_None), start_(clock::now()), last_(start_) {
    if (char const* e = std::getenv("CALM_BENCH_TOTAL")) total_ = std::strtol(e, nullptr, 10);
  }
  void ReportRuns(std::vector<Run> const& reports) override {
    ConsoleReporter::ReportRuns(reports);
    ++done_;
    auto const now = clock::now();
    if (now - last_ < std::chrono::seconds(10) && done_ != total_) return;
    last_ = now;
    double const spent = std::chrono::duration<double>(now - start_).count();
    if (total_ > 0)
      std::fprintf(stderr, "calm: %ld of %ld cases in %.0f s, about %.0f s left\n", done_, total_, spent,
                   spent / static_cast<double>(done_) * static_cast<double>(std::max(0L, total_ - done_)));
    else
      std::fprintf(stderr, "calm: %ld cases in %.0f s\n", done_, spent);
  }

 private:
  using clock = std::chrono::steady_clock;
  clock::time_point start_, last_;
  long done_ = 0, total_ = 0;
};

}  // namespace calm_bench

int main(int argc, char** argv) {
#if defined(CALM_BENCH_KOKKOS)
  Kokkos::ScopeGuard kokkos(argc, argv);  // the Kokkos cases (bench_kokkos.cpp)
#endif
  bool listing = false;  // --benchmark_list_tests: names only, no device measurement
  for (int i = 1; i < argc; ++i)
    listing = listing || std::strcmp(argv[i], "--benchmark_list_tests") == 0 || std::strcmp(argv[i], "--benchmark_list_tests=true") == 0;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (listing) {
    benchmark::RunSpecifiedBenchmarks();
    return 0;
  }
  calm_bench::measure_copy_rate();
  calm_bench::measure_read_rate();
  benchmark::AddCustomContext("calm_backend", calm::backend::backend_name);
  benchmark::AddCustomContext("calm_device", calm::backend::device_name());
  benchmark::AddCustomContext("calm_keys", std::to_string(std::size_t(1) << calm_bench::log2_keys()));
  benchmark::AddCustomContext("calm_copy_GBps", std::to_string(calm_bench::copy_rate() * 1e-9));
  benchmark::AddCustomContext("calm_read_GBps", std::to_string(calm_bench::read_rate() * 1e-9));
  std::fprintf(stderr, "calm perf suite: %s on %s, copy bandwidth %.1f GB/s (read + write), read rate %.1f GB/s\n",
               calm::backend::backend_name, calm::backend::device_name().c_str(), calm_bench::copy_rate() * 1e-9,
               calm_bench::read_rate() * 1e-9);
  calm_bench::progress_reporter display;
  benchmark::RunSpecifiedBenchmarks(&display);
  benchmark::Shutdown();
  return 0;
}
