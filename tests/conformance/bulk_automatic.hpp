// SPDX-License-Identifier: Apache-2.0
// Conformance: strategy::automatic of the bulk front door: the fitted tree's choice, finished on the
// device by the sampling, the launches behind it (shared, recorded as a graph) and the
// line rule, against the host's walk and the sequential reference.
#pragma once

#include <array>
#include <cmath>
#include <cstring>
#include <map>

#include "../support/bulk_check.hpp"

TEST_CASE("line_merge_rule: a negative option is the exec's default, 0.25 on a GPU (0 for 8-byte keys, and for 8-byte values above 16 MiB of table) and 0 on the host", "[bulk]") {
  using calm::device_family;
  using calm::line_merge_rule;
  CHECK(calm::scatter_options{}.min_line_repeats < 0.0f);
  CHECK(line_merge_rule::resolved(-1.0f, device_family::host).min_line_repeats == 0.0f);
  CHECK(line_merge_rule::resolved(-1.0f, device_family::nvidia_gpu).min_line_repeats == line_merge_rule::gpu_min_line_repeats);
  CHECK(line_merge_rule::resolved(-0.5f, device_family::amd_gpu).min_line_repeats == line_merge_rule::gpu_min_line_repeats);
  CHECK(line_merge_rule::gpu_min_line_repeats == 0.25f);
  std::uint64_t const wide = line_merge_rule::gpu_wide_max_table_bytes;
  CHECK(line_merge_rule::resolved(-1.0f, device_family::nvidia_gpu, 4, 4, 64 * wide).min_line_repeats == line_merge_rule::gpu_min_line_repeats);
  CHECK(line_merge_rule::resolved(-1.0f, device_family::nvidia_gpu, 4, 8, wide).min_line_repeats == line_merge_rule::gpu_min_line_repeats);
  CHECK(line_merge_rule::resolved(-1.0f, device_family::amd_gpu, 4, 8, 8).min_line_repeats == line_merge_rule::gpu_min_line_repeats);
  CHECK(line_merge_rule::resolved(-1.0f, device_family::nvidia_gpu, 4, 8, wide + 8).min_line_repeats == 0.0f);  // 8-byte values, large table: off
  CHECK(line_merge_rule::resolved(-1.0f, device_family::nvidia_gpu, 8, 4, 4).min_line_repeats == 0.0f);  // 8-byte keys: off
  CHECK(line_merge_rule::resolved(-1.0f, device_family::amd_gpu, 8, 8, 8).min_line_repeats == 0.0f);
  CHECK(line_merge_rule::resolved(-1.0f, device_family::host, 4, 8, 8).min_line_repeats == 0.0f);
  CHECK(line_merge_rule::resolved(3.5f, device_family::nvidia_gpu, 8, 8, wide + 8).min_line_repeats == 3.5f);
  for (auto f : {device_family::host, device_family::nvidia_gpu, device_family::amd_gpu}) {
    CHECK(line_merge_rule::resolved(0.0f, f).min_line_repeats == 0.0f);
    CHECK(line_merge_rule::resolved(3.5f, f).min_line_repeats == 3.5f);
    CHECK(!std::signbit(line_merge_rule::resolved(-0.0f, f).min_line_repeats));  // -0 is 0, not the default
    CHECK(line_merge_rule::resolved(-0.0f, f).min_line_repeats == 0.0f);
  }
}

namespace calm_test {
/// with_fixed_strategy's merge as a number: 0 naive, 1 scan_reduce, 2 peer_reduce, 3 another (host and
/// device, as the function it is given to: a host lambda there needs nvcc's --expt-relaxed-constexpr).
struct merge_number {
  int* named;
  template <class X>
  CALM_HD void operator()(X) const {
    *named = std::is_same<X, calm::naive>::value ? 0 : std::is_same<X, calm::scan_reduce>::value ? 1 : std::is_same<X, calm::peer_reduce>::value ? 2 : 3;
  }
};
}  // namespace calm_test

// A merge picked at run time stands for one fixed at compile time, which the shared launch runs per tile (every merge
// gives the same table, so the tables above cannot tell a wrong one).
TEST_CASE("with_fixed_strategy: the merge a strategy picked at run time stands for", "[bulk]") {
  using calm::merge_kind;
  auto const fixed = [](auto s) {
    int named = -1;
    calm::detail::with_fixed_strategy(s, calm_test::merge_number{&named});
    return named;
  };
  CHECK(fixed(calm::switch_merge{merge_kind::none}) == 0);
  CHECK(fixed(calm::switch_merge{merge_kind::runs}) == 1);
  CHECK(fixed(calm::switch_merge{merge_kind::peers}) == 2);
  CHECK(fixed(calm::peer_reduce_if{false}) == 0);
  CHECK(fixed(calm::peer_reduce_if{true}) == 2);
  CHECK(fixed(calm::scan_reduce{}) == 1);  // any other strategy: itself
  static_assert(calm::detail::picks_at_run_time<calm::switch_merge>::value && calm::detail::picks_at_run_time<calm::peer_reduce_if>::value &&
                    !calm::detail::picks_at_run_time<calm::peer_reduce>::value,
                "switch_merge and peer_reduce_if pick their merge at run time");
}

TEST_CASE("automatic's shared naive/peer_reduce launch: it runs the one decided, the table is right either way", "[bulk]") {
  using namespace calm_test;
  keys_kind const kind = GENERATE(from_range(all_key_kinds()));
  index_t const n = GENERATE(0, 3, 1001, 40003);
  CAPTURE(name, warp_size(), to_string(kind), n);
  check_chosen_direct<float>(kind, n, 4243, "shared naive/peer_reduce launch", [&](calm::strategy const* decided, std::uint32_t const* keys, float const* vals,
                                                                                   float* table, index_t bins) {
    auto const program = calm::detail::direct_program<4>(calm::plus{}, keys, vals, n, table, bins, calm::detail::identity_key{},
                                                                                       calm::peer_reduce_if{});
    using program_t = std::decay_t<decltype(program)>;
    exec{}.for_each_resident_block(calm::detail::blocks_with_work(n, calm::detail::direct_threads, 4),
                                   calm::detail::direct_threads, 0, calm::detail::chosen_merge_program<program_t>{decided, program});
  });
}

TEST_CASE("launch_chosen's direct strategies and hot_key, shared or not: the one decided runs, the table is right either way", "[bulk]") {
  using namespace calm_test;
  using calm::strategy;
  keys_kind const kind = GENERATE(from_range(all_key_kinds()));
  index_t const n = GENERATE(3, 1001, 40003);  // bulk calls launch nothing for n = 0
  auto const held = GENERATE(std::vector<strategy>{strategy::naive, strategy::peer_reduce, strategy::hot_key},
                             std::vector<strategy>{strategy::naive, strategy::scan_reduce, strategy::peer_reduce},
                             std::vector<strategy>{strategy::scan_reduce, strategy::peer_reduce},
                             std::vector<strategy>{strategy::naive, strategy::scan_reduce},
                             std::vector<strategy>{strategy::naive, strategy::scan_reduce, strategy::peer_reduce, strategy::hot_key},
                             std::vector<strategy>{strategy::scan_reduce});
  unsigned reach = 0;
  std::string what = "launches of";
  for (strategy s : held) {
    reach |= calm::strategy_bit(s);
    what += std::string(" ") + calm::to_string(s);
  }
  CAPTURE(name, warp_size(), to_string(kind), n, what);
  check_chosen_direct<float>(
      kind, n, 4259, what.c_str(),
      [&](strategy const* decided, std::uint32_t const* keys, float const* vals, float* table, index_t bins) {
        calm::detail::launch_chosen<calm::detail::device_choosable>(decided, reach, calm::plus{}, keys, vals, nullptr, n, table, bins, calm::detail::identity_key{}, false, exec{});
      },
      held);
  check_chosen_direct<std::uint32_t>(  // a histogram's: one for every key
      kind, n, 4261, (what + ", counting").c_str(),
      [&](strategy const* decided, std::uint32_t const* keys, std::uint32_t const*, std::uint32_t* table, index_t bins) {
        calm::detail::launch_chosen<calm::detail::device_choosable>(decided, reach, calm::plus{}, keys, calm::detail::as_value_source<std::uint32_t>(calm::constant(1u)), nullptr, n,
                                    table, bins, calm::detail::identity_key{}, true, exec{});
      },
      held, true);
  check_chosen_direct<double>(  // 8-byte values: naive and peer_reduce share a launch, the others their own
      kind, n, 4263, (what + ", 8-byte values").c_str(),
      [&](strategy const* decided, std::uint32_t const* keys, double const* vals, double* table, index_t bins) {
        calm::detail::launch_chosen<calm::detail::device_choosable>(decided, reach, calm::plus{}, keys, vals, nullptr, n, table, bins, calm::detail::identity_key{}, false, exec{});
      },
      held);
  std::vector<index_t> reversed(static_cast<std::size_t>(n));  // an order to follow (a set_scatter's, say): the warp strategies only
  for (index_t i = 0; i < n; ++i) reversed[static_cast<std::size_t>(i)] = n - 1 - i;
  buffer<index_t> order(reversed);
  std::vector<strategy> warp_held;
  for (strategy s : held)
    if (s != strategy::hot_key) warp_held.push_back(s);
  check_chosen_direct<float>(
      kind, n, 4267, (what + ", in an order").c_str(),
      [&](strategy const* decided, std::uint32_t const* keys, float const* vals, float* table, index_t bins) {
        calm::detail::launch_chosen<calm::detail::device_choosable>(decided, reach & ~calm::strategy_bit(strategy::hot_key), calm::plus{}, keys, vals, order.data(), n, table, bins,
                                    calm::detail::identity_key{}, false, exec{});
      },
      warp_held);
}

// The shared launch keeps about the occupancy of the direct scatters' own launches: 40 registers (three
// resident blocks of 512) for counting over plain keys, 64 (two) for other 4-byte values; with 8-byte
// values it asks for nothing.
namespace calm_test {
template <class Values, class KeyMap, class T = std::uint32_t>
using shared_direct_launch = calm::detail::chosen_merge_program<
    calm::detail::direct_scatter_program<4, calm::peer_reduce_if, calm::plus, std::uint32_t, Values, T, KeyMap>>;
static_assert(calm::resident_512_blocks_of<shared_direct_launch<calm::same_value<std::uint32_t>, calm::detail::identity_key>>::value == 3 &&
                  calm::resident_1024_blocks_of<shared_direct_launch<calm::same_value<std::uint32_t>, calm::detail::identity_key>>::value == 0,
              "a histogram's shared launch asks for three resident blocks of 512");
static_assert(calm::resident_512_blocks_of<shared_direct_launch<std::uint32_t const*, calm::detail::identity_key>>::value == 2,
              "a weighted shared launch asks for two resident blocks of 512");
static_assert(calm::resident_512_blocks_of<shared_direct_launch<calm::same_value<std::uint32_t>, calm::detail::even_bin_key<float>>>::value == 2,
              "a key-mapped shared launch asks for two resident blocks of 512");
static_assert(calm::resident_512_blocks_of<shared_direct_launch<double const*, calm::detail::identity_key, double>>::value == 0 &&
                  calm::resident_1024_blocks_of<shared_direct_launch<double const*, calm::detail::identity_key, double>>::value == 0,
              "a shared launch of 8-byte values asks for nothing");
}  // namespace calm_test

TEST_CASE("automatic's shared naive/peer_reduce launch for 8-byte values: it runs the one decided, the table is right either way", "[bulk]") {
  using namespace calm_test;
  keys_kind const kind = GENERATE(from_range(all_key_kinds()));
  index_t const n = GENERATE(0, 3, 1001, 40003);
  CAPTURE(name, warp_size(), to_string(kind), n);
  unsigned const reach = calm::strategy_bit(calm::strategy::naive) | calm::strategy_bit(calm::strategy::peer_reduce);
  check_chosen_direct<double>(kind, n, 4271, "shared naive/peer_reduce launch, 8-byte values", [&](calm::strategy const* decided, std::uint32_t const* keys, double const* vals,
                                                                                  double* table, index_t bins) {
    if (n > 0)  // bulk calls launch nothing for n = 0
      calm::detail::launch_chosen<calm::detail::device_choosable>(decided, reach, calm::plus{}, keys, vals, nullptr, n, table, bins, calm::detail::identity_key{}, false, exec{});
  });
}

TEST_CASE("automatic's two naive/peer_reduce launches for 8-byte keys and 4-byte values: the one decided runs, the other ends at once", "[bulk]") {
  using namespace calm_test;
  keys_kind const kind = GENERATE(from_range(all_key_kinds()));
  index_t const n = GENERATE(0, 3, 1001, 40003);
  CAPTURE(name, warp_size(), to_string(kind), n);
  unsigned const reach = calm::strategy_bit(calm::strategy::naive) | calm::strategy_bit(calm::strategy::peer_reduce);
  check_chosen_direct<float, std::uint64_t>(kind, n, 4283, "two naive/peer_reduce launches, 8-byte keys",
                                            [&](calm::strategy const* decided, std::uint64_t const* keys, float const* vals, float* table, index_t bins) {
                                              if (n > 0)  // bulk calls launch nothing for n = 0
                                                calm::detail::launch_chosen<calm::detail::device_choosable>(decided, reach, calm::plus{}, keys, vals, nullptr, n, table, bins,
                                                                            calm::detail::identity_key{}, false, exec{});
                                            });
}

TEST_CASE("launch_chosen with one direct strategy in reach: it runs where decided, and else ends at once", "[bulk]") {
  using namespace calm_test;
  keys_kind const kind = GENERATE(keys_kind::runs, keys_kind::uniform_many);
  index_t const n = GENERATE(1001, 40003);
  bool const counting = GENERATE(false, true);
  CAPTURE(name, warp_size(), to_string(kind), n, counting);
  auto g = rng(4297 + static_cast<int>(kind) * 7 + n);
  index_t const bins = 4099;
  auto const keys = table_keys<std::uint32_t>(static_cast<std::size_t>(n), kind, bins, g, true);
  auto vals = random_operands<calm::plus, float>(static_cast<std::size_t>(n), g);
  if (counting) std::fill(vals.begin(), vals.end(), 1.0f);
  auto const init = random_operands<calm::plus, float>(static_cast<std::size_t>(bins), g);
  buffer<std::uint32_t> dk(keys);
  buffer<float> dv(vals);
  for (calm::strategy only : {calm::strategy::naive, calm::strategy::peer_reduce})
    for (calm::strategy s : {calm::strategy::naive, calm::strategy::peer_reduce}) {
      INFO("reach " << calm::to_string(only) << ", decided " << calm::to_string(s));
      buffer<float> table(init);
      buffer<calm::strategy> decided(std::vector<calm::strategy>{s});
      unsigned const reach = calm::strategy_bit(only);
      calm::strategy const* d = decided.data();
      if (counting)
        calm::detail::launch_chosen<calm::detail::device_choosable>(d, reach, calm::plus{}, static_cast<std::uint32_t const*>(dk.data()), calm::detail::as_value_source<float>(calm::constant(1.0f)),
                                    nullptr, n, table.data(), bins, calm::detail::identity_key{}, true, exec{});
      else
        calm::detail::launch_chosen<calm::detail::device_choosable>(d, reach, calm::plus{}, static_cast<std::uint32_t const*>(dk.data()), static_cast<float const*>(dv.data()), nullptr, n,
                                    table.data(), bins, calm::detail::identity_key{}, false, exec{});
      synchronize();
      if (s == only) verify_scatter<calm::plus, float>(init, keys, vals, table.download(), "the one strategy in reach, decided");
      else require_equal(table.download(), init, "the one strategy in reach, not decided");
    }
}

// The launches behind a choice overlap where the exec lets them (CUDA on sm_90): the chosen one lets the
// next begin while it runs, and those after it must still end after it, since the stream's next work
// waits only for the last. A copy launched right after the call, with no wait between, must see the
// whole table, whichever launch ran it: first, in the middle or last.
namespace calm_test {
/// dst[i] = src[i] for i < count, launched on the default exec's stream after what is already there.
template <class T>
void copy_after(T const* src, T* dst, index_t count) {
  int const threads = 256;
  for_each_block((count + threads - 1) / threads, threads, 0, CALM_LAMBDA(auto const& blk) {
    blk.for_each_warp([&](auto const& w, auto tid) {
      auto const i = blk.index() * blk.threads() + tid;
      calm::when(w, i < count, [&](auto const& l) { calm::store(l, dst, i, calm::load(l, src, i)); });
    });
  });
}

template <class T>
void check_overlapped_launches(keys_kind kind, int seed) {
  using calm::strategy;
  index_t const n = size_for_build((index_t(3) << 20) + 5), bins = 70001;  // long enough that an early end would show
  auto g = rng(seed + static_cast<int>(kind));
  auto const keys = table_keys<std::uint32_t>(static_cast<std::size_t>(n), kind, bins, g, true);
  auto const vals = random_operands<calm::plus, T>(static_cast<std::size_t>(n), g);
  auto const init = random_operands<calm::plus, T>(static_cast<std::size_t>(bins), g);
  buffer<std::uint32_t> dk(keys);
  buffer<T> dv(vals);
  strategy const held[] = {strategy::naive, strategy::scan_reduce, strategy::peer_reduce, strategy::hot_key};
  unsigned reach = 0;
  for (strategy s : held) reach |= calm::strategy_bit(s);
  for (strategy s : held) {
    INFO("decided " << calm::to_string(s) << ", " << sizeof(T) << "-byte values");
    buffer<T> table(init), copy(std::vector<T>(static_cast<std::size_t>(bins), T(0)));
    buffer<strategy> decided(std::vector<strategy>{s});
    calm::detail::launch_chosen<calm::detail::device_choosable>(static_cast<strategy const*>(decided.data()), reach, calm::plus{}, static_cast<std::uint32_t const*>(dk.data()),
                                static_cast<T const*>(dv.data()), nullptr, n, table.data(), bins, calm::detail::identity_key{}, false,
                                calm::detail::overlapping(exec{}));
    copy_after(static_cast<T const*>(table.data()), copy.data(), bins);
    synchronize();
    verify_scatter<calm::plus, T>(init, keys, vals, copy.download(), "the table as the next launch read it");
  }
}
}  // namespace calm_test

TEST_CASE("launch_chosen, launches overlapping: the stream's next launch sees the whole table of the strategy chosen", "[bulk]") {
  using namespace calm_test;
  keys_kind const kind = GENERATE(keys_kind::uniform_many, keys_kind::runs);
  CAPTURE(name, warp_size(), to_string(kind));
  check_overlapped_launches<std::uint32_t>(kind, 4289);
  check_overlapped_launches<double>(kind, 4297);  // naive and peer_reduce in one launch, scan_reduce in its own
}

TEST_CASE("line_merge_rule::merges: more repeats per warp than the rule, or nothing counted", "[bulk]") {
  using calm::line_merge_rule;
  using counted = calm::detail::line_repeats;
  CHECK(!line_merge_rule{10.0f}.merges(counted{20, 2}));  // 10 a warp is not more than 10
  CHECK(line_merge_rule{10.0f}.merges(counted{21, 2}));
  CHECK(line_merge_rule{10.0f}.merges(counted{0, 0}));  // nothing counted
  CHECK(line_merge_rule{0.0f}.merges(counted{0, 16}));
  CHECK(!line_merge_rule{0.5f}.merges(counted{1, 2}));
  CHECK(line_merge_rule{0.5f}.merges(counted{2, 3}));
  CHECK(!line_merge_rule{1e9f}.merges(counted{31 * 32, 32}));
  CHECK(!line_merge_rule{std::numeric_limits<float>::infinity()}.merges(counted{63 * 16, 16}));
  CHECK(counted{0, 0}.per_warp() == -1.0);
  CHECK(counted{21, 2}.per_warp() == 10.5);
}

TEST_CASE("automatic: the fitted tree decides, sampling only where it asks", "[bulk]") {
  using namespace calm_test;
  // the tree is walked on fixed statistics: what walk_tree returns for them is what scatter runs
  calm::collision_statistics st;
  st.warp_level = GENERATE(1.0 / 32, 0.25, 1.0);
  st.block_level = st.warp_level / 4;
  st.all_thread_level = GENERATE(1.0, 64.0, 65536.0);
  st.clustering = GENERATE(0.0, 1.0);
  index_t const bins = GENERATE(1, 256, 4099, 1 << 20);
  CAPTURE(name, st.to_string(), bins);
  calm::scatter_shape const shape = calm::detail::shape_of<calm::plus, float>(5000, bins, false, exec{});
  int sampled = 0;
  calm::strategy const want = calm::choose_strategy(exec::family, shape, [&] {
    ++sampled;
    return st;
  });
  CHECK(sampled <= 1);
  auto g = rng(77 + bins);
  auto keys = table_keys<std::uint32_t>(5000, keys_kind::uniform_many, bins, g, false);
  buffer<std::uint32_t> dk(keys);
  buffer<float> table(static_cast<std::size_t>(bins)), vals(std::vector<float>(5000, 1.0f));
  table.fill_bytes(0);
  calm::scatter_options opt;
  opt.stats = &st;
  calm::strategy const ran = calm::scatter(calm::plus{}, dk.data(), static_cast<float const*>(vals.data()), 5000, table.data(), bins, opt, exec{});
  synchronize();
  bool const replaced = (calm::is_block_local(want) && !shape.fits_block) || want == calm::strategy::cluster_privatize;
  if (!replaced) CHECK(ran == want);
}

namespace calm_test {
using calm::feature;
using calm::strategy;
/// A tree that sends inputs to every strategy a choice finished on the device launches (the warp
/// strategies, hot_key, the block-local three, cluster_privatize) by sampled statistics.
constexpr calm::tree_node every_group_tree[] = {
    /*  0 */ {feature::log2_bins, 1.5, 1, 2, strategy::automatic},
    /*  1 */ {feature::log2_bins, 0, -1, -1, strategy::privatize},
    /*  2 */ {feature::warp_level, 0.2, 3, 6, strategy::automatic},
    /*  3 */ {feature::clustering, 0.5, 4, 5, strategy::automatic},
    /*  4 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
    /*  5 */ {feature::log2_bins, 0, -1, -1, strategy::hot_key},
    /*  6 */ {feature::block_level, 0.5, 7, 8, strategy::automatic},
    /*  7 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
    /*  8 */ {feature::log2_items, 12, 9, 10, strategy::automatic},
    /*  9 */ {feature::log2_bins, 0, -1, -1, strategy::privatize_peer_reduce},
    /* 10 */ {feature::clustering, 0.9, 11, 12, strategy::automatic},
    /* 11 */ {feature::log2_bins, 0, -1, -1, strategy::cluster_privatize},
    /* 12 */ {feature::log2_bins, 0, -1, -1, strategy::privatize_adaptive},
};
static_assert(calm::well_formed(every_group_tree), "the test tree is walkable");
/// A tree that reads no block level (as the host tree does): the sampling on the device leaves it out.
constexpr calm::tree_node no_block_level_tree[] = {
    /*  0 */ {feature::warp_level, 0.2, 1, 4, strategy::automatic},
    /*  1 */ {feature::clustering, 0.5, 2, 3, strategy::automatic},
    /*  2 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
    /*  3 */ {feature::log2_bins, 0, -1, -1, strategy::hot_key},
    /*  4 */ {feature::line_share, 0.5, 5, 6, strategy::automatic},
    /*  5 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
    /*  6 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
};
static_assert(calm::well_formed(no_block_level_tree), "the test tree is walkable");
/// A tree that reads the hot share (its counters cleared by the sampling's last block, launch after launch).
constexpr calm::tree_node hot_share_tree[] = {
    /*  0 */ {feature::hot_share, 0.01, 1, 4, strategy::automatic},
    /*  1 */ {feature::clustering, 0.5, 2, 3, strategy::automatic},
    /*  2 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
    /*  3 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
    /*  4 */ {feature::log2_bins, 0, -1, -1, strategy::hot_key},
};
static_assert(calm::well_formed(hot_share_tree), "the test tree is walkable");
/// A tree that decides by the line repeats a direct scatter's warps meet (which the sampling counts
/// where the walk reads them): naive, scan_reduce or peer_reduce (every leaf reachable with warps of 8).
constexpr calm::tree_node line_repeats_tree[] = {
    /*  0 */ {feature::line_repeats, 1.0, 1, 2, strategy::automatic},
    /*  1 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
    /*  2 */ {feature::line_repeats, 4.0, 3, 4, strategy::automatic},
    /*  3 */ {feature::log2_bins, 0, -1, -1, strategy::scan_reduce},
    /*  4 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
};
static_assert(calm::well_formed(line_repeats_tree), "the test tree is walkable");
/// The same behind a test of the all-thread level, which the device does not read: the host finishes
/// the walk, from line repeats counted in the direct scatter's layout as on the device.
constexpr calm::tree_node host_line_repeats_tree[] = {
    /*  0 */ {feature::all_thread_level, 2.0, 1, 4, strategy::automatic},
    /*  1 */ {feature::line_repeats, 1.0, 2, 3, strategy::automatic},
    /*  2 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
    /*  3 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
    /*  4 */ {feature::line_repeats, 4.0, 5, 6, strategy::automatic},
    /*  5 */ {feature::log2_bins, 0, -1, -1, strategy::scan_reduce},
    /*  6 */ {feature::log2_bins, 0, -1, -1, strategy::hot_key},
};
static_assert(calm::well_formed(host_line_repeats_tree), "the test tree is walkable");
constexpr calm::tree_node parent_after_child[] = {
    {feature::warp_level, 0.5, 2, 1, strategy::automatic},
    {feature::log2_bins, 0, -1, -1, strategy::naive},
    {feature::warp_level, 0.5, 1, 0, strategy::automatic},
};
static_assert(!calm::well_formed(parent_after_child), "a child before its parent is refused");
/// A tree that reads the all-thread level, which the device does not count: the host samples and waits.
constexpr calm::tree_node distinct_keys_tree[] = {
    /* 0 */ {feature::all_thread_level, 8, 1, 2, strategy::automatic},
    /* 1 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
    /* 2 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
};
/// A sampled subtree of 49 nodes, more than tree_walk carries (47): the host samples and waits.
constexpr calm::tree_node deep_tree[] = {
    /*  0 */ {feature::warp_level, 0.96, 2, 1, strategy::automatic},
    /*  1 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
    /*  2 */ {feature::warp_level, 0.92, 4, 3, strategy::automatic},
    /*  3 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
    /*  4 */ {feature::warp_level, 0.88, 6, 5, strategy::automatic},
    /*  5 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
    /*  6 */ {feature::warp_level, 0.84, 8, 7, strategy::automatic},
    /*  7 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
    /*  8 */ {feature::warp_level, 0.80, 10, 9, strategy::automatic},
    /*  9 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
    /* 10 */ {feature::warp_level, 0.76, 12, 11, strategy::automatic},
    /* 11 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
    /* 12 */ {feature::warp_level, 0.72, 14, 13, strategy::automatic},
    /* 13 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
    /* 14 */ {feature::warp_level, 0.68, 16, 15, strategy::automatic},
    /* 15 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
    /* 16 */ {feature::warp_level, 0.64, 18, 17, strategy::automatic},
    /* 17 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
    /* 18 */ {feature::warp_level, 0.60, 20, 19, strategy::automatic},
    /* 19 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
    /* 20 */ {feature::warp_level, 0.56, 22, 21, strategy::automatic},
    /* 21 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
    /* 22 */ {feature::warp_level, 0.52, 24, 23, strategy::automatic},
    /* 23 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
    /* 24 */ {feature::warp_level, 0.48, 26, 25, strategy::automatic},
    /* 25 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
    /* 26 */ {feature::warp_level, 0.44, 28, 27, strategy::automatic},
    /* 27 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
    /* 28 */ {feature::warp_level, 0.40, 30, 29, strategy::automatic},
    /* 29 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
    /* 30 */ {feature::warp_level, 0.36, 32, 31, strategy::automatic},
    /* 31 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
    /* 32 */ {feature::warp_level, 0.32, 34, 33, strategy::automatic},
    /* 33 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
    /* 34 */ {feature::warp_level, 0.28, 36, 35, strategy::automatic},
    /* 35 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
    /* 36 */ {feature::warp_level, 0.24, 38, 37, strategy::automatic},
    /* 37 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
    /* 38 */ {feature::warp_level, 0.20, 40, 39, strategy::automatic},
    /* 39 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
    /* 40 */ {feature::warp_level, 0.16, 42, 41, strategy::automatic},
    /* 41 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
    /* 42 */ {feature::warp_level, 0.12, 44, 43, strategy::automatic},
    /* 43 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
    /* 44 */ {feature::warp_level, 0.08, 46, 45, strategy::automatic},
    /* 45 */ {feature::log2_bins, 0, -1, -1, strategy::naive},
    /* 46 */ {feature::warp_level, 0.04, 48, 47, strategy::automatic},
    /* 47 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
    /* 48 */ {feature::log2_bins, 0, -1, -1, strategy::peer_reduce},
};
static_assert(calm::well_formed(deep_tree) && calm::most_walk_nodes(deep_tree) == calm::tree_walk::most_nodes + 2,
              "the deep tree is walkable and deeper than a carried walk");
/// The test trees as types, as a bulk call takes its tree (calm::family_model): what the call compiles
/// follows from the leaves its walks can reach.
struct every_group_model { static constexpr auto& nodes = every_group_tree; };
struct no_block_level_model { static constexpr auto& nodes = no_block_level_tree; };
struct hot_share_model { static constexpr auto& nodes = hot_share_tree; };
struct line_repeats_model { static constexpr auto& nodes = line_repeats_tree; };
struct host_line_repeats_model { static constexpr auto& nodes = host_line_repeats_tree; };
struct distinct_keys_model { static constexpr auto& nodes = distinct_keys_tree; };
struct deep_model { static constexpr auto& nodes = deep_tree; };

/// The device buffers and options of one bulk call whose choice the device reports (opt.chosen): keys,
/// values, the table from `init`, under the line rule `min_line_repeats`.
template <class T>
struct reporting_call {
  buffer<std::uint32_t> dk;
  buffer<T> dv, table;
  buffer<calm::strategy> chosen;
  calm::scatter_options opt;
  reporting_call(std::vector<std::uint32_t> const& keys, std::vector<T> const& vals, std::vector<T> const& init, float min_line_repeats)
      : dk(keys), dv(vals), table(init), chosen(std::vector<calm::strategy>{calm::strategy::automatic}) {
    opt.chosen = chosen.data();
    opt.min_line_repeats = min_line_repeats;
  }
};

/// What automatic runs where the host's walk of `tree` (fitted) ends at `want`, decided on the device:
/// naive instead of peer_reduce where the walk may end at either, the call's line rule (resolved as
/// the bulk calls do) is not 0, and the line repeats of the sampled warps, counted on the host
/// (line_repeats_reference), are not more than the rule per warp.
template <class Op, class T, class VS>
calm::strategy after_line_rule(calm::strategy want, calm::tree_view tree, calm::scatter_shape const& shape, std::vector<std::uint32_t> const& keys,
                               std::uint32_t const* dkeys, VS const& vals, index_t bins, calm::scatter_options const& opt) {
  if (want != calm::strategy::peer_reduce) return want;
  exec const ex{};
  calm::line_merge_rule const rule =
      calm::line_merge_rule::resolved(opt.min_line_repeats, exec::family, sizeof(std::uint32_t), sizeof(T), static_cast<std::uint64_t>(bins) * sizeof(T));
  calm::tree_walk walk;
  auto const fit = [&](calm::strategy s) { return calm::detail::fitting_strategy<Op, T, calm::detail::identity_key>(s, opt, shape, ex); };
  if (!calm::make_walk(tree, shape, calm::walk_known(tree, shape), fit, walk)) return want;
  calm::detail::merge_lines const lines = calm::detail::merge_lines_of<exec, std::uint32_t, VS, T>(rule, walk.reachable(), dkeys, vals, opt.order);
  if (lines.vec == 0) return want;  // the rule does not apply
  index_t const n = static_cast<index_t>(keys.size());
  calm::detail::sample_plan const plan = calm::detail::plan_sample(dkeys, n, bins, opt.sample);
  auto const r = line_repeats_reference(keys, bins, plan.groups, plan.stride, plan.block_items, warp_size(), lines.vec, lines.line_entries);
  UNSCOPED_INFO("line rule " << rule.min_line_repeats << ": " << r.first << " repeats in " << r.second << " sampled warps, " << lines.vec << " keys apart");
  return rule.merges(calm::detail::line_repeats{r.first, r.second}) ? want : calm::strategy::naive;
}

/// automatic through `tree` against the host's walk over collision_stats of the same keys (the same
/// sample, so the same statistics) and the line rule over them, and the table against the sequential
/// reference.
template <class Model, class Op, class T>
void check_device_choice(bool on_device, keys_kind kind, index_t n, index_t bins, bool weighted, float min_line_repeats = -1.0f) {
  auto g = rng(5150 + static_cast<int>(kind) * 7 + n + bins);
  auto keys = table_keys<std::uint32_t>(static_cast<std::size_t>(n), kind, bins, g, true);
  auto vals = random_operands<Op, T>(static_cast<std::size_t>(n), g);
  auto init = random_operands<Op, T>(static_cast<std::size_t>(bins), g);
  reporting_call<T> call(keys, vals, init, min_line_repeats);
  auto& dk = call.dk;
  auto& dv = call.dv;
  auto& table = call.table;
  calm::scatter_options const& opt = call.opt;
  calm::tree_view const tree = calm::view_of(Model::nodes);
  exec const ex{};
  calm::scatter_shape const shape = calm::detail::shape_of<Op, T>(n, bins, !weighted, ex);
  // the line repeats as the call counts them: in the layout of its direct scatter
  auto const lines_for = [&](auto const& vs) { return calm::detail::direct_lines_of<exec, std::uint32_t, std::decay_t<decltype(vs)>, T>(dk.data(), vs); };
  calm::detail::merge_lines const direct = weighted ? lines_for(calm::detail::as_value_source<T>(static_cast<T const*>(dv.data())))
                                                    : lines_for(calm::detail::as_value_source<T>(calm::constant(T(1))));
  calm::collision_sample_options sample;
  sample.line_vec = direct.vec, sample.line_entries = direct.line_entries;
  calm::strategy const leaf = calm::walk_tree(tree, shape, [&] { return calm::collision_stats(dk.data(), n, bins, sample, ex); });
  calm::strategy const fitted = calm::detail::fitting_strategy<Op, T, calm::detail::identity_key>(leaf, opt, shape, ex);
  INFO(to_string(kind) << ", n " << n << ", bins " << bins << ", weighted " << weighted << ", min_line_repeats " << min_line_repeats << ": the host walks to " << calm::to_string(leaf)
                       << ", which runs as " << calm::to_string(fitted));
  calm::strategy const want = on_device ? (weighted ? after_line_rule<Op, T>(fitted, tree, shape, keys, dk.data(), static_cast<T const*>(dv.data()), bins, opt)
                                                    : after_line_rule<Op, T>(fitted, tree, shape, keys, dk.data(), calm::detail::as_value_source<T>(calm::constant(T(1))), bins, opt))
                                        : fitted;
  calm::strategy ran;
  if (weighted)
    ran = calm::detail::bulk_scatter<Model, calm::strategy::automatic>("scatter", Op{}, dk.data(), static_cast<T const*>(dv.data()), n, table.data(), bins,
                                     calm::detail::identity_key{}, opt, ex);
  else
    ran = calm::detail::bulk_scatter<Model, calm::strategy::automatic>("scatter", Op{}, dk.data(), calm::constant(T(1)), n, table.data(), bins, calm::detail::identity_key{},
                                     opt, ex);
  synchronize();
  bool const sampled = n > 0 && tree[calm::walk_known(tree, shape)].left >= 0;  // the walk reaches a sampled test
  CHECK((ran == calm::strategy::automatic) == (sampled && on_device));
  if (ran == calm::strategy::automatic) CHECK(call.chosen.download()[0] == want);
  else CHECK(ran == want);
  if (!weighted) std::fill(vals.begin(), vals.end(), T(1));
  verify_scatter<Op, T>(init, keys, vals, table.download(), "automatic chosen on the device");
}
}  // namespace calm_test

TEST_CASE("automatic: the choice finished on the device is the host's, every strategy it launches", "[bulk]") {
  using namespace calm_test;
  keys_kind const kind = GENERATE(from_range(all_key_kinds()));
  int const n_i = GENERATE(0, 1, 2, 3), bins_i = GENERATE(0, 1, 2, 3);
  index_t const n = std::array<index_t, 4>{0, 1, 1001, 40003}[n_i], bins = std::array<index_t, 4>{1, 3, 4099, 70001}[bins_i];
  CAPTURE(name, warp_size(), n, bins);
  if (!runs_in_this_build(static_cast<std::size_t>(kind) + static_cast<std::size_t>(n_i + bins_i), 2)) return;
  check_device_choice<every_group_model, calm::plus, std::uint32_t>(true, kind, n, bins, false);
  check_device_choice<every_group_model, calm::plus, float>(true, kind, n, bins, true);
  check_device_choice<every_group_model, calm::plus, float>(true, kind, n, bins, true, 0.0f);  // every block of peer_reduce merges
  check_device_choice<every_group_model, calm::plus, float>(true, kind, n, bins, true, 1.5f);  // the rule keeps peer_reduce above 1.5 repeats a warp
  check_device_choice<every_group_model, calm::plus, float>(true, kind, n, bins, true, 10.0f);
  check_device_choice<every_group_model, calm::plus, double>(true, kind, n, bins, true, 1.5f);  // two launches; the rule counts a warp's repeated keys
  check_device_choice<every_group_model, calm::plus, double>(true, kind, n, bins, true, 10.0f);
  check_device_choice<every_group_model, calm::max, std::int32_t>(true, kind, n, bins, true);
  check_device_choice<no_block_level_model, calm::plus, std::uint32_t>(true, kind, n, bins, false);
  check_device_choice<no_block_level_model, calm::plus, float>(true, kind, n, bins, true);
  check_device_choice<hot_share_model, calm::plus, std::uint32_t>(true, kind, n, bins, false);
  check_device_choice<hot_share_model, calm::plus, float>(true, kind, n, bins, true);
  check_device_choice<hot_share_model, calm::plus, float>(true, kind, n, bins, true);  // again: the counters were left zero
  check_device_choice<line_repeats_model, calm::plus, std::uint32_t>(true, kind, n, bins, false);
  check_device_choice<line_repeats_model, calm::plus, float>(true, kind, n, bins, true, 0.0f);  // no rule: lines counted for the walk alone
  check_device_choice<line_repeats_model, calm::plus, double>(true, kind, n, bins, true);
  check_device_choice<host_line_repeats_model, calm::plus, float>(false, kind, n, bins, true);
  check_device_choice<host_line_repeats_model, calm::plus, double>(false, kind, n, bins, true);
  check_device_choice<distinct_keys_model, calm::plus, float>(false, kind, n, bins, true);
  check_device_choice<deep_model, calm::plus, float>(false, kind, n, bins, true);
}

namespace calm_test {
/// A tree that samples and ends at peer_reduce whatever the statistics, naive reachable: what runs is
/// the line rule's to say.
constexpr calm::tree_node peer_unless_line_rule_tree[] = {
    {calm::feature::warp_level, 2.0, 1, 2, calm::strategy::automatic},
    {calm::feature::log2_bins, 0, -1, -1, calm::strategy::peer_reduce},
    {calm::feature::log2_bins, 0, -1, -1, calm::strategy::naive},
};
struct peer_unless_line_rule_model { static constexpr auto& nodes = peer_unless_line_rule_tree; };

/// automatic through peer_unless_line_rule_tree on `keys` under the rule `min_line_repeats`: the
/// strategy it reports, the table against the reference.
template <class T>
calm::strategy run_line_rule(std::vector<std::uint32_t> const& keys, index_t bins, float min_line_repeats) {
  auto g = rng(6151 + static_cast<int>(keys.size()));
  auto const vals = random_operands<calm::plus, T>(keys.size(), g);
  auto const init = random_operands<calm::plus, T>(static_cast<std::size_t>(bins), g);
  reporting_call<T> call(keys, vals, init, min_line_repeats);
  calm::strategy const ran =
      calm::detail::bulk_scatter<peer_unless_line_rule_model, calm::strategy::automatic>("scatter", calm::plus{}, call.dk.data(), static_cast<T const*>(call.dv.data()),
                                 static_cast<index_t>(keys.size()), call.table.data(), bins, calm::detail::identity_key{}, call.opt, exec{});
  synchronize();
  CHECK(ran == calm::strategy::automatic);
  verify_scatter<calm::plus, T>(init, keys, vals, call.table.download(), "automatic under a line rule");
  return call.chosen.download()[0];
}
}  // namespace calm_test

TEST_CASE("automatic: the line rule keeps peer_reduce where the sampled warps repeat keys on a line, and runs naive elsewhere", "[bulk]") {
  using namespace calm_test;
  index_t const n = GENERATE(1001, 100003);
  index_t const bins = 70001;
  int const w = warp_size();
  CAPTURE(name, w, n);
  // runs of 4 W equal keys from key 0: a direct scatter's warp, its lanes 4 keys apart (or 1 apart, in
  // four warps), meets one key W times: W - 1 repeats; keys 7919 apart: none
  std::vector<std::uint32_t> runs(static_cast<std::size_t>(n)), spread(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) {
    runs[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>((i / (4 * w) * 97) % bins);
    spread[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>((i * 7919) % bins);
  }
  float const half = 0.5f * static_cast<float>(w);  // W - 1 is more, 0 is not
  CHECK(run_line_rule<float>(runs, bins, half) == calm::strategy::peer_reduce);
  CHECK(run_line_rule<float>(spread, bins, half) == calm::strategy::naive);
  CHECK(run_line_rule<float>(spread, bins, 0.0f) == calm::strategy::peer_reduce);  // no rule
  CHECK(run_line_rule<float>(runs, bins, std::numeric_limits<float>::infinity()) == calm::strategy::naive);
  CHECK(run_line_rule<double>(runs, bins, half) == calm::strategy::peer_reduce);  // two launches, a warp's repeated keys
  CHECK(run_line_rule<double>(spread, bins, half) == calm::strategy::naive);
}

TEST_CASE("automatic: block_excess tested as one ratio of totals is the block level less the warp level", "[bulk]") {
  using namespace calm_test;
  auto g = rng(1618);
  std::uniform_int_distribution<std::uint64_t> count(0, 1u << 20);
  std::uniform_real_distribution<double> threshold(-1.0, 1.0);
  for (int trial = 0; trial < 20000; ++trial) {
    // denominators of 0 (nothing counted: the statistic reads 0) in a quarter of the draws each
    calm::detail::statistic_ratio const block{static_cast<double>(count(g)), static_cast<double>(trial % 4 == 0 ? 0 : count(g) + 1)};
    calm::detail::statistic_ratio const warp{static_cast<double>(count(g)), static_cast<double>(trial % 4 == 1 ? 0 : count(g) + 1)};
    double const want = block.value() - warp.value(), x = threshold(g);
    if (std::abs(want - x) < 1e-9) continue;  // within a rounding of the threshold either answer stands
    INFO("trial " << trial << ": block " << block.num << "/" << block.den << ", warp " << warp.num << "/" << warp.den << ", x " << x);
    CHECK(calm::difference(block, warp).at_most(x) == (want <= x));
  }
}

TEST_CASE("automatic: the walk carried to the device decides as the walk of the whole tree", "[bulk]") {
  using namespace calm_test;
  auto g = rng(2718);
  std::uniform_real_distribution<double> level(0.0, 1.0);
  exec const ex{};
  int carried = 0;
  for (calm::tree_view const tree : {calm::family_tree(calm::device_family::nvidia_gpu), calm::family_tree(calm::device_family::host),
                                     calm::view_of(every_group_tree), calm::view_of(line_repeats_tree)}) {
    for (index_t bins : {1, 7, 300, 6000, 40000, 300000, 5000000})
      for (index_t n : {1000, 1 << 20, 1 << 26})
        for (int type = 0; type < 3; ++type) {
          calm::scatter_shape shape = type == 0   ? calm::detail::shape_of<calm::plus, std::uint32_t>(n, bins, true, ex)
                                      : type == 1 ? calm::detail::shape_of<calm::plus, float>(n, bins, false, ex)
                                                  : calm::detail::shape_of<calm::max, double>(n, bins, false, ex);
          int const start = calm::walk_known(tree, shape);
          calm::tree_walk walk;
          if (!calm::make_walk(tree, shape, start, [](calm::strategy s) { return s; }, walk)) continue;
          ++carried;
          CHECK(walk.size >= 1);
          for (int i = 0; i < walk.size; ++i)  // preorder: children after their parent, tests only of sampled features
            if (walk.nodes[i].left >= 0) {
              CHECK(walk.nodes[i].left > i);
              CHECK(walk.nodes[i].right > i);
              CHECK(calm::is_sampled(walk.nodes[i].test));
            }
          for (int trial = 0; trial < 40; ++trial) {
            calm::collision_statistics st;
            st.warp_level = level(g), st.block_level = level(g), st.clustering = level(g);
            st.all_thread_level = 1.0 + 100.0 * level(g);
            st.line_share = level(g), st.line_repeats = 31.0 * level(g) * level(g);
            INFO("bins " << bins << ", n " << n << ", type " << type << ", trial " << trial);
            CHECK(walk.finish(st) == calm::walk_tree(tree, shape, [&] { return st; }));
          }
          // the device's form: the ratios of summed totals, tested by products
          std::uniform_int_distribution<std::uint64_t> count(0, 1u << 16);
          for (int trial = 0; trial < 40; ++trial) {
            calm::detail::collision_totals t{};
            t.warps = count(g), t.blocks = count(g) % 64;
            t.warp_sum = count(g) * (t.warps + 1) * 16, t.block_sum = count(g) * (t.blocks + 1) * 16;
            t.sampled = count(g) + 64, t.out_of_range = t.sampled / (1 + count(g) % 8), t.distinct = count(g) % (t.sampled - t.out_of_range + 1);
            t.repeats = (t.sampled - t.out_of_range) / (1 + count(g) % 4), t.adjacent = count(g) % (t.repeats + 1), t.lines = count(g) % 4096;
            t.line_warps = count(g) % 512, t.line_repeats = t.line_warps * (count(g) % 32) / (1 + count(g) % 4);
            calm::collision_statistics const st = calm::detail::statistics_of(&t, 1);
            INFO("bins " << bins << ", n " << n << ", type " << type << ", totals trial " << trial);
            CHECK(walk.finish(calm::detail::ratios_of(t)) == calm::walk_tree(tree, shape, [&] { return st; }));
          }
        }
  }
  CHECK(carried > 0);
  calm::tree_walk walk;
  calm::scatter_shape const shape = calm::detail::shape_of<calm::plus, float>(1000, 100, false, ex);
  CHECK_FALSE(calm::make_walk(calm::view_of(deep_tree), shape, 0, [](calm::strategy s) { return s; }, walk));  // 33 nodes
}

TEST_CASE("automatic: a plan's calls repeated on the same buffers follow what the buffers hold (a recorded graph on CUDA)", "[bulk]") {
  using namespace calm_test;
  index_t const n = GENERATE(1001, 40003);
  index_t const bins = GENERATE(3, 4099, 70001);
  CAPTURE(name, warp_size(), n, bins);
  exec const ex{};
  buffer<std::uint32_t> dk(static_cast<std::size_t>(n));
  buffer<float> dv(static_cast<std::size_t>(n)), table(static_cast<std::size_t>(bins));
  buffer<std::uint32_t> hist(static_cast<std::size_t>(bins));
  buffer<calm::strategy> chosen(std::vector<calm::strategy>{calm::strategy::automatic});
  calm::scatter_options opt;
  opt.chosen = chosen.data();
  calm::tree_view const tree = calm::view_of(every_group_tree);
  // what two plans hold, one for each call (a plan's recorder keeps the graph of one call's arguments)
  calm::detail::recorder_of<exec> scatter_recorder, histogram_recorder;
  auto g = rng(4242 + static_cast<int>(n + bins));
  // the same pointers, sizes and types every call: on CUDA the second call records a graph and the later
  // ones launch it, so the choice must still follow the keys the buffer holds at each call
#if defined(CALM_BACKEND_CUDA)
  std::uint64_t const launched = calm::cuda::recorded_graph_launches();
#endif
  int round = 0;
  for (keys_kind kind : {keys_kind::uniform_many, keys_kind::one, keys_kind::runs, keys_kind::hot, keys_kind::uniform_few, keys_kind::one,
                         keys_kind::zipf, keys_kind::image, keys_kind::uniform_many}) {
    INFO("round " << round++ << ": " << to_string(kind));
    auto const keys = table_keys<std::uint32_t>(static_cast<std::size_t>(n), kind, bins, g, true);
    auto const vals = random_operands<calm::plus, float>(static_cast<std::size_t>(n), g);
    auto const init = random_operands<calm::plus, float>(static_cast<std::size_t>(bins), g);
    auto const hinit = random_operands<calm::plus, std::uint32_t>(static_cast<std::size_t>(bins), g);
    dk.upload(keys);
    dv.upload(vals);
    table.upload(init);
    hist.upload(hinit);
    auto const stats = [&] { return calm::collision_stats(dk.data(), n, bins, {}, ex); };
    for (bool weighted : {true, false}) {
      calm::scatter_shape const shape = weighted ? calm::detail::shape_of<calm::plus, float>(n, bins, false, ex)
                                                 : calm::detail::shape_of<calm::plus, std::uint32_t>(n, bins, true, ex);
      calm::strategy const leaf = calm::walk_tree(tree, shape, stats);
      calm::strategy const want =
          weighted ? after_line_rule<calm::plus, float>(calm::detail::fitting_strategy<calm::plus, float, calm::detail::identity_key>(leaf, opt, shape, ex), tree,
                                                        shape, keys, dk.data(), static_cast<float const*>(dv.data()), bins, opt)
                   : after_line_rule<calm::plus, std::uint32_t>(
                         calm::detail::fitting_strategy<calm::plus, std::uint32_t, calm::detail::identity_key>(leaf, opt, shape, ex), tree, shape, keys,
                         dk.data(), calm::detail::as_value_source<std::uint32_t>(calm::constant(std::uint32_t(1))), bins, opt);
      INFO("weighted " << weighted << ": the host walks to " << calm::to_string(leaf) << ", which runs as " << calm::to_string(want));
      calm::strategy const ran =
          weighted ? calm::detail::bulk_scatter<every_group_model, calm::strategy::automatic>("scatter", calm::plus{}, dk.data(), static_cast<float const*>(dv.data()), n, table.data(), bins,
                                                calm::detail::identity_key{}, opt, ex, &scatter_recorder)
                   : calm::detail::bulk_scatter<every_group_model, calm::strategy::automatic>("histogram", calm::plus{}, dk.data(), calm::constant(std::uint32_t(1)), n, hist.data(), bins,
                                                calm::detail::identity_key{}, opt, ex, &histogram_recorder);
      synchronize();
      CHECK(ran == calm::strategy::automatic);  // every_group_tree samples for tables of 3 entries and more
      CHECK(chosen.download()[0] == want);
    }
    verify_scatter<calm::plus, float>(init, keys, vals, table.download(), "repeated automatic scatter");
    std::vector<std::uint32_t> ones(keys.size(), 1u);
    verify_scatter<calm::plus, std::uint32_t>(hinit, keys, ones, hist.download(), "repeated automatic histogram");
  }
#if defined(CALM_BACKEND_CUDA)
  // each of the two calls (weighted scatter, histogram) from its second round on at the latest (a key
  // seen before, in another test on buffers at the same addresses, may start sooner)
  CHECK(calm::cuda::recorded_graph_launches() - launched >= 2u * static_cast<unsigned>(round - 1));
#endif
}

// A bulk call's launch key (core/launch_key.hpp) holds its arguments' bytes; an empty key map
// (identity_key) holds none, so whatever its one byte holds, equal calls must give equal keys.
TEST_CASE("launch_key: an empty type adds nothing, so equal arguments give equal keys", "[bulk]") {
  calm::detail::identity_key a, b;
  unsigned char const seven = 7, nine = 9;
  std::memcpy(static_cast<void*>(&a), &seven, 1);
  std::memcpy(static_cast<void*>(&b), &nine, 1);
  auto const key = [](calm::detail::identity_key const& k, int n) { return calm::launch_key::of<int>().add(n).add(k).add(n).bytes(); };
  CHECK(key(a, 5) == key(b, 5));
  CHECK(key(a, 5) != key(a, 6));
  CHECK(key(a, 5).size() == calm::launch_key::of<int>().add(5).add(5).bytes().size());
}

// The key keeps its bytes in itself (no heap): they are the fields in order, its hash is theirs, and a key
// whose fields outgrow its capacity is not complete (it names no call, so nothing is recorded for it).
TEST_CASE("launch_key: the fields' bytes in order, their hash, and a key too long is not complete", "[bulk]") {
  std::uint32_t const x = 0x01020304u;
  double const y = 2.5;
  calm::launch_key k = calm::launch_key::of<float>();
  std::size_t const start = k.view().size();
  CHECK(start == sizeof(void*));  // the types' tag
  k.add(x).add(y);
  REQUIRE(k.view().size() == start + sizeof x + sizeof y);
  CHECK(std::memcmp(k.view().data() + start, &x, sizeof x) == 0);
  CHECK(std::memcmp(k.view().data() + start + sizeof x, &y, sizeof y) == 0);
  CHECK(k.bytes() == std::string(k.view()));
  CHECK(k.hash() == std::hash<std::string_view>{}(k.view()));
  CHECK(k.hash() == calm::launch_key::of<float>().add(x).add(y).hash());
  CHECK(k.bytes() != calm::launch_key::of<double>().add(x).add(y).bytes());  // another instantiation, another tag
  CHECK(k.complete());
  calm::launch_key full = calm::launch_key::of<float>();
  std::uint64_t filler = 0;
  while (full.view().size() + sizeof filler <= calm::launch_key::capacity) full.add(++filler);
  CHECK(full.complete());
  std::size_t const at_most = full.view().size();
  full.add(++filler);  // one field more than fits
  CHECK_FALSE(full.complete());
  CHECK(full.view().size() == at_most);  // nothing written past the capacity
}

// Where the launches are recorded into a graph (CUDA, from a call's second repeat), those not chosen end
// at once, wherever the chosen one is (launches_end_as_one): the graph ends only when every launch in it has,
// so a copy launched right after the call, with no wait between, must see the whole table. every_group_tree
// over 70,001 entries reaches the shared direct launch, hot_key's launch and cluster_privatize's after it.
TEST_CASE("automatic, repeated (a recorded graph on CUDA): the stream's next launch sees the whole table of the strategy chosen", "[bulk]") {
  using namespace calm_test;
  index_t const n = size_for_build((index_t(3) << 20) + 5), bins = 70001;  // long enough that an early end would show
  exec const ex{};
  buffer<std::uint32_t> dk(static_cast<std::size_t>(n));
  buffer<float> dv(static_cast<std::size_t>(n)), table(static_cast<std::size_t>(bins)), copy(static_cast<std::size_t>(bins));
  buffer<calm::strategy> chosen(std::vector<calm::strategy>{calm::strategy::automatic});
  calm::scatter_options opt;
  opt.chosen = chosen.data();
  auto g = rng(4391);
  calm::detail::recorder_of<exec> recorder;  // a plan's: its repeated call as one graph on CUDA
  unsigned ran = 0;  // the strategies chosen (bits)
#if defined(CALM_BACKEND_CUDA)
  std::uint64_t const launched = calm::cuda::recorded_graph_launches();
#endif
  for (keys_kind kind : {keys_kind::uniform_many, keys_kind::runs, keys_kind::hot, keys_kind::one}) {
    auto keys = table_keys<std::uint32_t>(static_cast<std::size_t>(n), kind, bins, g, true);
    // hot: half the keys on key 0 put the block level on the tree's 0.5 (peer_reduce or the leaf that runs as
    // hot_key, by the draw); three quarters put it, and the clustering, well inside that leaf (node 11)
    if (kind == keys_kind::hot)
      for (auto& k : keys)
        if (k < static_cast<std::uint32_t>(bins) && (g() & 1)) k = 0;
    auto const vals = random_operands<calm::plus, float>(static_cast<std::size_t>(n), g);
    auto const init = random_operands<calm::plus, float>(static_cast<std::size_t>(bins), g);
    dk.upload(keys);
    dv.upload(vals);
    for (int call = 0; call < 3; ++call) {  // the same arguments: recorded at the second, launched from the graph from then on
      table.upload(init);
      calm::strategy const s = calm::detail::bulk_scatter<every_group_model, calm::strategy::automatic>("scatter", calm::plus{}, dk.data(), static_cast<float const*>(dv.data()), n, table.data(), bins,
                                                          calm::detail::identity_key{}, opt, ex, &recorder);
      copy_after(static_cast<float const*>(table.data()), copy.data(), bins);
      synchronize();
      calm::strategy const decided = chosen.download()[0];
      INFO(to_string(kind) << ", call " << call << ": " << calm::to_string(decided) << " chosen");
      CHECK(s == calm::strategy::automatic);
      ran |= calm::strategy_bit(decided);
      verify_scatter<calm::plus, float>(init, keys, vals, copy.download(), "the table as the next launch read it");
    }
  }
  // a direct scatter with launches after it, and hot_key with one after it
  CHECK(calm::reaches(ran, calm::strategy::naive));
  CHECK(calm::reaches(ran, calm::strategy::hot_key));
#if defined(CALM_BACKEND_CUDA)
  // one key for all 12 calls: every call from the first kind's second on runs the graph (11); at least the second and
  // third of each kind, should a key differ between kinds
  CHECK(calm::cuda::recorded_graph_launches() - launched >= 8u);
#endif
}

