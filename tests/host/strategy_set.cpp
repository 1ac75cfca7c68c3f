// SPDX-License-Identifier: Apache-2.0
// What a bulk call compiles (algorithms/choice/strategy_set.hpp): every strategy automatic can run for a call,
// whatever its run-time table size, item count, order and sampled statistics, is in the compiled set.
#include <calm/calm.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>

namespace {

using exec = calm::default_exec;

/// Random calls of (Op, T) through Model's tree, walked as bulk_scatter walks them: the strategy each
/// runs as must be one the call compiled, and a walk that samples needs a set that samples.
template <class Model, class Op, class T, class KeyMap, class Exec = exec>
void check_closure(bool counting, std::mt19937_64& g) {
  constexpr bool plain = std::is_same<KeyMap, calm::detail::identity_key>::value;
  calm::static_shape const known{static_cast<int>(sizeof(T)), std::is_floating_point<T>::value, counting, calm::detail::op_kind<Op>()};
  calm::detail::strategy_set const set = calm::detail::automatic_set<Model>(known, plain, calm::detail::clusters_for<Exec, Op, T>(), Exec::thread_tables);
  calm::tree_view const tree = calm::view_of(Model::nodes);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  calm::index_t const order_item = 0;
  for (int i = 0; i < 2000; ++i) {
    calm::index_t const bins = calm::index_t(1) + static_cast<calm::index_t>(std::pow(2.0, 25.0 * u(g)));
    calm::index_t const n = static_cast<calm::index_t>(std::pow(2.0, 30.0 * u(g)));
    calm::scatter_shape const shape = calm::detail::shape_of<Op, T>(n, bins, counting, Exec{});
    calm::collision_statistics st;
    st.warp_level = u(g), st.block_level = u(g), st.all_thread_level = u(g), st.clustering = u(g), st.line_share = u(g);
    st.line_repeats = 31.0 * u(g);
    calm::scatter_options opt;
    opt.order = (i & 1) ? &order_item : nullptr;
    calm::strategy const leaf = calm::walk_tree(tree, shape, [&] { return st; });
    calm::strategy const runs = calm::detail::fitting_strategy<Op, T, KeyMap>(leaf, opt, shape, Exec{});
    INFO("bins " << bins << ", n " << n << ", ordered " << (i & 1) << ": leaf " << calm::to_string(leaf) << " runs as " << calm::to_string(runs));
    CHECK(set.has(runs));
    if (tree[calm::walk_known(tree, shape)].left >= 0) CHECK(set.samples);
  }
}

template <class Model>
void check_model(std::mt19937_64& g) {
  check_closure<Model, calm::plus, std::uint32_t, calm::detail::identity_key>(true, g);
  check_closure<Model, calm::plus, std::uint32_t, calm::detail::even_bin_key<float>>(true, g);
  check_closure<Model, calm::plus, float, calm::detail::identity_key>(false, g);
  check_closure<Model, calm::plus, double, calm::detail::identity_key>(false, g);
  check_closure<Model, calm::max, std::int32_t, calm::detail::identity_key>(false, g);
  check_closure<Model, calm::min, std::int64_t, calm::detail::identity_key>(false, g);
  check_closure<Model, calm::bit_or, std::uint64_t, calm::detail::identity_key>(false, g);
}

/// A tree that ends at thread_private on small tables, and an exec whose blocks are not CPU threads.
constexpr calm::tree_node thread_private_tree[] = {{calm::feature::log2_bins, 12.0, 1, 2, calm::strategy::automatic},
                                                  {calm::feature::log2_bins, 0.0, -1, -1, calm::strategy::thread_private},
                                                  {calm::feature::log2_bins, 0.0, -1, -1, calm::strategy::privatize}};
struct thread_private_model {
  static constexpr auto& nodes = thread_private_tree;
};
struct gpu_like_exec : exec {
  static constexpr bool thread_tables = false;
};

}  // namespace

TEST_CASE("strategy_set: automatic compiles every strategy its fitted tree can run", "[bulk][strategy_set]") {
  std::mt19937_64 g(Catch::rngSeed());
  check_model<calm::family_model<calm::device_family::host>>(g);
  check_model<calm::family_model<calm::device_family::nvidia_gpu>>(g);
  check_model<thread_private_model>(g);
  check_closure<thread_private_model, calm::plus, float, calm::detail::identity_key, gpu_like_exec>(false, g);
  check_closure<thread_private_model, calm::max, std::int64_t, calm::detail::identity_key, gpu_like_exec>(false, g);
}

TEST_CASE("strategy_set: what a call compiles, and no more", "[bulk][strategy_set]") {
  using calm::strategy;
  using calm::strategy_bit;
  // a forced strategy alone
  constexpr calm::static_shape counting{4, false, true, 0};
  constexpr auto forced = calm::detail::compiled_set<strategy::privatize, calm::family_model<calm::device_family::host>>(counting, true, false, true);
  STATIC_REQUIRE(forced.runs == strategy_bit(strategy::privatize));
  STATIC_REQUIRE_FALSE(forced.samples);
  // the host tree: thread_private; naive beyond the tables it copies, peer_reduce in a set_scatter
  // order; nothing sampled
  constexpr auto host = calm::detail::automatic_set<calm::family_model<calm::device_family::host>>(counting, true, false, true);
  STATIC_REQUIRE(host.runs == (strategy_bit(strategy::thread_private) | strategy_bit(strategy::naive) | strategy_bit(strategy::peer_reduce)));
  STATIC_REQUIRE_FALSE(host.samples);
  // even binning (not plain keys): no hot_key, no cluster_privatize
  constexpr auto even = calm::detail::automatic_set<calm::family_model<calm::device_family::nvidia_gpu>>(counting, false, true, false);
  STATIC_REQUIRE((even.runs & (strategy_bit(strategy::hot_key) | strategy_bit(strategy::cluster_privatize))) == 0);
  STATIC_REQUIRE(even.samples);
  // the hopper tree never ends at vote_reduce, and never at automatic
  constexpr auto gpu = calm::detail::automatic_set<calm::family_model<calm::device_family::nvidia_gpu>>(counting, true, true, false);
  STATIC_REQUIRE((gpu.runs & (strategy_bit(strategy::vote_reduce) | strategy_bit(strategy::automatic))) == 0);
  // thread_private: itself where a block is a CPU thread (naive beyond the largest table it copies,
  // peer_reduce in a set_scatter order); elsewhere privatize, and hot_key beyond a block
  constexpr unsigned cpu = calm::detail::fitted_reach(strategy_bit(strategy::thread_private), true, false, true);
  STATIC_REQUIRE(cpu == (strategy_bit(strategy::thread_private) | strategy_bit(strategy::naive) | strategy_bit(strategy::peer_reduce)));
  constexpr unsigned gpu_threads = calm::detail::fitted_reach(strategy_bit(strategy::thread_private), true, false, false);
  STATIC_REQUIRE(gpu_threads == (strategy_bit(strategy::privatize) | strategy_bit(strategy::hot_key) | strategy_bit(strategy::naive) |
                                 strategy_bit(strategy::peer_reduce)));
  // for_strategy hands the strategy over as a type
  CHECK(calm::for_strategy(strategy::hot_key, [](auto c) { return c(); }) == strategy::hot_key);
  CHECK_THROWS_AS(calm::for_strategy(static_cast<strategy>(99), [](auto c) { return c(); }), calm::error);
}
