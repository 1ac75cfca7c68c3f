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

#include "algorithms/warp/update.hpp"
#include "algorithms/block/block_reduce.hpp"
#include "algorithms/block/private_table.hpp"
#include "algorithms/bulk/privatize.hpp"
#include "algorithms/workloads/two_level.hpp"
#include "algorithms/bulk/hot_key_cache.hpp"
#include "algorithms/bulk/cluster_privatize.hpp"
#include "algorithms/bulk/partitioned.hpp"
#include "algorithms/bulk/set_scatter.hpp"
#include "algorithms/choice/collision_stats.hpp"
#include "algorithms/bulk/scatter.hpp"
#include "algorithms/bulk/scatter_plan.hpp"
#include "algorithms/bulk/scatter_rows.hpp"
#include "algorithms/workloads/spmv_coo.hpp"
#include "algorithms/workloads/sum_compacted.hpp"
#include "algorithms/workloads/kmeans_update.hpp"
#include "algorithms/workloads/count_duplicates.hpp"
#include "algorithms/workloads/global_extremum.hpp"
#include "backends/per_lane.hpp"
