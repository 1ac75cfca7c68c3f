// SPDX-License-Identifier: Apache-2.0
// Key families for judging the automatic choice on data unlike its training (CALM_BULK_SET=fresh): where keys
// come from in programs. No fit and no tuning step may read their results; they are for final evaluations.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace calm_bench {

/// The fresh families, each a line of what it models:
///   voxel      particles of a drifting cloud binned into the voxels of a cube (x-major), in the order they move
///   edges      the destinations of a power-law graph's edges in source order: hubs scattered over the table
///   hashed     hashed identifiers (a multiplicative hash of ids drawn log-uniformly) in bursts of repeats
///   timeseries a quantized slowly drifting signal: long runs of equal and neighbouring keys
///   tokens     token ids: frequent tokens have low ids (Zipf), a tenth repeat one of the last 32 tokens
///   mixture    a stream that changes family every 2^16 keys: uniform, one hot key, an ascending range, 16 keys
///   fewspread  64 distinct keys spread evenly over the table, uniformly mixed
inline std::vector<std::string> const& fresh_families() {
  static std::vector<std::string> const names = {"voxel", "edges", "hashed", "timeseries", "tokens", "mixture", "fewspread"};
  return names;
}

/// Families kept apart from the fresh ones for later final evaluations (CALM_BULK_SET=unseen):
///   phases     a program's phases: 3 to 8 stretches of 1/16 to 1/4 of the keys, each a hot key among uniform keys,
///              a narrow window, ids hashed from a Zipf law, or an ascending sweep
///   bursts     events: uniform keys, one in 64 starting a burst that repeats its key a geometric length (mean 256)
///   strided    a transposed traversal: consecutive keys a power-of-two stride apart (a column of a row-major
///              matrix), one in 16 replaced by a uniform key
inline std::vector<std::string> const& unseen_families() {
  static std::vector<std::string> const names = {"phases", "bursts", "strided"};
  return names;
}

/// Families for the final evaluation of the choice (CALM_BULK_SET=final), written before the changes they will
/// judge (the fresh and unseen families above guide development):
///   kmers      k-mer ids of a genome-like sequence (2-bit bases, one segment of 1,024 in 8 a copy of an earlier
///              one), each key the last k bases (4^k entries): consecutive keys are shifts of each other
///   embedgrad  the rows an embedding's gradient touches, batch after batch: 512 token ids a batch (P(r) ~ 1/(r + 1)),
///              deduplicated and sorted, as frameworks coalesce them before the update
///   deposit    particle-in-cell deposition: particles sorted by cell of a square grid, each moved by up to a cell
///              since the sort, each adding to its cell, the one to its right and the two below
///   reuse      accesses with temporal locality: a key repeats the key of d accesses before (d geometric, mean 64)
///              with probability 0.7, else a new uniform key
inline std::vector<std::string> const& final_families() {
  static std::vector<std::string> const names = {"kmers", "embedgrad", "deposit", "reuse"};
  return names;
}

inline bool is_fresh_family(std::string const& name) {
  for (auto const* set : {&fresh_families(), &unseen_families(), &final_families()})
    if (std::find(set->begin(), set->end(), name) != set->end()) return true;
  return false;
}

/// n keys of the fresh family `name` below `bins`, from the random stream next() (splitmix64's).
template <class Next>
std::vector<std::uint32_t> fresh_keys(std::size_t n, std::uint32_t bins, std::string const& name, Next&& next) {
  auto unit = [&] { return static_cast<double>(next() >> 11) * 0x1.0p-53; };
  auto log_uniform = [&](double top) { return static_cast<std::uint64_t>(std::pow(top, unit())) - 1; };  // P(r) ~ 1 / (r + 1)
  auto spread = [&](std::uint64_t r) { return static_cast<std::uint32_t>((r * 0x9E3779B97F4A7C15ull >> 17) % bins); };
  std::vector<std::uint32_t> k(n);
  if (name == "voxel") {
    auto const side = static_cast<std::uint32_t>(std::max(1.0, std::floor(std::cbrt(static_cast<double>(bins)) + 1e-9)));
    double p[3] = {0, 0, 0};
    for (std::size_t i = 0; i < n; ++i) {
      if (i % 4096 == 0)
        for (double& c : p) c = unit() * side;
      std::uint32_t v[3];
      for (int d = 0; d < 3; ++d) {
        p[d] = std::fmod(p[d] + (unit() - 0.5) * 0.7 + side, static_cast<double>(side));
        v[d] = std::min(side - 1, static_cast<std::uint32_t>(p[d]));
      }
      k[i] = ((v[0] * side + v[1]) * side + v[2]) % bins;
    }
  } else if (name == "edges") {
    for (auto& x : k) x = spread(log_uniform(static_cast<double>(bins) + 1.0));
  } else if (name == "hashed") {
    std::uint32_t id = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i == 0 || unit() < 1.0 / 3.0) id = spread(log_uniform(1e7) * 2654435761u + 12345u);
      k[i] = id;
    }
  } else if (name == "timeseries") {
    double x = bins / 2.0, sigma = bins / 2048.0 + 0.1;
    for (auto& v : k) {
      x += (unit() + unit() + unit() - 1.5) * 2.0 * sigma;
      if (x < 0) x = -x;
      if (x >= bins) x = 2.0 * bins - x - 1e-9;
      v = std::min(bins - 1, static_cast<std::uint32_t>(std::max(0.0, x)));
    }
  } else if (name == "tokens") {
    for (std::size_t i = 0; i < n; ++i)
      k[i] = i >= 32 && unit() < 0.1 ? k[i - 1 - next() % 32] : static_cast<std::uint32_t>(log_uniform(static_cast<double>(bins) + 1.0) % bins);
  } else if (name == "mixture") {
    int kind = 0;
    std::uint32_t base = 0, hot = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i % 65536 == 0) kind = static_cast<int>(next() % 4), base = static_cast<std::uint32_t>(next() % bins), hot = base;
      std::uint64_t const r = next();
      switch (kind) {
        case 0: k[i] = static_cast<std::uint32_t>(r % bins); break;
        case 1: k[i] = (r & 1) ? hot : static_cast<std::uint32_t>(r % bins); break;
        case 2: k[i] = static_cast<std::uint32_t>((base + (i % 65536) * static_cast<std::uint64_t>(bins) / 262144) % bins); break;
        default: k[i] = static_cast<std::uint32_t>((base + (r % 16) * 977) % bins); break;
      }
    }
  } else if (name == "fewspread") {
    std::uint32_t const stride = std::max(1u, bins / 64);
    for (auto& x : k) x = static_cast<std::uint32_t>((next() % 64) * stride % bins);
  } else if (name == "phases") {
    std::size_t i = 0;
    while (i < n) {
      std::size_t const len = std::min(n - i, static_cast<std::size_t>(n * (1.0 / 16 + unit() * (1.0 / 4 - 1.0 / 16))) + 1);
      int const kind = static_cast<int>(next() % 4);
      std::uint32_t const base = static_cast<std::uint32_t>(next() % bins), width = std::max(1u, bins / 64);
      for (std::size_t j = 0; j < len; ++j, ++i) {
        std::uint64_t const r = next();
        if (kind == 0) k[i] = r % 4 != 0 ? base : static_cast<std::uint32_t>(r % bins);
        else if (kind == 1) k[i] = static_cast<std::uint32_t>((base + r % width) % bins);
        else if (kind == 2) k[i] = spread(log_uniform(1e6));
        else k[i] = static_cast<std::uint32_t>((base + j * static_cast<std::uint64_t>(bins) / len) % bins);
      }
    }
  } else if (name == "bursts") {
    std::size_t left = 0;
    std::uint32_t key = 0;
    for (auto& x : k) {
      if (left > 0) {
        --left;
      } else if (next() % 64 == 0) {
        key = static_cast<std::uint32_t>(next() % bins);
        left = static_cast<std::size_t>(-std::log(1.0 - unit()) * 256.0);
      } else {
        key = static_cast<std::uint32_t>(next() % bins);
      }
      x = key;
    }
  } else if (name == "kmers") {
    std::uint32_t mask = 0;
    while (static_cast<std::uint64_t>(mask) * 4 + 3 < bins) mask = mask * 4 + 3;  // 4^k - 1 < bins
    std::vector<std::uint8_t> bases(n);
    std::uint32_t key = 0;
    std::size_t from = 0;
    bool copying = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (i % 1024 == 0) {
        copying = i >= 1024 && next() % 8 == 0;
        from = copying ? static_cast<std::size_t>(next() % (i - 1023)) : 0;
      }
      bases[i] = copying ? bases[from++] : static_cast<std::uint8_t>(next() & 3);
      key = ((key << 2) | bases[i]) & mask;
      k[i] = key;
    }
  } else if (name == "embedgrad") {
    std::vector<std::uint32_t> batch;
    for (std::size_t i = 0; i < n;) {
      batch.clear();
      for (int j = 0; j < 512; ++j) batch.push_back(static_cast<std::uint32_t>(log_uniform(static_cast<double>(bins) + 1.0) % bins));
      std::sort(batch.begin(), batch.end());
      batch.erase(std::unique(batch.begin(), batch.end()), batch.end());
      for (std::size_t j = 0; j < batch.size() && i < n; ++j) k[i++] = batch[j];
    }
  } else if (name == "deposit") {
    auto const side = static_cast<std::uint32_t>(std::max(1.0, std::floor(std::sqrt(static_cast<double>(bins)) + 1e-9)));
    std::uint64_t const cells = static_cast<std::uint64_t>(side) * side, particles = (n + 3) / 4;
    for (std::size_t p = 0; p < particles; ++p) {
      auto const c = static_cast<std::uint32_t>(p * cells / particles);  // sorted by cell
      std::uint32_t x = c % side, y = c / side;
      std::uint64_t const r = next();
      if (r % 3 == 0 && x > 0) --x;
      if (r % 5 == 0 && x + 1 < side) ++x;
      if ((r >> 8) % 3 == 0 && y > 0) --y;
      if ((r >> 8) % 5 == 0 && y + 1 < side) ++y;
      std::uint32_t const at[4] = {y * side + x, y * side + std::min(x + 1, side - 1), std::min(y + 1, side - 1) * side + x,
                                   std::min(y + 1, side - 1) * side + std::min(x + 1, side - 1)};
      for (int j = 0; j < 4 && 4 * p + j < n; ++j) k[4 * p + j] = at[j] % bins;
    }
  } else if (name == "reuse") {
    for (std::size_t i = 0; i < n; ++i) {
      if (i > 0 && unit() < 0.7) {
        auto const d = static_cast<std::size_t>(-std::log(1.0 - unit()) * 64.0) + 1;
        k[i] = k[i - std::min(d, i)];
      } else {
        k[i] = static_cast<std::uint32_t>(next() % bins);
      }
    }
  } else {  // strided
    std::uint32_t cols = 1;
    while (cols * cols < bins) cols *= 2;
    std::uint32_t const rows = std::max(1u, bins / cols);
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t const r = next();
      k[i] = r % 16 == 0 ? static_cast<std::uint32_t>(r % bins) : static_cast<std::uint32_t>(((i % rows) * cols + (i / rows) % cols) % bins);
    }
  }
  return k;
}

}  // namespace calm_bench
