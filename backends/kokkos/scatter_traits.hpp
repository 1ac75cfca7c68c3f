// SPDX-License-Identifier: Apache-2.0
// calm/backends/kokkos/scatter_traits.hpp: what calm::kokkos::ScatterView is made of: the Kokkos tags,
// the defaults per execution space, each op's forms, the number of GPU copies and the default lane merge.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_ScatterView.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../../core/ops.hpp"
#include "../../algorithms/warp/vote_reduce.hpp"

namespace calm {
namespace kokkos {

using Kokkos::Experimental::ScatterAtomic;
using Kokkos::Experimental::ScatterDuplicated;
using Kokkos::Experimental::ScatterMax;
using Kokkos::Experimental::ScatterMin;
using Kokkos::Experimental::ScatterNonAtomic;
using Kokkos::Experimental::ScatterNonDuplicated;
using Kokkos::Experimental::ScatterProd;
using Kokkos::Experimental::ScatterSum;

namespace detail {

/// Whether an execution space runs on a GPU, where updates go through calm's warp merges.
template <class Space>
struct is_gpu_space : std::false_type {};
#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct is_gpu_space<Kokkos::Cuda> : std::true_type {};
#endif
#if defined(KOKKOS_ENABLE_HIP)
#if KOKKOS_VERSION >= 40000
template <>
struct is_gpu_space<Kokkos::HIP> : std::true_type {};
#else
template <>
struct is_gpu_space<Kokkos::Experimental::HIP> : std::true_type {};
#endif
#endif

/// On Cuda and HIP: duplicated copies in device memory, updated atomically. Every other space keeps
/// Kokkos's defaults (Serial: neither; OpenMP and Threads: duplicated, not atomic; SYCL, OpenMPTarget:
/// atomic, not duplicated).
template <class Space>
using default_duplication = std::conditional_t<is_gpu_space<Space>::value, ScatterDuplicated,
                                               typename Kokkos::Impl::Experimental::DefaultDuplication<Space>::type>;
template <class Space, class Duplication>
using default_contribution = std::conditional_t<is_gpu_space<Space>::value, ScatterAtomic,
                                                typename Kokkos::Impl::Experimental::DefaultContribution<Space, Duplication>::type>;

/// What each Scatter op is: its identity, its plain and atomic forms, and the calm op that merges lanes.
template <class Op>
struct op_traits;
template <>
struct op_traits<ScatterSum> {
  using calm_op = calm::plus;
  template <class T> static KOKKOS_INLINE_FUNCTION T identity() { return Kokkos::reduction_identity<T>::sum(); }
  template <class T> static KOKKOS_INLINE_FUNCTION T combine(T a, T b) { return a + b; }
  template <class T> static KOKKOS_INLINE_FUNCTION void atomic(T* p, T v) { Kokkos::atomic_add(p, v); }
};
template <>
struct op_traits<ScatterProd> {
  using calm_op = void;  // no warp merge: Kokkos's atomic multiply
  template <class T> static KOKKOS_INLINE_FUNCTION T identity() { return Kokkos::reduction_identity<T>::prod(); }
  template <class T> static KOKKOS_INLINE_FUNCTION T combine(T a, T b) { return a * b; }
  template <class T> static KOKKOS_INLINE_FUNCTION void atomic(T* p, T v) { Kokkos::atomic_fetch_mul(p, v); }
};
template <>
struct op_traits<ScatterMax> {
  using calm_op = calm::max;
  template <class T> static KOKKOS_INLINE_FUNCTION T identity() { return Kokkos::reduction_identity<T>::max(); }
  template <class T> static KOKKOS_INLINE_FUNCTION T combine(T a, T b) { return a < b ? b : a; }
  template <class T> static KOKKOS_INLINE_FUNCTION void atomic(T* p, T v) { Kokkos::atomic_fetch_max(p, v); }
};
template <>
struct op_traits<ScatterMin> {
  using calm_op = calm::min;
  template <class T> static KOKKOS_INLINE_FUNCTION T identity() { return Kokkos::reduction_identity<T>::min(); }
  template <class T> static KOKKOS_INLINE_FUNCTION T combine(T a, T b) { return b < a ? b : a; }
  template <class T> static KOKKOS_INLINE_FUNCTION void atomic(T* p, T v) { Kokkos::atomic_fetch_min(p, v); }
};

/// Whether calm merges a warp's lanes for this op and type (calm's atomic ops and types).
template <class Op, class T>
CALM_HD constexpr bool merges_lanes() {
  using C = typename op_traits<Op>::calm_op;
  if constexpr (std::is_void<C>::value) return false;
  else return calm::is_atomic_type<T> && C::template supports<T>;
}

/// Copies of the table on a GPU: enough that the copies hold about 2^17 entries, so that the device
/// atomics of different warps rarely meet (2^26 uniform keys: 15 GB/s into 256 entries, 360 GB/s
/// into 65,536 on an H200), at most 4,096; and at least 8 copies while they hold at most 2^22 entries
/// (16 MiB of floats), which spread the lanes a sampled merge misses on a hot key of a large table.
/// Each copy is padded to whole 128-byte lines.
inline std::size_t gpu_copies(std::size_t padded_span) {
  std::size_t r = 1;
  while (r < 4096 && 2 * r * padded_span <= (std::size_t(1) << 17)) r *= 2;
  while (r < 8 && 2 * r * padded_span <= (std::size_t(1) << 22)) r *= 2;
  return r;
}

/// out[i] = op(out[i], copies[r * stride + i] for r in [first, copies)), i < n: contribute_into.
template <class Op, class T>
struct combine_copies {
  T* out;
  T const* copies;
  std::size_t stride, first, count;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const {
    T v = out[i];
    for (std::size_t r = first; r < count; ++r) v = op_traits<Op>::template combine<T>(v, copies[r * stride + i]);
    out[i] = v;
  }
};

/// Bytes each copy of a table is padded to: a GPU's 128-byte line, a CPU's 64-byte cache line.
template <class Space>
constexpr std::size_t copy_alignment = is_gpu_space<Space>::value ? 128 : 64;

}  // namespace detail

/// The default lane merge of a GPU ScatterView: two sampled keys per warp (calm::vote_reduce<2>, from a
/// fixed seed), each merged when at least eight lanes share it, the rest one atomic each. On an H100
/// (perf/results/cuda-h100-2026-11-22-kokkos.md): sampling is free on keys that do not collide, where
/// calm::peer_reduce's exact match costs a third of the throughput; merging small groups costs more
/// than it saves (image-like keys at 65,536 bins: 800 GB/s unmerged; 505, 555, 656 merging groups from
/// two, four, eight lanes; Kokkos 561), while a hot key shared by many lanes must be merged (half the
/// keys on one bin: 199 against 75 unmerged).
struct sampled_merge {
  static constexpr std::uint32_t seed = 0x9e3779b9u;  ///< vote_reduce's sampling seed
  static constexpr int min_lanes = 8;                 ///< merge a sampled key's lanes where at least this many share it
  /// The lanes' groups (the strategy concept's group).
  template <class Warp, class A>
  CALM_HD auto group(Warp const& w, A const& addr) const {
    return calm::vote_reduce<2>{seed, min_lanes}.group(w, addr);
  }
};

}  // namespace kokkos
}  // namespace calm
