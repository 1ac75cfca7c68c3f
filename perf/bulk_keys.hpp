// The key distributions of the bulk sweep (perf/bench_bulk.cpp) and their random source, in a header of their own so that
// the stand-alone probes (perf/probe_*.cu) draw the very same keys without Google Benchmark.
#pragma once

#include <calm/core/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace calm_bench {

/// The next value of the splitmix64 sequence whose state is s: the keys' random source, the same
/// on every machine.
inline std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The distributions of the bulk sweep: the five of the suite (training) and six new ones (held out).
inline std::vector<std::uint32_t> bulk_keys(std::size_t n, std::uint32_t bins, std::string const& d, std::uint64_t seed) {
  std::vector<std::uint32_t> k(n);
  std::uint64_t s = seed;
  auto next = [&s] { return splitmix64(s); };
  auto unit = [&] { return static_cast<double>(next() >> 11) * 0x1.0p-53; };
  std::uint32_t run = 0, left = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t const r = next();
    auto const any = static_cast<std::uint32_t>(r % bins);
    if (d == "uniform" || d == "sorted") k[i] = any;
    else if (d == "runs32") k[i] = i % 32 == 0 ? (run = any) : run;
    else if (d == "halfhot") k[i] = (r >> 63) ? 0u : any;
    else if (d == "zipf") k[i] = static_cast<std::uint32_t>(bins * std::pow(unit(), 4.0)) % bins;
    else if (d == "image") k[i] = static_cast<std::uint32_t>((i / 64 + (r & 15)) % bins);
    else if (d == "runs256") k[i] = i % 256 == 0 ? (run = any) : run;
    else if (d == "hot10") k[i] = (r >> 32) % 10 == 0 ? 0u : any;
    else if (d == "hot25") k[i] = (r >> 62) == 0 ? 0u : any;
    else if (d == "zipf8") k[i] = static_cast<std::uint32_t>(bins * std::pow(unit(), 8.0)) % bins;
    else if (d == "runs1024") k[i] = i % 1024 == 0 ? (run = any) : run;
    else if (d == "runs4") k[i] = i % 4 == 0 ? (run = any) : run;
    else if (d == "runs8") k[i] = i % 8 == 0 ? (run = any) : run;
    else if (d == "window16" || d == "window64") {  // uniform over bins / 16 (64) consecutive entries from bins / 3: keys
      // that rarely meet in a warp but crowd a few table lines
      std::uint32_t const width = std::max(1u, bins / (d == "window16" ? 16u : 64u));
      k[i] = bins / 3 + static_cast<std::uint32_t>(r % width);
    }
    else if (d == "coo_rows") {  // the row indices of a sparse matrix in COO order: ascending, a third of the rows empty,
      // the others of Pareto lengths (alpha 2) averaging 1.5 n / bins, so that one pass covers the rows
      if (left == 0) {
        do run = (run + 1) % bins;
        while (unit() < 1.0 / 3.0);
        double const half_mean = 0.75 * static_cast<double>(n) / bins;
        left = static_cast<std::uint32_t>(std::clamp(half_mean / std::sqrt(1.0 - unit()), 1.0, 4e9));
      }
      k[i] = run, --left;
    }
    // held out
    else if (d == "runs_short") {  // runs of 1 to 8 equal keys
      if (left == 0) run = any, left = 1 + static_cast<std::uint32_t>((r >> 40) % 8);
      k[i] = run, --left;
    } else if (d == "twohot") k[i] = (r >> 62) == 0 ? 0u : (r >> 62) == 1 ? bins / 2 : any;  // a quarter on each of two keys
    else if (d == "gauss") {  // normal around the middle, sigma = bins / 64 + 1 (Box-Muller)
      double const g = std::sqrt(-2.0 * std::log(1.0 - unit())) * std::cos(6.283185307179586 * unit());
      k[i] = static_cast<std::uint32_t>(std::clamp<double>(bins / 2.0 + g * (bins / 64.0 + 1.0), 0.0, bins - 1.0));
    } else if (d == "zipf2") k[i] = static_cast<std::uint32_t>(bins * unit() * unit()) % bins;
    else if (d == "hotset") k[i] = (r >> 61) < 7 ? static_cast<std::uint32_t>((r >> 20) % std::max(1u, bins / 100 + 1)) : any;  // 7/8 on 1%
    else throw calm::error(calm::errc::invalid_argument, "bulk sweep: unknown distribution " + d);
  }
  if (d == "sorted") std::sort(k.begin(), k.end());
  return k;
}

}  // namespace calm_bench
