// SPDX-License-Identifier: Apache-2.0
// Key distributions of design.md for strategy tests: uniform over few and many bins, runs, one hot key,
// zipf-like skew, spatially correlated (image-like), one key for every lane, and sorted keys.
#pragma once

namespace calm_test {

enum class keys_kind { uniform_few, uniform_many, runs, hot, zipf, image, one, sorted };
inline std::vector<keys_kind> all_key_kinds() {
  return {keys_kind::uniform_few, keys_kind::uniform_many, keys_kind::runs, keys_kind::hot,
          keys_kind::zipf,        keys_kind::image,        keys_kind::one, keys_kind::sorted};
}
inline char const* to_string(keys_kind k) {
  static char const* names[] = {"uniform_few", "uniform_many", "runs", "hot", "zipf", "image", "one", "sorted"};
  return names[static_cast<int>(k)];
}

/// n keys in [0, bins) of the given kind; bins is chosen by the kind (returned through `bins`).
template <class G>
std::vector<std::uint32_t> make_keys(std::size_t n, keys_kind kind, G& g, std::uint32_t& bins) {
  bins = kind == keys_kind::uniform_few ? 7u : kind == keys_kind::one ? 3u : 4096u;
  std::vector<std::uint32_t> k(n);
  std::uniform_int_distribution<std::uint32_t> any(0, bins - 1), len(1, 40), noise(0, 6);
  std::uniform_real_distribution<double> u(0, 1);
  std::uint32_t run_key = 0, left = 0;
  for (std::size_t i = 0; i < n; ++i) {
    switch (kind) {
      case keys_kind::uniform_few:
      case keys_kind::uniform_many:
      case keys_kind::sorted: k[i] = any(g); break;
      case keys_kind::runs:
        if (!left) run_key = any(g), left = len(g);
        k[i] = run_key, --left;
        break;
      case keys_kind::hot: k[i] = (g() & 1) ? 0u : any(g); break;
      case keys_kind::zipf: k[i] = static_cast<std::uint32_t>(bins * std::pow(u(g), 4.0)) % bins; break;
      case keys_kind::image: k[i] = static_cast<std::uint32_t>((i / 16) % (bins - 8) + noise(g)); break;
      case keys_kind::one: k[i] = 1; break;
    }
  }
  // about 2.4 keys an entry at n = 10,000, mostly one at n = 1,000: warps whose keys are all different,
  // and warps of runs, both in order
  if (kind == keys_kind::sorted) std::sort(k.begin(), k.end());
  return k;
}

}  // namespace calm_test
