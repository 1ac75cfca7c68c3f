// calm/algorithms/choose.hpp: the automatic choice of a bulk scatter's strategy: a decision tree over the
// table, the types, the op and the sampled collision statistics (000 §3.3), fitted per device family.
#pragma once

#include <cmath>
#include <string>

#include "../core/error.hpp"
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
  privatize_peer_reduce,  ///< the same with a warp's equal keys merged before the block-local atomic
  hot_key,                ///< hot keys cached per block, the rest to the device table merged by peer_reduce
  cluster_privatize,      ///< the table over a cluster's block-local memory (sm_90; elsewhere hot_key)
};
constexpr int strategy_count = 9;

inline char const* to_string(strategy s) {
  static char const* const names[strategy_count] = {"automatic",  "naive",  "scan_reduce", "vote_reduce",      "peer_reduce",
                                                    "privatize", "privatize_peer_reduce", "hot_key", "cluster_privatize"};
  int const i = static_cast<int>(s);
  return i >= 0 && i < strategy_count ? names[i] : "unknown";
}
/// The strategy of a name (as to_string writes it); throws calm::error for any other name.
inline strategy strategy_from_string(std::string const& name) {
  for (int i = 0; i < strategy_count; ++i)
    if (name == to_string(static_cast<strategy>(i))) return static_cast<strategy>(i);
  throw error(errc::invalid_argument, "unknown strategy '" + name + "'");
}

/// What the tree may test. The first seven are known without looking at the keys; the last four are
/// sampled (collision_stats), only when the path through the tree reaches one of them.
enum class feature {
  log2_bins,         ///< log2 of the table size
  value_bytes,       ///< sizeof the table's type
  is_float,          ///< 1 for float and double tables
  counting,          ///< 1 when every item adds the same value (a histogram)
  op_kind,           ///< 0 plus, 1 min/max, 2 bitwise
  fits_block,        ///< 1 when one copy of the table fits in a block's block-local memory
  log2_copies,       ///< log2 of the copies R privatize would make (replication_for), -1 when it does not fit
  warp_level,        ///< collision_statistics::warp_level
  block_level,       ///< collision_statistics::block_level
  all_thread_level,  ///< collision_statistics::all_thread_level
  clustering,        ///< collision_statistics::clustering
};
constexpr int feature_count = 11;
constexpr bool is_sampled(feature f) { return static_cast<int>(f) >= static_cast<int>(feature::warp_level); }

/// One node of a fitted tree: an inner node sends x <= threshold to `left`, the rest to `right`
/// (indices into the tree); a leaf (left < 0) names its strategy.
struct tree_node {
  feature test;
  double threshold;
  int left, right;
  strategy leaf;
};

/// The trees, one per device family, written by perf/fit_tree.py (see models/*.inc for what each was
/// fitted on). Families without data of their own use the nearest: HIP GPUs use the Hopper tree.
namespace models {
inline constexpr tree_node hopper[] = {
#include "models/hopper.inc"
};
inline constexpr tree_node host[] = {
#include "models/host.inc"
};
}  // namespace models

/// The features of a scatter that are known without the keys.
struct scatter_shape {
  index_t bins = 0;
  int value_bytes = 4;
  bool is_float = false;
  bool counting = false;
  int op_kind = 0;
  bool fits_block = false;
  int copies = 0;  ///< R of privatize's plan, 0 when the table does not fit
};

inline double feature_value(feature f, scatter_shape const& s, collision_statistics const& c) {
  switch (f) {
    case feature::log2_bins: return s.bins > 0 ? std::log2(static_cast<double>(s.bins)) : 0.0;
    case feature::value_bytes: return s.value_bytes;
    case feature::is_float: return s.is_float;
    case feature::counting: return s.counting;
    case feature::op_kind: return s.op_kind;
    case feature::fits_block: return s.fits_block;
    case feature::log2_copies: return s.copies > 0 ? std::log2(static_cast<double>(s.copies)) : -1.0;
    case feature::warp_level: return c.warp_level;
    case feature::block_level: return c.block_level;
    case feature::all_thread_level: return c.all_thread_level;
    case feature::clustering: return c.clustering;
  }
  return 0.0;
}

/// Walk a tree: sample() (returning collision_statistics) is called at most once, and only when the
/// path reaches a test of a sampled feature.
template <std::size_t N, class Sample>
strategy walk_tree(tree_node const (&tree)[N], scatter_shape const& shape, Sample&& sample) {
  collision_statistics stats;
  bool sampled = false;
  std::size_t i = 0;
  for (std::size_t steps = 0; steps <= N; ++steps) {
    tree_node const& node = tree[i];
    if (node.left < 0) return node.leaf;
    if (is_sampled(node.test) && !sampled) {
      stats = sample();
      sampled = true;
    }
    int const next = feature_value(node.test, shape, stats) <= node.threshold ? node.left : node.right;
    require(next > 0 && static_cast<std::size_t>(next) < N, errc::backend_failure, "choose: a malformed tree");
    i = static_cast<std::size_t>(next);
  }
  throw error(errc::backend_failure, "choose: a tree with a cycle");
}

/// The family's tree walked for this scatter.
template <class Sample>
strategy choose_strategy(device_family family, scatter_shape const& shape, Sample&& sample) {
  if (family == device_family::host) return walk_tree(models::host, shape, sample);
  return walk_tree(models::hopper, shape, sample);
}

}  // namespace calm
