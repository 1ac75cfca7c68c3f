// SPDX-License-Identifier: Apache-2.0
// calm/core/warp.hpp: the warp concept every backend implements, and the free functions algorithms
// call. Each function forwards to the backend's warp type; the comments state the contract.
#pragma once

#include <type_traits>

#include "config.hpp"
#include "lane_mask.hpp"
#include "ops.hpp"
#include "scope.hpp"
#include "varying.hpp"

namespace calm {

// A Warp type W (calm::cuda::warp, calm::hip::warp, calm::openmp::warp<Lanes>) provides:
//   W::size                   lanes per warp, a compile-time constant (32; 64 on CDNA; 8..64 on the host)
//   W::lane_mask              lane_mask_t<W::size>
//   W::varying<T>             T on a GPU, lane_array<T, size> on the host
//   W::native_match_any       true where match_any is one hardware instruction
//   w.active()                the lanes taking part; every operation below involves exactly these
// and the member functions the free functions below forward to. A warp value is only valid inside
// the kernel body or block phase that received it; never pass one between host and device.

template <class Warp, class T>
using varying = typename Warp::template varying<T>;

template <class T, class = void>
struct is_warp : std::false_type {};
template <class T>
struct is_warp<T, std::void_t<typename T::lane_mask, decltype(T::size), decltype(std::declval<T const&>().active())>>
    : std::true_type {};

// ---- lanes ----------------------------------------------------------------------------------------

/// The lane's index in its hardware warp, 0 <= lane < W::size (from the hardware, never threadIdx.x).
template <class Warp>
CALM_HD auto lane_id(Warp const& w) { return w.lane_id(); }

/// The lanes taking part. Partial and sparse warps are normal (ragged tails, divergent branches).
template <class Warp>
CALM_HD auto active_mask(Warp const& w) { return w.active(); }

/// Lanes below / at or below / above / at or above the calling lane (not intersected with active()).
template <class Warp>
CALM_HD auto lanes_lt(Warp const& w) { return w.lanes_lt(); }
template <class Warp>
CALM_HD auto lanes_le(Warp const& w) { return w.lanes_le(); }
template <class Warp>
CALM_HD auto lanes_gt(Warp const& w) { return w.lanes_gt(); }
template <class Warp>
CALM_HD auto lanes_ge(Warp const& w) { return w.lanes_ge(); }

/// The lowest active lane (uniform), and whether the calling lane is it.
template <class Warp>
CALM_HD int leader_lane(Warp const& w) { return w.leader(); }
template <class Warp>
CALM_HD auto elect_leader(Warp const& w) { return w.is_leader(); }

/// A number identifying this warp among the warps of its launch, uniform over the warp for any block
/// size (block index times warps per block plus the warp's index in its block). Used to give each
/// warp its place in a random sequence.
template <class Warp>
CALM_HD index_t group_index(Warp const& w) { return w.group_index(); }
/// A free-running counter (cycles on a GPU, nanoseconds on the host), uniform over the warp.
template <class Warp>
CALM_HD std::uint32_t clock(Warp const& w) { return w.clock(); }

// ---- votes and masks ----------------------------------------------------------------------------

/// Bit i set iff lane i is active and its pred holds. Uniform over the active lanes.
template <class Warp, class P>
CALM_HD auto ballot(Warp const& w, P const& pred) { return w.ballot(pred); }
/// Some / every active lane's pred holds (all() of an empty set is true; there is none in practice).
template <class Warp, class P>
CALM_HD bool any(Warp const& w, P const& pred) { return w.any(pred); }
template <class Warp, class P>
CALM_HD bool all(Warp const& w, P const& pred) { return w.all(pred); }

/// Set bits of a lane mask (uniform or varying).
template <class Warp, class M>
CALM_HD auto popc(Warp const& w, M const& m) { return w.popc(m); }
/// 1 + the lowest set bit of a lane mask, 0 if empty (CUDA's __ffs convention).
template <class Warp, class M>
CALM_HD auto ffs(Warp const& w, M const& m) { return w.ffs(m); }
/// 1 + the highest set bit of a lane mask, 0 if empty.
template <class Warp, class M>
CALM_HD auto fls(Warp const& w, M const& m) { return w.fls(m); }

// ---- data exchange --------------------------------------------------------------------------------
// Shuffles move any trivially copyable T word by word. width (a power of two <= W::size) splits the
// warp into segments as CUDA's __shfl_*_sync do. Precondition: the source lane is active; reading an
// inactive lane gives an unspecified value.

/// Each lane gets v from lane (segment start + src % width).
template <class Warp, class V, class S>
CALM_HD auto shuffle(Warp const& w, V const& v, S const& src, int width = Warp::size) { return w.shuffle(v, src, width); }
/// From lane - delta within the segment; lanes with no such source keep their own v.
template <class Warp, class V>
CALM_HD auto shuffle_up(Warp const& w, V const& v, int delta, int width = Warp::size) { return w.shuffle_up(v, delta, width); }
/// From lane + delta within the segment; lanes with no such source keep their own v.
template <class Warp, class V>
CALM_HD auto shuffle_down(Warp const& w, V const& v, int delta, int width = Warp::size) { return w.shuffle_down(v, delta, width); }
/// From lane ^ lane_xor; a source in a later segment leaves the lane its own v.
template <class Warp, class V>
CALM_HD auto shuffle_xor(Warp const& w, V const& v, int lane_xor, int width = Warp::size) { return w.shuffle_xor(v, lane_xor, width); }

/// For each active lane, the mask of active lanes whose key has the same bits (floats compare by
/// bits: +0 and -0 differ, a NaN matches its own bit pattern). Keys: any trivially copyable type.
template <class Warp, class K>
CALM_HD auto match_any(Warp const& w, K const& key) { return w.match_any(key); }

// ---- divergence ----------------------------------------------------------------------------------

/// Run f(w2) for the active lanes whose pred holds, with w2.active() == ballot(pred): the masked form
/// of `if (pred) { ... }`. On a GPU the other lanes skip f; on the host f runs once for the warp.
template <class Warp, class P, class F>
CALM_HD void when(Warp const& w, P const& pred, F&& f) { w.when(pred, static_cast<F&&>(f)); }

/// f(w1, a...) for each active lane with that lane's own values, where w1 is a warp of one lane (its
/// varying<T> is T): the form of a body that needs no other lane (no vote, shuffle or match). On a
/// GPU it is f(w, a...) itself; on the host a scalar loop over the active lanes, which the compiler
/// keeps in registers where the lane-array form goes through memory. Lanes run in increasing order.
template <class Warp, class F, class... A>
CALM_HD void each_lane(Warp const& w, F&& f, A const&... a) { w.each_lane(static_cast<F&&>(f), a...); }

// ---- memory --------------------------------------------------------------------------------------

/// p[i] for the active lanes (inactive lanes read nothing and get an unspecified value).
template <class Warp, class T, class I>
CALM_HD auto load(Warp const& w, T const* p, I const& i) { return w.load(p, i); }
/// p[i] = v for the active lanes.
template <class Warp, class T, class I, class V>
CALM_HD void store(Warp const& w, T* p, I const& i, V const& v) { w.store(p, i, v); }

/// *addr = op(*addr, value) for every active lane, atomically at the given scope (relaxed order).
/// Lanes of one warp that share an address are all applied.
template <class Warp, class Op, class Scope, class A, class V>
CALM_HD void atomic_update(Warp const& w, Op op, Scope s, A const& addr, V const& value) {
  w.atomic_update(op, s, addr, value);
}
/// *addr read atomically at the given scope (relaxed order): a flag or counter other threads update
/// while this one runs, which a plain load may not see (or, on the host, races with). Uniform: the
/// active lanes read one address.
template <class Warp, class Scope, class T>
CALM_HD T atomic_load(Warp const& w, Scope s, T const* addr) {
  return w.atomic_load(s, addr);
}
/// A fence at the given scope, acquire and release (no more: on CUDA fence.acq_rel, not __threadfence's
/// sequentially consistent fence.sc; the host's is seq_cst): this lane's memory operations before it are
/// seen by other threads before those after it. Paired with an atomic that another thread reads (a
/// ticket, a flag) and a fence on that thread, it hands plain writes over to it, as in a last-block-done
/// reduction. It does not order a store before a later load of another address against another thread's
/// store and load (the store-buffering pattern): no calm algorithm needs that.
template <class Warp, class Scope>
CALM_HD void fence(Warp const& w, Scope s) {
  w.fence(s);
}
/// As atomic_update, and each lane gets the value *addr held just before its own update: the updates
/// of one address happen in some order and each lane sees the result of those before it.
template <class Warp, class Op, class Scope, class A, class V>
CALM_HD auto atomic_fetch_update(Warp const& w, Op op, Scope s, A const& addr, V const& value) {
  return w.atomic_fetch_update(op, s, addr, value);
}

}  // namespace calm
