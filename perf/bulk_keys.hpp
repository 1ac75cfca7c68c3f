// SPDX-License-Identifier: Apache-2.0
// The key distributions of the bulk sweep (perf/bench_bulk.cpp) and their random source, in a header of their own so that
// the stand-alone probes (perf/probe_*.cu) draw the very same keys without Google Benchmark.
#pragma once

#include <calm/core/error.hpp>

#include "fresh_keys.hpp"

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
enum class key_distribution {
  uniform, sorted, runs32, halfhot, zipf, image, runs256, hot10, hot25, zipf8, runs1024, runs4, runs8, window16, window64, coo_rows,
  // held out
  runs_short, twohot, gauss, zipf2, hotset
};

inline key_distribution parse_key_distribution(std::string const& d) {
  static char const* const names[] = {"uniform", "sorted",  "runs32",   "halfhot",  "zipf",       "image",  "runs256",
                                      "hot10",   "hot25",   "zipf8",    "runs1024", "runs4",      "runs8",  "window16",
                                      "window64", "coo_rows", "runs_short", "twohot", "gauss",      "zipf2",  "hotset"};
  static_assert(sizeof names / sizeof names[0] == static_cast<std::size_t>(key_distribution::hotset) + 1, "a name for each distribution, in order");
  for (std::size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (d == names[i]) return static_cast<key_distribution>(i);
  throw calm::error(calm::errc::invalid_argument, "bulk sweep: unknown distribution " + d);
}

/// n keys of distribution d into a table of `bins` entries, drawn from splitmix64 with state `seed`: the same keys on
/// every machine (the name is parsed once and "sorted" is a counting sort, so that 2^25 keys take a fraction of a second
/// to draw; the keys are those the per-key name tests and std::sort drew before).
inline std::vector<std::uint32_t> bulk_keys(std::size_t n, std::uint32_t bins, std::string const& name, std::uint64_t seed) {
  using kd = key_distribution;
  if (is_fresh_family(name)) {
    std::uint64_t s = seed;
    return fresh_keys(n, bins, name, [&s] { return splitmix64(s); });
  }
  kd const d = parse_key_distribution(name);
  std::vector<std::uint32_t> k(n);
  std::uint64_t s = seed;
  auto next = [&s] { return splitmix64(s); };
  auto unit = [&] { return static_cast<double>(next() >> 11) * 0x1.0p-53; };
  std::uint32_t run = 0, left = 0;
  std::uint32_t const window = std::max(1u, bins / (d == kd::window16 ? 16u : 64u));
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t const r = next();
    auto const any = static_cast<std::uint32_t>(r % bins);
    switch (d) {
      case kd::uniform:
      case kd::sorted: k[i] = any; break;
      case kd::runs32: k[i] = i % 32 == 0 ? (run = any) : run; break;
      case kd::halfhot: k[i] = (r >> 63) ? 0u : any; break;
      case kd::zipf: k[i] = static_cast<std::uint32_t>(bins * std::pow(unit(), 4.0)) % bins; break;
      case kd::image: k[i] = static_cast<std::uint32_t>((i / 64 + (r & 15)) % bins); break;
      case kd::runs256: k[i] = i % 256 == 0 ? (run = any) : run; break;
      case kd::hot10: k[i] = (r >> 32) % 10 == 0 ? 0u : any; break;
      case kd::hot25: k[i] = (r >> 62) == 0 ? 0u : any; break;
      case kd::zipf8: k[i] = static_cast<std::uint32_t>(bins * std::pow(unit(), 8.0)) % bins; break;
      case kd::runs1024: k[i] = i % 1024 == 0 ? (run = any) : run; break;
      case kd::runs4: k[i] = i % 4 == 0 ? (run = any) : run; break;
      case kd::runs8: k[i] = i % 8 == 0 ? (run = any) : run; break;
      case kd::window16:
      case kd::window64:  // uniform over bins / 16 (64) consecutive entries from bins / 3: keys that rarely meet in a warp
        // but crowd a few table lines
        k[i] = bins / 3 + static_cast<std::uint32_t>(r % window);
        break;
      case kd::coo_rows:  // the row indices of a sparse matrix in COO order: ascending, a third of the rows empty, the
        // others of Pareto lengths (alpha 2) averaging 1.5 n / bins, so that one pass covers the rows
        if (left == 0) {
          do run = (run + 1) % bins;
          while (unit() < 1.0 / 3.0);
          double const half_mean = 0.75 * static_cast<double>(n) / bins;
          left = static_cast<std::uint32_t>(std::clamp(half_mean / std::sqrt(1.0 - unit()), 1.0, 4e9));
        }
        k[i] = run, --left;
        break;
      // held out
      case kd::runs_short:  // runs of 1 to 8 equal keys
        if (left == 0) run = any, left = 1 + static_cast<std::uint32_t>((r >> 40) % 8);
        k[i] = run, --left;
        break;
      case kd::twohot: k[i] = (r >> 62) == 0 ? 0u : (r >> 62) == 1 ? bins / 2 : any; break;  // a quarter on each of two keys
      case kd::gauss: {  // normal around the middle, sigma = bins / 64 + 1 (Box-Muller)
        double const g = std::sqrt(-2.0 * std::log(1.0 - unit())) * std::cos(6.283185307179586 * unit());
        k[i] = static_cast<std::uint32_t>(std::clamp<double>(bins / 2.0 + g * (bins / 64.0 + 1.0), 0.0, bins - 1.0));
        break;
      }
      case kd::zipf2: k[i] = static_cast<std::uint32_t>(bins * unit() * unit()) % bins; break;
      case kd::hotset: k[i] = (r >> 61) < 7 ? static_cast<std::uint32_t>((r >> 20) % std::max(1u, bins / 100 + 1)) : any; break;  // 7/8 on 1%
    }
  }
  if (d == kd::sorted) {  // counting sort: every key is below bins
    std::vector<std::size_t> count(static_cast<std::size_t>(bins) + 1, 0);
    for (std::uint32_t x : k) ++count[x];
    std::size_t at = 0;
    for (std::uint32_t b = 0; b < bins; ++b)
      for (std::size_t c = count[b]; c; --c) k[at++] = b;
  }
  return k;
}

}  // namespace calm_bench
