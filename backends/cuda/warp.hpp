// SPDX-License-Identifier: Apache-2.0
// calm/backends/cuda/warp.hpp: the warp on NVIDIA GPUs: *_sync intrinsics over an explicit member
// mask, lane id from the hardware (%laneid), native __match_any_sync (sm_70+). A varying<T> is a T.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../../core/lane_mask.hpp"
#include "atomic.hpp"

namespace calm {
namespace cuda {

namespace detail {
/// Move any trivially copyable T through a 32-bit shuffle, one word at a time.
template <class T, class Shfl>
__device__ inline T shuffle_words(T const& v, Shfl shfl) {
  static_assert(std::is_trivially_copyable<T>::value, "shuffled values must be trivially copyable");
  constexpr int words = (sizeof(T) + 3) / 4;
  unsigned int in[words] = {};
  memcpy(in, &v, sizeof(T));
  unsigned int out[words];
#pragma unroll
  for (int k = 0; k < words; ++k) out[k] = shfl(in[k]);
  T r;
  memcpy(&r, out, sizeof(T));
  return r;
}
}  // namespace detail

struct warp {
  static constexpr int size = 32;
  using lane_mask = std::uint32_t;
  template <class T>
  using varying = T;
  static constexpr bool native_match_any = true;
  // Set-up cost s of inequalities (1) and (2) of 000 section 3.1, in reduction steps: measured on an
  // H200 (2026-11-22) by perf/bench_setup_cost.cpp, see perf/results/cuda-h200-2026-11-22-strategies.md.
  static constexpr float scan_reduce_setup_steps = 2.1f;
  static constexpr float vote_reduce_setup_steps = 5.2f;

  /// The lanes taking part: every *_sync intrinsic names exactly these.
  lane_mask mask;

  /// The warp of the lanes that reach this point together.
  __device__ static warp current() { return warp{__activemask()}; }

  __device__ lane_mask active() const { return mask; }
  __device__ int lane_id() const {
    unsigned int r;
    asm("mov.u32 %0, %%laneid;" : "=r"(r));
    return static_cast<int>(r);
  }
  __device__ lane_mask lanes_lt() const {
    unsigned int r;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(r));
    return r;
  }
  __device__ lane_mask lanes_le() const {
    unsigned int r;
    asm("mov.u32 %0, %%lanemask_le;" : "=r"(r));
    return r;
  }
  __device__ lane_mask lanes_gt() const {
    unsigned int r;
    asm("mov.u32 %0, %%lanemask_gt;" : "=r"(r));
    return r;
  }
  __device__ lane_mask lanes_ge() const {
    unsigned int r;
    asm("mov.u32 %0, %%lanemask_ge;" : "=r"(r));
    return r;
  }
  __device__ int leader() const { return __ffs(mask) - 1; }
  __device__ bool is_leader() const { return lane_id() == leader(); }

  /// The warp's index in the launch: block index times warps per block plus the warp's index in its
  /// block (thread ids linearized x, y, z). Uniform over the warp for any block size.
  __device__ index_t group_index() const {
    index_t const block = blockIdx.x + static_cast<index_t>(gridDim.x) * (blockIdx.y + static_cast<index_t>(gridDim.y) * blockIdx.z);
    index_t const tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    index_t const threads = blockDim.x * blockDim.y * blockDim.z;
    // warps never span blocks: a block of 100 threads has 4 warps, the last one ragged
    return block * ((threads + size - 1) / size) + tid / size;
  }
  /// The leader lane's cycle counter.
  __device__ std::uint32_t clock() const { return shuffle(static_cast<std::uint32_t>(clock64()), leader()); }

  __device__ lane_mask ballot(bool p) const { return __ballot_sync(mask, p); }
  __device__ bool any(bool p) const { return __any_sync(mask, p) != 0; }
  __device__ bool all(bool p) const { return __all_sync(mask, p) != 0; }
  __device__ static int popc(lane_mask m) { return __popc(m); }
  __device__ static int ffs(lane_mask m) { return __ffs(static_cast<int>(m)); }
  __device__ static int fls(lane_mask m) { return 32 - __clz(static_cast<int>(m)); }

  template <class T>
  __device__ T shuffle(T const& v, int src, int width = size) const {
    lane_mask m = mask;
    return detail::shuffle_words(v, [m, src, width](unsigned int x) { return __shfl_sync(m, x, src, width); });
  }
  template <class T>
  __device__ T shuffle_up(T const& v, int delta, int width = size) const {
    lane_mask m = mask;
    return detail::shuffle_words(v, [m, delta, width](unsigned int x) { return __shfl_up_sync(m, x, delta, width); });
  }
  template <class T>
  __device__ T shuffle_down(T const& v, int delta, int width = size) const {
    lane_mask m = mask;
    return detail::shuffle_words(v, [m, delta, width](unsigned int x) { return __shfl_down_sync(m, x, delta, width); });
  }
  template <class T>
  __device__ T shuffle_xor(T const& v, int lane_xor, int width = size) const {
    lane_mask m = mask;
    return detail::shuffle_words(v, [m, lane_xor, width](unsigned int x) { return __shfl_xor_sync(m, x, lane_xor, width); });
  }

  /// One __match_any_sync for keys of 8 bytes or fewer than 4; one per 32-bit word otherwise.
  template <class K>
  __device__ lane_mask match_any(K const& key) const {
    static_assert(std::is_trivially_copyable<K>::value, "match_any keys must be trivially copyable");
    if constexpr (sizeof(K) == 8) {
      unsigned long long u;
      memcpy(&u, &key, 8);
      return __match_any_sync(mask, u);
    } else {
      constexpr int words = (sizeof(K) + 3) / 4;
      unsigned int w[words] = {};
      memcpy(w, &key, sizeof(K));
      lane_mask m = mask;
#pragma unroll
      for (int k = 0; k < words; ++k) m &= __match_any_sync(mask, w[k]);
      return m;
    }
  }

  template <class F>
  __device__ void when(bool p, F&& f) const {
    lane_mask m = __ballot_sync(mask, p);
    if (p) f(warp{m});
  }

  template <class F, class... A>
  __device__ void each_lane(F&& f, A const&... a) const { f(*this, a...); }

  template <class T, class I>
  __device__ std::remove_cv_t<T> load(T* p, I i) const { return p[i]; }
  template <class T, class I, class V>
  __device__ void store(T* p, I i, V const& v) const { p[i] = static_cast<T>(v); }

  template <class Op, class Scope, class T, class V>
  __device__ void atomic_update(Op op, Scope s, T* addr, V const& value) const {
    atomic_fetch(op, s, addr, static_cast<T>(value));
  }
  template <class Op, class Scope, class T, class V>
  __device__ T atomic_fetch_update(Op op, Scope s, T* addr, V const& value) const {
    return atomic_fetch(op, s, addr, static_cast<T>(value));
  }
  template <class Scope, class T>
  __device__ T atomic_load(Scope s, T const* addr) const { return atomic_read(s, addr); }
  // acquire-release, not __threadfence's sequential consistency (fence.sc.gpu): enough to hand writes over
  // through a ticket or flag (core/warp.hpp); the sampling's meeting waits on it twice a call, 0.06-0.16 us less a call on an
  // H200 than __threadfence (perf/results/cuda-h200-2026-12-02-fence-ab.json)
  __device__ void fence(scope::device) const { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
  __device__ void fence(scope::block_local) const { __threadfence_block(); }
};

}  // namespace cuda
}  // namespace calm
