// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/choice/choose.hpp: the automatic choice of a bulk scatter's strategy: a decision tree over the
// table, the types, the op and the sampled collision statistics (000 §3.3), fitted per device family.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "../../core/error.hpp"
#include "collision_stats.hpp"

namespace calm {

/// What a bulk scatter (calm::scatter, calm::histogram) does with the items.
enum class strategy {
  automatic,              ///< chosen by the device family's fitted tree (sampling keys only where the tree asks)
  naive,                  ///< one device atomic per item
  scan_reduce,            ///< runs of equal keys in a warp merged first (000 Alg. 1)
  vote_reduce,            ///< the lanes sharing a sampled key merged first (000 Alg. 2, one sample)
  peer_reduce,            ///< every group of equal keys in a warp merged first (002)
  privatize,              ///< a table in each block's block-local memory (001), one atomic per lane there
  privatize_peer_reduce,  ///< the same with a warp's equal keys merged before the block-local atomic (none where each lane has a copy of its own)
  hot_key,                ///< hot keys cached per block, the rest to the device table merged by peer_reduce
  cluster_privatize,      ///< the table over a cluster's block-local memory (sm_90; elsewhere hot_key)
  privatize_adaptive,     ///< privatize, a warp's equal keys merged only in the blocks whose probe finds them colliding (adaptive_merge)
  thread_private,         ///< a table per CPU thread, merged once (host; on a GPU privatize, or hot_key beyond a block)
};
constexpr int strategy_count = 11;

/// Strategy s as a bit of a set of strategies (tree_walk::reachable's, a choice's reach): bit s.
CALM_HD constexpr unsigned strategy_bit(strategy s) { return 1u << static_cast<int>(s); }
/// Whether the set of strategies `set` (bits, as strategy_bit makes them) holds s.
CALM_HD constexpr bool reaches(unsigned set, strategy s) { return (set & strategy_bit(s)) != 0; }

/// Whether s keeps the table in each block's block-local memory (the table must fit one block).
CALM_HD constexpr bool is_block_local(strategy s) {
  return s == strategy::privatize || s == strategy::privatize_peer_reduce || s == strategy::privatize_adaptive;
}

inline char const* to_string(strategy s) {
  static char const* const names[strategy_count] = {"automatic",  "naive",  "scan_reduce", "vote_reduce",      "peer_reduce",
                                                    "privatize", "privatize_peer_reduce", "hot_key", "cluster_privatize", "privatize_adaptive",
                                                    "thread_private"};
  int const i = static_cast<int>(s);
  return i >= 0 && i < strategy_count ? names[i] : "unknown";
}
/// The strategy of a name (as to_string writes it); throws calm::error for any other name.
inline strategy strategy_from_string(std::string const& name) {
  for (int i = 0; i < strategy_count; ++i)
    if (name == to_string(static_cast<strategy>(i))) return static_cast<strategy>(i);
  raise_error(error(errc::invalid_argument, "unknown strategy '" + name + "'"));
}

/// What the tree may test. The first eight are known without looking at the keys; the last eight are
/// sampled (collision_stats), only when the path through the tree reaches one of them.
enum class feature {
  log2_bins,         ///< log2 of the table size
  value_bytes,       ///< sizeof the table's type
  is_float,          ///< 1 for float and double tables
  counting,          ///< 1 when every item adds the same value (a histogram)
  op_kind,           ///< 0 plus, 1 min/max, 2 bitwise
  fits_block,        ///< 1 when one copy of the table fits in a block's block-local memory
  log2_copies,       ///< log2 of the copies R privatize would make (replication_for), -1 when it does not fit
  log2_items,        ///< log2 of the number of items (sampling costs the same for few items as for many)
  warp_level,        ///< collision_statistics::warp_level
  block_level,       ///< collision_statistics::block_level
  all_thread_level,  ///< collision_statistics::all_thread_level
  clustering,        ///< collision_statistics::clustering
  line_share,        ///< collision_statistics::line_share
  line_repeats,      ///< collision_statistics::line_repeats (the direct scatter's layout: detail::direct_lines_of); 0 to W - 1, the hopper tree's thresholds fitted on 32-lane warps
  block_excess,      ///< block_level - warp_level: what a block's cache of hot keys gains beyond merging each warp (both unchanged by reordering a warp's keys)
  hot_share,         ///< collision_statistics::hot_share: the largest share of warp-merged updates one entry receives across the array
};
/// Feature f as a bit of a set of features (tree_walk::reachable's `reads`): bit f.
CALM_HD constexpr unsigned feature_bit(feature f) { return 1u << static_cast<int>(f); }

constexpr int feature_count = 16;
constexpr int known_feature_count = 8;
CALM_HD constexpr bool is_sampled(feature f) { return static_cast<int>(f) >= known_feature_count; }

/// One node of a fitted tree: an inner node sends x <= threshold to `left`, the rest to `right`
/// (indices into the tree, always after the node's own: the fitter writes them in preorder); a leaf
/// (left < 0) names its strategy.
struct tree_node {
  feature test;      ///< the feature compared
  double threshold;  ///< go left where the feature is at most this
  int left;          ///< the left child's index (-1: a leaf)
  int right;         ///< the right child's index (-1: a leaf)
  strategy leaf;     ///< a leaf's strategy
};

/// Whether a tree can be walked: every child lies after its parent and inside the tree, so every
/// walk ends at a leaf within N steps.
template <std::size_t N>
constexpr bool well_formed(tree_node const (&tree)[N]) {
  for (std::size_t i = 0; i < N; ++i) {
    tree_node const& t = tree[i];
    if (t.left < 0) continue;
    if (t.left <= static_cast<int>(i) || t.right <= static_cast<int>(i) || t.left >= static_cast<int>(N) || t.right >= static_cast<int>(N))
      return false;
  }
  return N > 0;
}

/// The trees, one per device family, written by perf/fit_tree.py (see models/*.inc for what each was
/// fitted on). Families without data of their own use the nearest: HIP GPUs use the Hopper tree.
namespace models {
inline constexpr tree_node hopper[] = {
#include "models/hopper.inc"
};
inline constexpr tree_node host[] = {
#include "models/host.inc"
};
static_assert(well_formed(hopper) && well_formed(host), "a fitted tree's children must follow their parents");
}  // namespace models

/// A fitted tree as the walks read it (a well_formed array of nodes).
struct tree_view {
  tree_node const* nodes;  ///< the nodes, root first
  int size;                ///< how many
  /// Node i.
  tree_node const& operator[](int i) const { return nodes[i]; }
};
template <std::size_t N>
constexpr tree_view view_of(tree_node const (&tree)[N]) {
  return {tree, static_cast<int>(N)};
}
/// The tree of a device family.
inline tree_view family_tree(device_family family) { return family == device_family::host ? view_of(models::host) : view_of(models::hopper); }

/// The features of a scatter that are known without the keys.
struct scatter_shape {
  index_t bins = 0;         ///< the table's entries
  int value_bytes = 4;      ///< sizeof an entry
  bool is_float = false;    ///< floating-point entries
  bool counting = false;    ///< the same value for every key (calm::constant: a histogram's +1)
  int op_kind = 0;          ///< 0 plus, 1 min or max, 2 a bit operation
  bool fits_block = false;  ///< one copy of the table fits a block's block-local memory
  int copies = 0;     ///< R of privatize's plan, 0 when the table does not fit
  index_t items = 0;  ///< n
};

inline double known_value(feature f, scatter_shape const& s) {
  auto const lg = [](index_t x) { return x > 0 ? std::log2(static_cast<double>(x)) : 0.0; };
  switch (f) {
    case feature::log2_bins: return lg(s.bins);
    case feature::value_bytes: return s.value_bytes;
    case feature::is_float: return s.is_float;
    case feature::counting: return s.counting;
    case feature::op_kind: return s.op_kind;
    case feature::fits_block: return s.fits_block;
    case feature::log2_copies: return s.copies > 0 ? std::log2(static_cast<double>(s.copies)) : -1.0;
    case feature::log2_items: return lg(s.items);
    default: return 0.0;
  }
}
CALM_HD inline double sampled_value(feature f, collision_statistics const& c) {
  switch (f) {
    case feature::warp_level: return c.warp_level;
    case feature::block_level: return c.block_level;
    case feature::all_thread_level: return c.all_thread_level;
    case feature::clustering: return c.clustering;
    case feature::line_share: return c.line_share;
    case feature::line_repeats: return c.line_repeats;
    case feature::block_excess: return c.block_level - c.warp_level;
    case feature::hot_share: return c.hot_share;
    default: return 0.0;
  }
}
/// a - b as one ratio of totals (a ratio without a denominator is 0, as statistic_ratio::value says).
CALM_HD inline detail::statistic_ratio difference(detail::statistic_ratio a, detail::statistic_ratio b) {
  if (a.den <= 0.0) return {-b.num, b.den};
  if (b.den <= 0.0) return a;
  return {a.num * b.den - b.num * a.den, a.den * b.den};
}
/// The ratio of totals whose value sampled_value(f, statistics_of(...)) is.
CALM_HD inline detail::statistic_ratio sampled_ratio(feature f, detail::collision_ratios const& r) {
  switch (f) {
    case feature::warp_level: return r.warp_level;
    case feature::block_level: return r.block_level;
    case feature::all_thread_level: return r.all_thread_level;
    case feature::clustering: return r.clustering;
    case feature::line_share: return r.line_share;
    case feature::line_repeats: return r.line_repeats;
    case feature::block_excess: return difference(r.block_level, r.warp_level);
    case feature::hot_share: return r.hot_share;
    default: return {};
  }
}
inline double feature_value(feature f, scatter_shape const& s, collision_statistics const& c) {
  return is_sampled(f) ? sampled_value(f, c) : known_value(f, s);
}

/// The node where a walk over the known features stops: a leaf, or the first test of a sampled statistic.
inline int walk_known(tree_view tree, scatter_shape const& shape) {
  int i = 0;
  while (tree[i].left >= 0 && !is_sampled(tree[i].test)) i = known_value(tree[i].test, shape) <= tree[i].threshold ? tree[i].left : tree[i].right;
  return i;
}

/// Walk a tree: sample() (returning collision_statistics) is called at most once, and only when the
/// path reaches a test of a sampled feature.
template <class Sample>
strategy walk_tree(tree_view tree, scatter_shape const& shape, Sample&& sample) {
  int i = walk_known(tree, shape);
  if (tree[i].left < 0) return tree[i].leaf;
  collision_statistics const stats = sample();
  while (tree[i].left >= 0) i = feature_value(tree[i].test, shape, stats) <= tree[i].threshold ? tree[i].left : tree[i].right;
  return tree[i].leaf;
}

/// The family's tree walked for this scatter.
template <class Sample>
strategy choose_strategy(device_family family, scatter_shape const& shape, Sample&& sample) {
  return walk_tree(family_tree(family), shape, sample);
}

/// The rest of a walk, carried to the device: the subtree below the node where the known features left
/// it, with the known tests inside it already taken (their values are fixed for the call) and each leaf
/// already what its strategy becomes for this call (a block-local strategy on a table too large for a
/// block becomes hot_key, say), renumbered in preorder. A small kernel parameter (under 1 KB: the
/// sampling's launch copies it), from which blocks finish the walk on sampled statistics (statistics_of)
/// without a round trip to the host; the same decisions as walk_tree on the whole tree. A walk of more
/// nodes is finished on the host, which waits for the sampling: on an H100 that cost sampled calls
/// 15-35 us (a tree with 17-19 nodes behind a table larger than a block, when the limit was 15:
/// perf/results/cuda-h100-2026-11-26-scan-leaves.md); the fitted trees are checked against it below.
struct tree_walk {
  /// A test of a sampled statistic (left >= 0) or a leaf.
  struct node {
    double threshold;         ///< go left where the statistic is at most this
    feature test;             ///< the statistic compared
    std::int8_t left;         ///< the left child's index in the walk (-1: a leaf)
    std::int8_t right;        ///< the right child's index in the walk (-1: a leaf)
    strategy leaf;            ///< a leaf's strategy
  };
  static constexpr int most_nodes = 47;  ///< the most nodes a walk carries to the device
  node nodes[most_nodes];                ///< the walk's nodes, its first the root
  int size = 0;                          ///< how many

  /// The strategy the walk ends at for the statistics s.
  CALM_HD strategy finish(collision_statistics const& s) const {
    int i = 0;
    while (nodes[i].left >= 0) i = sampled_value(nodes[i].test, s) <= nodes[i].threshold ? nodes[i].left : nodes[i].right;  // children follow parents
    return nodes[i].leaf;
  }
  /// The same over the ratios of the summed totals, each test a product (statistic_ratio::at_most):
  /// the device's finish (choice_program). It ends where finish(statistics) does unless a statistic
  /// lies within a rounding of a threshold.
  /// Each node is read whole, and both children while its test is worked out (the nodes are kernel
  /// parameters on a GPU, each read a wait): on an H200 the walk of hist_u32 sorted into 300,000 entries
  /// took 0.67-0.73 us so, against 0.80-0.87 us reading a node's fields one after another
  /// (perf/results/cuda-h200-2026-11-29-finish-walk.md; the call as a whole did not change measurably).
  CALM_HD strategy finish(detail::collision_ratios const& r) const {
    node at = nodes[0];
    while (at.left >= 0) {
      node const l = nodes[at.left], rt = nodes[at.right];  // children follow parents
      at = sampled_ratio(at.test, r).at_most(at.threshold) ? l : rt;
    }
    return at.leaf;
  }
  /// Whether the bit set `reads` (of reachable) holds feature f.
  static constexpr bool reads_feature(unsigned reads, feature f) { return (reads & feature_bit(f)) != 0; }
  /// The strategies the walk may end at, as a bit set (bit s for strategy s); `reads`, if given,
  /// receives the features its tests read (bit f for feature f).
  unsigned reachable(unsigned* reads = nullptr) const {
    unsigned leaves = 0, feats = 0;
    for (int i = 0; i < size; ++i) {  // every node is reachable
      if (nodes[i].left < 0) leaves |= strategy_bit(nodes[i].leaf);
      else feats |= feature_bit(nodes[i].test);
    }
    if (reads) *reads = feats;
    return leaves;
  }
};

/// The walk of `tree` for `shape`, to be finished on the device from `start` (a node walk_known
/// stopped at); becomes(s) says what a leaf's strategy turns into. False where the subtree holds more
/// than tree_walk::most_nodes nodes (the host then finishes the walk).
template <class Becomes>
bool make_walk(tree_view tree, scatter_shape const& shape, int start, Becomes&& becomes, tree_walk& w) {
  w = tree_walk{};
  bool fits = true;
  // preorder copy: a node's children are placed after it (well_formed holds for the copy too)
  auto const copy = [&](auto const& self, int i) -> int {
    while (tree[i].left >= 0 && !is_sampled(tree[i].test)) i = known_value(tree[i].test, shape) <= tree[i].threshold ? tree[i].left : tree[i].right;
    if (w.size == tree_walk::most_nodes) {
      fits = false;
      return 0;
    }
    int const at = w.size++;
    tree_walk::node& n = w.nodes[at];
    n.threshold = tree[i].threshold;
    n.test = tree[i].test;
    n.left = n.right = -1;
    n.leaf = tree[i].left < 0 ? becomes(tree[i].leaf) : strategy::automatic;  // a test's leaf is never read
    if (tree[i].left >= 0) {
      int const l = self(self, tree[i].left);
      int const r = self(self, tree[i].right);
      w.nodes[at].left = static_cast<std::int8_t>(l), w.nodes[at].right = static_cast<std::int8_t>(r);
    }
    return at;
  };
  copy(copy, start);
  return fits;
}

/// The most nodes a walk of `tree` below node i can carry, whatever the call's known features: a bound
/// (each known test counts its larger side, though another known test below may rule that side out).
template <std::size_t N>
constexpr int most_walk_nodes(tree_node const (&tree)[N], int i = 0) {
  tree_node const& t = tree[i];
  if (t.left < 0) return 1;
  int const l = most_walk_nodes(tree, t.left), r = most_walk_nodes(tree, t.right);
  return is_sampled(t.test) ? 1 + l + r : (l > r ? l : r);
}
static_assert(most_walk_nodes(models::hopper) <= tree_walk::most_nodes && most_walk_nodes(models::host) <= tree_walk::most_nodes,
              "every walk of a fitted tree must fit tree_walk, or sampled calls wait for the host (perf/fit_tree.py checks it too)");

}  // namespace calm
