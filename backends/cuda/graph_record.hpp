// SPDX-License-Identifier: Apache-2.0
// calm/backends/cuda/graph_record.hpp: the launches of a plan's bulk call that decides on the device (the
// automatic choice), recorded once as a CUDA graph and launched as one graph while the call repeats.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "../../core/error.hpp"
#include "../../core/launch_key.hpp"
#include "check.hpp"

namespace calm {
namespace cuda {
namespace detail {

/// Launches of recorded graphs in this process (for tests).
inline std::atomic<std::uint64_t>& graph_launches() {
  static std::atomic<std::uint64_t> count{0};
  return count;
}

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

/// The CUDA exec's recorder (core/exec.hpp, E::recorder): the launches of one plan's calls that decide
/// on the device, recorded as a CUDA graph and launched as one graph while the call repeats. A plan owns
/// one; nothing is cached for the process. The first call with a key (make_key(), built only where
/// graphs are on and the stream is not being captured) launches nothing itself (false: the caller
/// launches as usual, and meets any bad argument); the second records launches(e, ws) into a graph, with a
/// workspace of `bytes` of its own (allocated and zeroed in stream order: launches leave zero what they
/// need zero, as launch_decided asks), and launches it; every later call with that key launches the
/// graph: one submission from the host instead of one per kernel, and on the GPU about 1 us per kernel
/// that ends at once (a branch not chosen) instead of 2-3 us. Another key (new arrays, another stream)
/// drops the graph and starts over. Destroyed, it frees its workspace in the order of the stream its
/// graph last ran on, so work in flight keeps it. A stream that the caller is capturing, or a recording
/// that fails, launches nothing (false).
class launch_recorder {
 public:
  launch_recorder() = default;
  launch_recorder(launch_recorder const&) = delete;
  launch_recorder& operator=(launch_recorder const&) = delete;
  launch_recorder(launch_recorder&& o) noexcept { swap(o); }
  launch_recorder& operator=(launch_recorder&& o) noexcept {
    if (this != &o) {
      drop();
      swap(o);
    }
    return *this;
  }
  ~launch_recorder() { drop(); }

  template <class Exec, class MakeKey, class Launches>
  bool launch(Exec const& ex, MakeKey const& make_key, std::size_t bytes, Launches const& launches) {
    if (!ex.launch_graphs) return false;
    cudaStreamCaptureStatus status{};
    CALM_CUDA_CHECK(cudaStreamIsCapturing(ex.stream, &status));
    if (status != cudaStreamCaptureStatusNone) return false;
    int device = 0;
    CALM_CUDA_CHECK(cudaGetDevice(&device));
    launch_key full = make_key();
    full.add(device).add(ex.stream).add(bytes);
    if (!full.complete()) return false;  // a key too long names no call: launched as usual
    std::string_view const bytes_of_key = full.view();
    if (key_ != bytes_of_key) {  // another call: start over with it
      drop();
      key_ = std::string(bytes_of_key);
      return false;
    }
    if (failed_) return false;
    if (!exec_) {
#if CALM_EXCEPTIONS
      try {
        record(ex, bytes, launches);
      } catch (error const&) {  // launch as before, for this key
        std::string const key = key_;
        drop();
        key_ = key, failed_ = true;
        (void)cudaGetLastError();
        return false;
      }
#else
      record(ex, bytes, launches);  // without exceptions a recording that fails aborts (raise_error)
#endif
    }
    CALM_CUDA_CHECK(cudaGraphLaunch(exec_, ex.stream));
    ++detail::graph_launches();
    return true;
  }

 private:
  /// Records launches on ex's stream into the graph exec_, with a zeroed workspace of `bytes` of its own.
  template <class Exec, class Launches>
  void record(Exec const& ex, std::size_t bytes, Launches const& launches) {
    stream_ = ex.stream;
    resource_ = ex.workspace;
    bytes_ = bytes ? bytes : 1;
    if (resource_.empty()) CALM_CUDA_CHECK(cudaMallocAsync(&workspace_, bytes_, stream_));
    else workspace_ = calm::detail::allocate_from(resource_, bytes_, static_cast<void*>(stream_));
    CALM_CUDA_CHECK(cudaMemsetAsync(workspace_, 0, bytes_, stream_));  // zero once: the graph leaves what must be zero so
    detail::recording r;
    Exec e = ex;
    e.stream = r.stream();
    e.ends_as_one = true;  // the graph ends when all of its launches have
    launches(e, static_cast<unsigned char*>(workspace_));
    exec_ = r.instantiate();
  }
  void drop() noexcept {
    if (exec_) (void)cudaGraphExecDestroy(exec_);  // a graph still running is freed when it ends
    if (workspace_ && resource_.empty()) (void)cudaFreeAsync(workspace_, stream_);  // after the work queued on its stream
    else if (workspace_) resource_.release(workspace_, bytes_, static_cast<void*>(stream_), resource_.context);
    exec_ = nullptr, workspace_ = nullptr, stream_ = nullptr, failed_ = false;
    key_.clear();
  }
  void swap(launch_recorder& o) noexcept {
    std::swap(key_, o.key_), std::swap(failed_, o.failed_), std::swap(exec_, o.exec_), std::swap(workspace_, o.workspace_), std::swap(stream_, o.stream_);
    std::swap(resource_, o.resource_), std::swap(bytes_, o.bytes_);
  }
  std::string key_;  ///< the bytes of the key the graph is (to be) recorded for
  bool failed_ = false;
  cudaGraphExec_t exec_ = nullptr;
  void* workspace_ = nullptr;
  cudaStream_t stream_ = nullptr;  ///< where the graph runs, and its workspace is freed
  workspace_resource resource_{};  ///< where the workspace came from (empty: cudaMallocAsync)
  std::size_t bytes_ = 0;
};

/// How many times a launch_recorder has launched a recorded graph in this process.
inline std::uint64_t recorded_graph_launches() { return detail::graph_launches().load(); }

}  // namespace cuda
}  // namespace calm
