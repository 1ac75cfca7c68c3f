// calm/backends/cuda/graph_record.hpp: the launches of a bulk call that decides on the device (the
// automatic choice), recorded once as a CUDA graph and launched as one graph when the call repeats.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "../../core/error.hpp"
#include "../../core/launch_key.hpp"
#include "check.hpp"

namespace calm {
namespace cuda {
namespace detail {

/// The graph recorded for one key, and the workspace its kernels were recorded with.
struct recorded_graph {
  int seen = 0;          ///< calls with this key so far
  bool failed = false;   ///< recording failed: this key launches without a graph
  cudaGraphExec_t exec = nullptr;
  void* workspace = nullptr;
  std::uint64_t last = 0;  ///< the clock of its last use
};

/// The recorded graphs of the process, most_graphs keys at most (the least recently used goes first).
/// Never destroyed: at exit the CUDA runtime may be gone before it. Kept in one array, each with its
/// key's hash: a lookup compares hashes, then bytes, with no key made on the heap (launch_key).
struct graph_cache {
  static constexpr std::size_t most_graphs = 64;
  struct entry {
    std::size_t hash = 0;
    std::string key;
    recorded_graph graph;
  };
  std::mutex lock;
  std::vector<entry> graphs;  ///< most_graphs reserved: an entry stays where it is until one is evicted
  std::uint64_t clock = 0;
  std::uint64_t launched = 0;  ///< launches of recorded graphs so far (for tests)

  static graph_cache& get() {
    static graph_cache* const cache = [] {
      auto* c = new graph_cache;
      c->graphs.reserve(most_graphs);
      return c;
    }();
    return *cache;
  }
  static void drop(recorded_graph& g) noexcept {
    if (g.exec) (void)cudaGraphExecDestroy(g.exec);  // a graph still running is freed when it ends
    if (g.workspace) {
      (void)cudaDeviceSynchronize();  // a launch in flight may still use it (only on eviction: rare)
      (void)cudaFree(g.workspace);
    }
    g = recorded_graph{};
  }
  /// The graph recorded for `key`, a new one (room made first) if none is (call with lock held).
  recorded_graph& find_or_add(launch_key const& key) {
    std::size_t const h = key.hash();
    std::string_view const bytes = key.view();
    for (auto& e : graphs)
      if (e.hash == h && e.key == bytes) return e.graph;
    if (graphs.size() >= most_graphs) evict_one();
    graphs.push_back(entry{h, std::string(bytes), recorded_graph{}});
    return graphs.back().graph;
  }
  /// Makes room for one more key (call with lock held).
  void evict_one() {
    auto oldest = graphs.end();
    for (auto it = graphs.begin(); it != graphs.end(); ++it)
      if (oldest == graphs.end() || it->graph.last < oldest->graph.last) oldest = it;
    if (oldest != graphs.end()) {
      drop(oldest->graph);
      graphs.erase(oldest);
    }
  }
};

/// A stream of its own and the graph captured on it; an exception ends the capture and discards it.
class recording {
 public:
  recording() {
    CALM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    // relaxed: the launch helpers ask the runtime about kernels (occupancy, attributes) while capturing
    cudaError_t const e = cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed);
    if (e != cudaSuccess) {
      (void)cudaStreamDestroy(stream_);  // the destructor does not run for an object never constructed
      CALM_CUDA_CHECK(e);
    }
    capturing_ = true;
  }
  recording(recording const&) = delete;
  recording& operator=(recording const&) = delete;
  cudaStream_t stream() const { return stream_; }
  cudaGraphExec_t instantiate() {
    capturing_ = false;
    CALM_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph_));
    cudaGraphExec_t exec = nullptr;
    CALM_CUDA_CHECK(cudaGraphInstantiate(&exec, graph_, 0));
    return exec;
  }
  ~recording() {
    if (capturing_) {
      cudaGraph_t g = nullptr;
      if (cudaStreamEndCapture(stream_, &g) == cudaSuccess && g) (void)cudaGraphDestroy(g);
      (void)cudaGetLastError();
    }
    if (graph_) (void)cudaGraphDestroy(graph_);
    (void)cudaStreamDestroy(stream_);
  }

 private:
  cudaStream_t stream_ = nullptr;
  cudaGraph_t graph_ = nullptr;
  bool capturing_ = false;
};

}  // namespace detail

/// E::launch_recorded of the CUDA exec (core/exec.hpp), the key being make_key() (a launch_key, built
/// only when graphs are on and the stream is not being captured). The first call with a key launches nothing
/// itself (returns false: the caller launches as usual, and meets any bad argument); the second records
/// launches(e, ws) into a graph, with a workspace of `bytes` of its own (zeroed once, when allocated:
/// launches leave zero what they need zero, as launch_decided asks), and launches it; every later
/// call launches that graph: one submission from the host instead of one per kernel, and on the GPU
/// about 1 us per kernel that ends at once (a branch not chosen) instead of 2-3 us.
/// A stream that the caller is capturing, or a recording that fails, launches nothing (false).
template <class Exec, class MakeKey, class Launches>
bool launch_recorded(Exec const& ex, MakeKey const& make_key, std::size_t bytes, Launches const& launches) {
  if (!ex.launch_graphs) return false;
  cudaStreamCaptureStatus status{};
  CALM_CUDA_CHECK(cudaStreamIsCapturing(ex.stream, &status));
  if (status != cudaStreamCaptureStatusNone) return false;
  int device = 0;
  CALM_CUDA_CHECK(cudaGetDevice(&device));
  launch_key full = make_key();
  full.add(device).add(ex.stream).add(bytes);
  if (!full.complete()) return false;  // a key too long names no call: launched as usual
  auto& cache = detail::graph_cache::get();
  std::lock_guard<std::mutex> hold(cache.lock);
  detail::recorded_graph& g = cache.find_or_add(full);
  g.last = ++cache.clock;
  if (g.failed) return false;
  if (g.seen < 2 && ++g.seen < 2) return false;  // counts to 2 and stays
  if (!g.exec) {
    try {
      CALM_CUDA_CHECK(cudaMalloc(&g.workspace, bytes ? bytes : 1));
      CALM_CUDA_CHECK(cudaMemset(g.workspace, 0, bytes ? bytes : 1));  // zero once: the graph leaves what must be zero so
      detail::recording r;
      Exec e = ex;
      e.stream = r.stream();
      e.ends_as_one = true;  // the graph ends when all of its launches have
      launches(e, static_cast<unsigned char*>(g.workspace));
      g.exec = r.instantiate();
    } catch (error const&) {  // launch as before, for this key
      detail::graph_cache::drop(g);
      g.failed = true;
      g.last = cache.clock;
      (void)cudaGetLastError();
      return false;
    }
  }
  CALM_CUDA_CHECK(cudaGraphLaunch(g.exec, ex.stream));
  ++cache.launched;
  return true;
}

/// How many times launch_recorded has launched a recorded graph in this process.
inline std::uint64_t recorded_graph_launches() {
  auto& cache = detail::graph_cache::get();
  std::lock_guard<std::mutex> hold(cache.lock);
  return cache.launched;
}

}  // namespace cuda
}  // namespace calm
