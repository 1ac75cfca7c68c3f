// SPDX-License-Identifier: Apache-2.0
// calm/backends/cuda/cluster.hpp: thread-block clusters (sm_90): blocks of one cluster read and update
// each other's shared memory (distributed shared memory). The CUDA exec launches cluster programs here.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>
#include <string>

#include "../../core/error.hpp"
#include "graph_record.hpp"
#include "runtime.hpp"

namespace calm {
namespace cuda {

/// A block of a cluster program: a block program's block plus its cluster. Blocks index the whole
/// launch (index(), count(), for_each_tile as usual); cluster_rank() is the block's place in its cluster.
class cluster_block : public gpu::block<warp, runtime> {
 public:
  using gpu::block<warp, runtime>::block;
  __device__ int cluster_rank() const { return static_cast<int>(cooperative_groups::this_cluster().block_rank()); }
  __device__ int cluster_size() const { return static_cast<int>(cooperative_groups::this_cluster().num_blocks()); }
  /// The block-local buffer of block `rank` of this cluster (this block's own for rank == cluster_rank()).
  template <class T>
  __device__ T* cluster_scratch(int rank) const {
    return cooperative_groups::this_cluster().map_shared_rank(this->template scratch<T>(), rank);
  }
  /// A barrier over every thread of the cluster; it also orders their block-local memory accesses.
  __device__ void cluster_sync() const { cooperative_groups::this_cluster().sync(); }
};

namespace detail {
template <class Body>
__global__ void cluster_kernel(Body body) {
  extern __shared__ uint4 calm_cluster_scratch[];
  runtime::await_prior_launch();  // launched to overlap the launch before it: wait for it (else a no-op)
  body(cluster_block(blockIdx.x, gridDim.x, calm_cluster_scratch));
}
}  // namespace detail

/// Whether this device launches clusters (compute capability 9.0 and newer).
inline bool clusters_supported() { return runtime::device_attribute<cudaDevAttrClusterLaunch>() != 0; }

/// body(cluster_block) for as many clusters of `cluster_size` blocks as run at once (at most
/// max_clusters), each block with `threads` threads (fewer if the program's registers demand it) and
/// scratch_bytes of shared memory. Throws calm::error before launching if the device has no clusters
/// or one cluster of this shape does not fit.
template <class Body>
void for_each_resident_cluster(index_t max_clusters, int cluster_size, int threads, std::size_t scratch_bytes, Body body,
                               cudaStream_t stream = 0, bool overlap = false) {
  require(cluster_size >= 1 && cluster_size <= 8, errc::invalid_argument,
          [&] { return "for_each_resident_cluster: cluster size must be in [1, 8], got " + std::to_string(cluster_size); });
  require(threads >= 1 && threads <= gpu::max_block_threads, errc::invalid_argument,
          "for_each_resident_cluster: threads per block must be in [1, 1024]");
  require(clusters_supported(), errc::unsupported, "for_each_resident_cluster: this device has no thread-block clusters (sm_90+)");
  require(scratch_bytes <= runtime::max_block_shared_bytes(), errc::out_of_range,
          [&] { return "for_each_resident_cluster: " + std::to_string(scratch_bytes) + " bytes of shared memory exceed one block's"; });
  auto kernel = detail::cluster_kernel<Body>;
  threads = std::min(threads, runtime::max_threads(kernel));
  runtime::allow_shared_bytes(kernel, scratch_bytes);
  cudaLaunchAttribute attr[2];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(cluster_size);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(cluster_size), 1, 1);
  cfg.blockDim = dim3(static_cast<unsigned>(threads), 1, 1);
  cfg.dynamicSmemBytes = scratch_bytes;
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;  // the occupancy query asks about the cluster shape alone
  int clusters = 0;
  CALM_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg));
  require(clusters >= 1, errc::out_of_range,
          [&] { return "for_each_resident_cluster: a cluster of " + std::to_string(cluster_size) + " blocks with " +
              std::to_string(scratch_bytes) + " bytes each does not fit on this device"; });
  index_t const launch = std::max<index_t>(1, std::min<index_t>(clusters, max_clusters));
  cfg.gridDim = dim3(static_cast<unsigned>(launch * cluster_size), 1, 1);
  if (overlap && runtime::overlapping_launches()) {  // as runtime::launch: may begin while the launch before it ends
    attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[1].val.programmaticStreamSerializationAllowed = 1;
    cfg.numAttrs = 2;
  }
  CALM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, body));
}

/// The CUDA execution policy (core/exec.hpp) with clusters (has_clusters, max_cluster_size() and
/// for_each_resident_cluster) and repeated decided calls launched as recorded graphs (graph_record.hpp).
struct exec : gpu::exec<warp, runtime> {
  static constexpr bool has_clusters = true;
  static constexpr bool has_launch_graphs = true;
  /// What a plan holds to launch its repeated decided calls as one recorded graph (graph_record.hpp).
  using recorder = launch_recorder;
  /// Whether a plan's call repeated with the same arguments may launch the graph recorded for it (off:
  /// every call launches its kernels one by one, as the first does).
  bool launch_graphs = true;
  /// Whether the launches made through this exec end as one: set by launch_recorder on the copy whose
  /// launches it records into a graph, which ends only when every launch in it has ended (a stream's
  /// next work waits for the whole graph), so that no launch need wait to end after another. Set on
  /// an exec whose launches go to a stream one by one, the stream's next work could begin before the
  /// chosen launch ends: leave it to launch_recorder.
  bool ends_as_one = false;
  /// Whether cluster programs may apply Op to T in another block's shared memory: of the 64-bit
  /// operations only add, as 64-bit and/or/xor/min/max there gave wrong tables on an H100 and an H200
  /// (CUDA 13.0; tests/conformance/strategy_cluster.hpp) where the same in a block's own memory was right.
  template <class Op, class T>
  static constexpr bool cluster_atomic = sizeof(T) < 8 || std::is_same<Op, plus>::value;
  /// The portable cluster size (8 blocks).
  int max_cluster_size() const { return 8; }
  template <class Body>
  void for_each_resident_cluster(index_t max_clusters, int cluster_size, int threads, std::size_t scratch_bytes, Body body) const {
    cuda::for_each_resident_cluster(max_clusters, cluster_size, threads, scratch_bytes, body, stream, overlap_launches);
  }
};

}  // namespace cuda
}  // namespace calm
