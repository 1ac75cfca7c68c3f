// SPDX-License-Identifier: Apache-2.0
// calm/calm.hpp: everything calm offers for the backend this build selected.
//
//   #include <calm/calm.hpp>
//   calm::backend::for_each_index(n, CALM_LAMBDA(auto const& w, auto i) {
//     auto key = calm::load(w, keys, i);
//     calm::atomic_update(w, calm::plus{}, calm::scope::device{}, table + key, 1u);
//   });
#pragma once

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/exec.hpp"
#include "core/lane_mask.hpp"
#include "core/launch.hpp"
#include "core/ops.hpp"
#include "core/scope.hpp"
#include "core/varying.hpp"
#include "core/warp.hpp"

#include "backends/backend.hpp"

#include "algorithms/update.hpp"
#include "algorithms/block_reduce.hpp"
#include "algorithms/private_table.hpp"
#include "algorithms/privatize.hpp"
#include "algorithms/two_level.hpp"
#include "algorithms/hot_key_cache.hpp"
#include "algorithms/cluster_privatize.hpp"
#include "algorithms/set_scatter.hpp"
#include "algorithms/collision_stats.hpp"
#include "algorithms/scatter.hpp"
#include "algorithms/scatter_plan.hpp"
#include "algorithms/spmv_coo.hpp"
#include "algorithms/sum_compacted.hpp"
#include "algorithms/kmeans_update.hpp"
#include "algorithms/count_duplicates.hpp"
#include "algorithms/global_extremum.hpp"
#include "backends/per_lane.hpp"
