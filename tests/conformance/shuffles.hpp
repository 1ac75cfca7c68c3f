// SPDX-License-Identifier: Apache-2.0
// Conformance: shuffle (idx), shuffle_up, shuffle_down and shuffle_xor for 4-, 8- and 12-byte values,
// every segment width, random sources and deltas, full and ragged warps. Lanes whose source lane is
// inactive (unspecified by contract) are not compared.
#pragma once

namespace calm_test {

template <class T>
void check_shuffles(index_t n, int width, int delta, int lane_xor, calm::launch_shape shape) {
  int const W = warp_size();
  auto g = rng(23 + width * 131 + delta);
  auto raw = random_values<std::uint64_t>(n, g, 0, ~0ull);
  std::vector<T> vals(n);
  for (index_t i = 0; i < n; ++i) vals[i] = make_value<T>(raw[i]);
  // a source for each lane that is active: within the lane's segment, plus a multiple of width (the
  // hardware takes src % width)
  std::vector<int> src(n);
  for (index_t i = 0; i < n; ++i) {
    index_t const base = warp_base(i, W);
    int const lane = lane_of(i, W), seg = lane & ~(width - 1);
    int const avail = static_cast<int>(std::min<index_t>(width, n - base - seg));
    src[i] = static_cast<int>(raw[i] % avail) + width * static_cast<int>((raw[i] >> 40) % 3);
  }
  buffer<T> dvals(vals), idx(n), up(n), down(n), x(n);
  buffer<int> dsrc(src);
  auto *pv = dvals.data(), *pi = idx.data(), *pu = up.data(), *pd = down.data(), *px = x.data();
  auto* ps = dsrc.data();
  for_each_index(n, CALM_LAMBDA(auto const& w, auto i) {
    auto v = calm::load(w, pv, i);
    calm::store(w, pi, i, calm::shuffle(w, v, calm::load(w, ps, i), width));
    calm::store(w, pu, i, calm::shuffle_up(w, v, delta, width));
    calm::store(w, pd, i, calm::shuffle_down(w, v, delta, width));
    calm::store(w, px, i, calm::shuffle_xor(w, v, lane_xor, width));
  }, shape);
  synchronize();

  std::vector<T> e_idx(n), e_up(n), e_down(n), e_xor(n);
  std::vector<char> care_down(n), care_xor(n);
  for (index_t i = 0; i < n; ++i) {
    index_t const base = warp_base(i, W);
    int const lane = lane_of(i, W), seg = lane & ~(width - 1);
    std::uint64_t const active = tail_mask(n, W, i);
    e_idx[i] = vals[base + seg + src[i] % width];
    e_up[i] = (lane - seg) >= delta ? vals[i - delta] : vals[i];
    int const dl = (lane - seg) + delta < width ? lane + delta : lane;
    care_down[i] = (active >> dl) & 1;  // an inactive source gives an unspecified value
    e_down[i] = care_down[i] ? vals[base + dl] : T{};
    int const xl = (lane ^ lane_xor) < seg + width ? (lane ^ lane_xor) : lane;
    care_xor[i] = (active >> xl) & 1;
    e_xor[i] = care_xor[i] ? vals[base + xl] : T{};
  }
  INFO("width " << width << " delta " << delta << " xor " << lane_xor << " value bytes " << sizeof(T));
  require_equal(idx.download(), e_idx, "shuffle");
  require_equal(up.download(), e_up, "shuffle_up");
  require_equal(down.download(), e_down, "shuffle_down", &care_down);
  require_equal(x.download(), e_xor, "shuffle_xor", &care_xor);
}

}  // namespace calm_test

TEST_CASE("shuffles: idx, up, down, xor over widths and value sizes", "[warp][shuffle]") {
  using namespace calm_test;
  int const W = warp_size();
  index_t const n = GENERATE(0, 1, 31, 33, 64, 100, 4099, 600011);
  int const width = GENERATE(1, 2, 4, 8, 16, 32, 64);
  int const delta_pick = GENERATE(0, 1, 2, 3);
  calm::launch_shape const shape = GENERATE(from_range(shapes()));
  if (width > W) return;
  int const delta = std::min(width - 1, delta_pick == 3 ? width / 2 + 1 : delta_pick);
  int const lane_xor = (delta_pick * 7 + width) % W;
  CAPTURE(name, W, n, width, delta, lane_xor, calm::to_string(shape));
  check_shuffles<std::int32_t>(n, width, delta, lane_xor, shape);
  check_shuffles<double>(n, width, delta, lane_xor, shape);
  check_shuffles<triple>(n, width, delta, lane_xor, shape);
}
