// SPDX-License-Identifier: Apache-2.0
// Conformance: match_any for 4-, 8- and 12-byte keys (floats by bits: +0 and -0 differ), over key
// distributions from one key per warp to all distinct, sorted runs and one hot key; ragged warps.
#pragma once

namespace calm_test {

enum class key_dist { alphabet, runs, hot };

template <class K>
K key_from(std::uint64_t r) {
  if constexpr (std::is_same<K, float>::value) {
    static float const special[] = {0.0f, -0.0f, 1.5f, -1.5f, std::numeric_limits<float>::quiet_NaN(),
                                    std::numeric_limits<float>::infinity()};
    return r < 6 ? special[r] : static_cast<float>(r) * 0.5f;
  } else if constexpr (std::is_same<K, double>::value) {
    return r == 0 ? -0.0 : (r == 1 ? 0.0 : static_cast<double>(r) * 0.125);
  } else if constexpr (std::is_same<K, triple>::value) {
    return triple{static_cast<std::int32_t>(r & 1), static_cast<std::int32_t>(r >> 1), 7};
  } else {
    return static_cast<K>(r * 0x9E3779B97F4A7C15ull);  // spread over all the bits
  }
}

template <class K>
void check_match(index_t n, key_dist dist, std::uint64_t alphabet, calm::launch_shape shape) {
  int const W = warp_size();
  auto g = rng(37 + alphabet * 3 + static_cast<int>(dist));
  std::vector<K> keys(n);
  std::uniform_int_distribution<std::uint64_t> pick(0, alphabet - 1);
  std::uint64_t run_key = 0;
  for (index_t i = 0; i < n; ++i) {
    std::uint64_t r = pick(g);
    if (dist == key_dist::runs) r = (i % 13 == 0) ? (run_key = pick(g)) : run_key;
    if (dist == key_dist::hot && (g() & 1)) r = 3;
    keys[i] = key_from<K>(r);
  }
  buffer<K> dkeys(keys);
  buffer<std::uint64_t> out(n);
  auto* pk = dkeys.data();
  auto* po = out.data();
  for_each_index(n, CALM_LAMBDA(auto const& w, auto i) {
    calm::store(w, po, i, calm::match_any(w, calm::load(w, pk, i)));
  }, shape);
  synchronize();

  std::vector<std::uint64_t> expect(n);
  for (index_t i = 0; i < n; ++i) {
    index_t const base = warp_base(i, W);
    std::uint64_t const active = tail_mask(n, W, i);
    for (int j = 0; j < W; ++j)
      if (((active >> j) & 1) && std::memcmp(&keys[base + j], &keys[i], sizeof(K)) == 0) expect[i] |= 1ull << j;
  }
  INFO("key bytes " << sizeof(K));
  require_equal(out.download(), expect, "match_any");
}

}  // namespace calm_test

TEST_CASE("match_any: exact grouping by key bits", "[warp][match]") {
  using namespace calm_test;
  index_t const n = GENERATE(0, 1, 7, 32, 33, 64, 65, 1000, 100003);
  std::uint64_t const alphabet = GENERATE(1, 2, 5, 40, 1000000);
  key_dist const dist = GENERATE(key_dist::alphabet, key_dist::runs, key_dist::hot);
  calm::launch_shape const shape = GENERATE(from_range(shapes()));
  CAPTURE(name, warp_size(), n, alphabet, static_cast<int>(dist), calm::to_string(shape));
  check_match<std::int32_t>(n, dist, alphabet, shape);
  check_match<std::uint64_t>(n, dist, alphabet, shape);
  check_match<float>(n, dist, alphabet, shape);
  check_match<double>(n, dist, alphabet, shape);
  check_match<triple>(n, dist, alphabet, shape);
}
