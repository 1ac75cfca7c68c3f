// SPDX-License-Identifier: Apache-2.0
// calm/backends/hip/warp.hpp: the warp (wavefront) on AMD GPUs with ROCm 5.2 intrinsics: no *_sync,
// no __activemask, no match_any (emulated by the get_peers ballot loop). W is 64 on gfx9, 32 on gfx10+.
#pragma once

#include <hip/hip_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../../core/config.hpp"
#include "../../core/lane_mask.hpp"
#include "atomic.hpp"

// The wavefront width is a property of the device pass; __AMDGCN_WAVEFRONT_SIZE is wrong in the host
// pass and deprecated. The host pass never runs warp code, so it takes 64 for its declarations: never
// pass a warp or a lane_mask between host and device.
#if defined(__GFX9__)
#define CALM_HIP_WARP_SIZE 64
#elif defined(__GFX10__) || defined(__GFX11__) || defined(__GFX12__)
#define CALM_HIP_WARP_SIZE 32
#elif CALM_DEVICE_PASS
#error "calm: unknown AMD GPU family; expected gfx9 (wave64) or gfx10/11/12 (wave32)"
#else
#define CALM_HIP_WARP_SIZE 64
#endif

namespace calm {
namespace hip {

namespace detail {
template <class T, class Shfl>
__device__ inline T shuffle_words(T const& v, Shfl shfl) {
  static_assert(std::is_trivially_copyable<T>::value, "shuffled values must be trivially copyable");
  constexpr int words = (sizeof(T) + 3) / 4;
  int in[words] = {};
  memcpy(in, &v, sizeof(T));
  int out[words];
#pragma unroll
  for (int k = 0; k < words; ++k) out[k] = shfl(in[k]);
  T r;
  memcpy(&r, out, sizeof(T));
  return r;
}
/// Bitwise equality of two trivially copyable values, a word at a time (there is no device memcmp).
template <class T>
__device__ inline bool same_bits(T const& a, T const& b) {
  constexpr int words = (sizeof(T) + 3) / 4;
  int wa[words] = {}, wb[words] = {};
  memcpy(wa, &a, sizeof(T));
  memcpy(wb, &b, sizeof(T));
  bool same = true;
#pragma unroll
  for (int k = 0; k < words; ++k) same = same && wa[k] == wb[k];
  return same;
}
}  // namespace detail

struct warp {
  static constexpr int size = CALM_HIP_WARP_SIZE;
  using lane_mask = lane_mask_t<size>;
  template <class T>
  using varying = T;
  static constexpr bool native_match_any = false;
  // Set-up cost s of inequalities (1) and (2) of 000 section 3.1, in reduction steps. Not measured on
  // an AMD GPU yet (none here): the documented default is the H200 figure; rerun bench_setup_cost there.
  static constexpr float scan_reduce_setup_steps = 2.1f;
  static constexpr float vote_reduce_setup_steps = 5.2f;

  /// The lanes taking part (the exec mask when the warp was formed).
  lane_mask mask;

  __device__ static warp current() { return warp{static_cast<lane_mask>(__ballot(1))}; }

  __device__ lane_mask active() const { return mask; }
  __device__ int lane_id() const { return static_cast<int>(__lane_id()); }
  __device__ lane_mask lanes_lt() const { return static_cast<lane_mask>((lane_mask(1) << lane_id()) - 1); }
  __device__ lane_mask lanes_le() const { return static_cast<lane_mask>(lanes_lt() | (lane_mask(1) << lane_id())); }
  __device__ lane_mask lanes_gt() const { return static_cast<lane_mask>(first_lanes<lane_mask>(size) & ~lanes_le()); }
  __device__ lane_mask lanes_ge() const { return static_cast<lane_mask>(first_lanes<lane_mask>(size) & ~lanes_lt()); }
  __device__ int leader() const { return ffs(mask) - 1; }
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

  __device__ lane_mask ballot(bool p) const { return static_cast<lane_mask>(__ballot(p)) & mask; }
  __device__ bool any(bool p) const { return ballot(p) != 0; }
  __device__ bool all(bool p) const { return ballot(p) == mask; }
  __device__ static int popc(lane_mask m) { return __popcll(static_cast<unsigned long long>(m)); }
  __device__ static int ffs(lane_mask m) { return __ffsll(static_cast<unsigned long long>(m)); }
  __device__ static int fls(lane_mask m) { return m ? 64 - __clzll(static_cast<long long>(m)) : 0; }

  template <class T>
  __device__ T shuffle(T const& v, int src, int width = size) const {
    return detail::shuffle_words(v, [src, width](int x) { return __shfl(x, src, width); });
  }
  template <class T>
  __device__ T shuffle_up(T const& v, int delta, int width = size) const {
    return detail::shuffle_words(v, [delta, width](int x) { return __shfl_up(x, static_cast<unsigned>(delta), width); });
  }
  template <class T>
  __device__ T shuffle_down(T const& v, int delta, int width = size) const {
    return detail::shuffle_words(v, [delta, width](int x) { return __shfl_down(x, static_cast<unsigned>(delta), width); });
  }
  template <class T>
  __device__ T shuffle_xor(T const& v, int lane_xor, int width = size) const {
    return detail::shuffle_words(v, [lane_xor, width](int x) { return __shfl_xor(x, lane_xor, width); });
  }

  /// Emulated: the lowest unclaimed lane broadcasts its key and claims the lanes that equal it; one
  /// round per distinct key (the get_peers loop of the GTC warp-aggregation talk).
  template <class K>
  __device__ lane_mask match_any(K const& key) const {
    static_assert(std::is_trivially_copyable<K>::value, "match_any keys must be trivially copyable");
    lane_mask unclaimed = mask, mine = 0;
    while (unclaimed) {
      K const leader_key = shuffle(key, ffs(unclaimed) - 1);
      lane_mask const peers = ballot(detail::same_bits(leader_key, key));
      if ((peers >> lane_id()) & 1) mine = peers;
      unclaimed &= ~peers;
    }
    return mine;
  }

  template <class F>
  __device__ void when(bool p, F&& f) const {
    lane_mask m = ballot(p);
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
  __device__ void fence(scope::device) const { __threadfence(); }
  __device__ void fence(scope::block_local) const { __threadfence_block(); }
};

}  // namespace hip
}  // namespace calm
