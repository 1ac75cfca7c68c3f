// calm/perf/probe_hot_key_fixed_cost.cu: a stand-alone probe (not part of the library or its build) of the part
// of hot_key's time that does not grow with the keys. The held-out sweep's medians at 2^24 and 2^26 keys (300,000
// and 5,000,000 entries) fit hot_key with 45-65 us that do not scale, naive with 13-20. Here hot_key_scatter runs
// on the bench's own keys (bench_bulk's generator: splitmix64, seed 7; a shorter input is a prefix of the longer)
// at 2^20 to 2^26 keys as it is, with no line cached (votes above the warp: the first tile, the build and the
// flush of an empty cache remain; also in blocks of 256 and 1,024 threads), with one slot pair (one line at most),
// and beside it naive and automatic.
// Each call is timed from the host's launch to its wait and on the device alone (events after a spin), medians
// of 30.
//
//   nvcc -std=c++17 -O3 -DNDEBUG --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -DCALM_BACKEND_CUDA=1 \
//        -I <a folder holding calm/, a link to this repository> perf/probe_hot_key_fixed_cost.cu -o probe && ./probe [dist [log2 keys]]
#include <calm/calm.hpp>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "probe_graph_timing.hpp"
using calm::index_t;
using calm::strategy;

/// bench_bulk's keys of distribution `dist` ("gauss" or "zipf"), drawn as bulk_keys draws them.
std::vector<std::uint32_t> bench_keys(std::string const& dist, std::size_t n, std::uint32_t bins) {
  std::vector<std::uint32_t> k(n);
  std::uint64_t s = 7;
  auto next = [&s] {  // splitmix64, as perf/bench_common.hpp
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  auto unit = [&] { return static_cast<double>(next() >> 11) * 0x1.0p-53; };
  for (auto& x : k) {
    (void)next();  // bulk_keys draws r for every key first
    if (dist == "zipf") x = static_cast<std::uint32_t>(bins * std::pow(unit(), 4.0)) % bins;
    else {
      double const g = std::sqrt(-2.0 * std::log(1.0 - unit())) * std::cos(6.283185307179586 * unit());
      x = static_cast<std::uint32_t>(std::clamp<double>(bins / 2.0 + g * (bins / 64.0 + 1.0), 0.0, bins - 1.0));
    }
  }
  return k;
}

template <class T>
void probe(char const* workload, std::string const& dist, std::uint32_t const* keys, T const* vals, cudaStream_t s, std::vector<int> const& sizes) {
  std::uint32_t const bins = 300000;
  bool const counting = vals == nullptr;
  calm::backend::device_buffer<T> table(bins);
  table.fill_bytes(0);
  calm::default_exec const ex = calm::on_stream(s);
  std::printf("%s %s, 300000 entries: host launch to wait | device part, medians of 30 (us)\n", workload, dist.c_str());
  for (int lg : sizes) {
    index_t const n = index_t(1) << lg;
    auto const call = [&](strategy st) {
      calm::scatter_options opt;
      opt.strategy = st;
      if (counting) return calm::histogram(keys, n, table.data(), index_t(bins), opt, ex);
      return calm::scatter(calm::plus{}, keys, vals, n, table.data(), index_t(bins), opt, ex);
    };
    auto const hot = [&](calm::hot_key_options const& o) {
      if (counting) calm::hot_key_scatter(calm::plus{}, keys, calm::constant(T(1)), n, table.data(), index_t(bins), o, ex);
      else calm::hot_key_scatter(calm::plus{}, keys, vals, n, table.data(), index_t(bins), o, ex);
    };
    calm::hot_key_options none, one, none256, none1024;
    none.votes = none256.votes = none1024.votes = 1 << 20;
    none256.threads = 256;
    none1024.threads = 1024;
    one.slots = 2;
    struct variant { char const* name; std::function<void()> run; };
    std::vector<variant> const variants = {
        {"naive", [&] { call(strategy::naive); }},
        {"hot_key", [&] { hot({}); }},
        {"hot_key, no line cached", [&] { hot(none); }},
        {"hot_key, one line at most", [&] { hot(one); }},
        {"hot_key, no line, 256 threads", [&] { hot(none256); }},
        {"hot_key, no line, 1024 threads", [&] { hot(none1024); }},
        {"automatic", [&] { call(strategy::automatic); }},
    };
    std::printf("  2^%d keys\n", lg);
    for (auto const& v : variants) {
      timing const x = time_call(v.run, s, 30);
      std::printf("    %-28s %9.2f | %9.2f\n", v.name, x.host, x.device);
    }
  }
  std::fflush(stdout);
  CK(cudaGetLastError());
}

int main(int argc, char** argv) {
  cudaStream_t const s = probe_stream();
  std::size_t const n = std::size_t(1) << 26;
  probe_weights const w(n);
  calm::backend::device_buffer<double> dv(w.d);
  std::string const only = argc > 1 ? argv[1] : "";
  std::vector<int> sizes = {20, 22, 24, 26};
  if (argc > 2) sizes = {std::atoi(argv[2])};  // one size (under a profiler, say)
  for (char const* dist : {"gauss", "zipf"}) {
    if (!only.empty() && only != dist) continue;
    calm::backend::device_buffer<std::uint32_t> keys(bench_keys(dist, n, 300000));
    probe<std::uint32_t>("hist_u32", dist, keys.data(), nullptr, s, sizes);
    probe<double>("scatter_f64", dist, keys.data(), dv.data(), s, sizes);
  }
  return 0;
}
