// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/block/block_reduce.hpp: scan_reduce and vote_reduce over all N threads of a block, with
// barriers, as 000 section 3.1 states Alg. 1 and Alg. 2 (block scope), staged in block-local memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../warp/update.hpp"

namespace calm {

/// What the threads of a block contribute to a block-scope reduction, and the working space it needs,
/// all in block-local memory. Thread t stores its address in addr[t] (nullptr: nothing to add) and its
/// value in value[t], then every thread of the block calls scan_reduce_block or vote_reduce_block.
///   auto st = calm::block_stage<float>::carve(blk.template scratch<unsigned char>(), blk.threads());
/// scratch size: block_stage<T>::bytes(threads).
template <class T>
struct block_stage {
  T** addr;   ///< thread t's address (nullptr: nothing to add)
  T* value;   ///< thread t's value
  T* value2;  ///< working space: a second value per thread
  unsigned char* done[2];  ///< working space: per thread, done or not (two rounds)
  unsigned char* head;  ///< scan_reduce_block: run heads; vote_reduce_block: merged threads
  int* flags;    ///< [0] the pre-check, [1..3] "some thread is not done" per scan step (rotating)
  int* counts;   ///< [0] lanes on the sampled key, [1] lanes with an address
  T** sampled;   ///< vote_reduce_block: the sampled address
  T* total;      ///< vote_reduce_block: the sampled key's reduction

  /// b rounded up to 16 bytes.
  CALM_HD static constexpr std::size_t align(std::size_t b) { return (b + 15) / 16 * 16; }
  /// The block-local bytes the stage of `threads` threads takes.
  static constexpr std::size_t bytes(int threads) {
    std::size_t const n = static_cast<std::size_t>(threads);
    return align(n * sizeof(T*)) + 2 * align(n * sizeof(T)) + 3 * align(n) + align(6 * sizeof(int)) +
           align(sizeof(T*)) + align(sizeof(T));
  }
  /// The stage laid out over the block-local bytes at p (bytes(threads) of them).
  CALM_HD static block_stage carve(unsigned char* p, int threads) {
    std::size_t const n = static_cast<std::size_t>(threads);
    block_stage s;
    s.addr = reinterpret_cast<T**>(p), p += align(n * sizeof(T*));
    s.value = reinterpret_cast<T*>(p), p += align(n * sizeof(T));
    s.value2 = reinterpret_cast<T*>(p), p += align(n * sizeof(T));
    s.done[0] = p, p += align(n);
    s.done[1] = p, p += align(n);
    s.head = p, p += align(n);
    s.flags = reinterpret_cast<int*>(p), s.counts = s.flags + 4, p += align(6 * sizeof(int));
    s.sampled = reinterpret_cast<T**>(p), p += align(sizeof(T*));
    s.total = reinterpret_cast<T*>(p);
    return s;
  }
};

/// Alg. 1 over the N threads of a block: run heads are found once, a log-step segmented scan with a
/// barrier per step runs while some thread has not reached its run's head, and the last thread of each
/// run applies the run's total; when no run reaches the threshold of inequality (1), every thread
/// applies its own value (lines 10-15). Call from every thread of the block, after staging; the stage
/// may be reused after it returns. threshold 0: from the backend's measured set-up cost.
template <class Block, class Op, class Scope, class T>
CALM_HD void scan_reduce_block(Block const& blk, Op op, Scope s, block_stage<T> const& st, int threshold = 0) {
  check_atomic_op<Op, T>();
  int const n = blk.threads();
  int need = 1;
  blk.for_each_warp([&](auto const& w, auto t) {
    using Warp = std::decay_t<decltype(w)>;
    need = threshold > 0 ? threshold : scan_reduce_threshold(Warp::scan_reduce_setup_steps);
    auto const a = load(w, st.addr, t);
    auto const prev = load(w, st.addr, select(t > 0, t - 1, t));
    auto const head = select(t > 0, prev != a, true) | (a == decltype(a)(nullptr));
    store(w, st.head, t, head);
    store(w, st.done[0], t, head);
    when(w, t == 0, [&](auto const& l) {
      for (int k = 0; k < 4; ++k) store(l, st.flags, t + k, 0);
    });
  });
  blk.sync();
  // pre-check: a run of `need` threads ends at t iff threads t - need + 2 .. t all continue a run
  blk.for_each_warp([&](auto const& w, auto t) {
    auto const a = load(w, st.addr, t);
    auto ok = (t >= need - 1) & (a != decltype(a)(nullptr));
    for (int k = 0; k + 1 < need; ++k) ok = ok & (load(w, st.head, select(t >= k, t - k, t)) == 0);
    when(w, ok, [&](auto const& l) { atomic_update(l, bit_or{}, scope::block_local{}, st.flags, 1); });
  });
  blk.sync();
  bool const reduce = need <= 1 || st.flags[0] != 0;
  T* val[2] = {st.value, st.value2};
  int cur = 0;
  if (reduce) {
    for (int d = 1, step = 0; d < n; d <<= 1, ++step) {
      int* const busy = st.flags + 1 + step % 3;
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const src = select(t >= d, t - d, t);
        auto const done = load(w, st.done[cur], t) != 0;
        auto const x = load(w, val[cur], t);
        store(w, val[1 - cur], t, select(done, x, map(op, load(w, val[cur], src), x)));
        auto const now = select(done, done, load(w, st.done[cur], src) != 0);
        store(w, st.done[1 - cur], t, now);
        when(w, !now, [&](auto const& l) { atomic_update(l, bit_or{}, scope::block_local{}, busy, 1); });
        when(w, t == 0, [&](auto const& l) { store(l, st.flags + 1 + (step + 1) % 3, t, 0); });
      });
      blk.sync();
      cur = 1 - cur;
      if (*busy == 0) break;  // Alg. 1 line 22: every thread reached its head
    }
  }
  // the last thread of each run (or, without reduction, every thread) applies its value
  blk.for_each_warp([&](auto const& w, auto t) {
    auto const a = load(w, st.addr, t);
    auto const next_head = load(w, st.head, select(t + 1 < n, t + 1, t)) != 0;
    auto const last = (t + 1 == n) | next_head | !reduce;
    when(w, last & (a != decltype(a)(nullptr)), [&](auto const& l) { atomic_update(l, op, s, a, load(l, val[cur], t)); });
  });
  blk.sync();
}

/// Alg. 2 over the N threads of a block, VRm with M samples (VR1 for M = 1). For each sample k a thread
/// chosen by the full-cycle sequence at position seed + block index * M + k is sampled; the threads
/// sharing its address are counted and, if they meet inequality (2) over the block's N contributing
/// threads, reduced in block-local memory (a peer_reduce per warp, one block-local atomic per warp)
/// and applied by one thread. A sample that lands on an already merged thread, or one with no address,
/// merges nothing. Every thread left unmerged applies its own value. Call from every thread of the
/// block, after staging; the stage may be reused after it returns.
template <int M = 1, class Block, class Op, class Scope, class T>
CALM_HD void vote_reduce_block(Block const& blk, Op op, Scope s, block_stage<T> const& st, std::uint32_t seed, int threshold = 0) {
  static_assert(M >= 1, "vote_reduce_block samples at least one key");
  check_atomic_op<Op, T>();
  int const n = blk.threads();
  unsigned char* const merged = st.head;  // scan_reduce_block's head flags, unused here
  blk.for_each_warp([&](auto const& w, auto t) {
    store(w, merged, t, 0);
    when(w, t == 0, [&](auto const& l) { store(l, st.counts, 1, 0); });
  });
  blk.sync();
  blk.for_each_warp([&](auto const& w, auto t) {
    auto const a = load(w, st.addr, t);
    when(w, a != decltype(a)(nullptr), [&](auto const& v) { update<peer_reduce>(v, plus{}, scope::block_local{}, st.counts + 1, constant(1)); });
  });
  blk.sync();
  int const contributing = st.counts[1];
  int need = 2;
  blk.for_each_warp([&](auto const& w, auto) {
    using Warp = std::decay_t<decltype(w)>;
    need = threshold > 0 ? threshold : vote_reduce_threshold(contributing, Warp::vote_reduce_setup_steps);
  });
  for (int k = 0; k < M; ++k) {
    if (k > 0) blk.sync();  // every thread has read the last sample's address and votes before they change
    std::uint32_t const position = seed + static_cast<std::uint32_t>(blk.index()) * M + static_cast<std::uint32_t>(k);
    int const pick = static_cast<int>(detail::full_cycle_sequence(position) % static_cast<std::uint32_t>(n));
    blk.for_each_warp([&](auto const& w, auto t) {
      when(w, t == pick, [&](auto const& l) {
        auto const a = load(l, st.addr, t);
        store(l, st.sampled, 0, select(load(l, merged, t) != 0, decltype(a)(nullptr), a));
        store(l, st.counts, 0, 0);
        store(l, st.total, 0, Op::template identity<T>());
      });
    });
    blk.sync();
    T* const sampled = *st.sampled;
    if (sampled == nullptr) continue;  // uniform: nothing to vote on this round
    blk.for_each_warp([&](auto const& w, auto t) {
      auto const a = load(w, st.addr, t);
      when(w, a == sampled, [&](auto const& m) { update<peer_reduce>(m, plus{}, scope::block_local{}, st.counts, constant(1)); });
    });
    blk.sync();
    int const votes = st.counts[0];
    if (votes < need || votes < 2) continue;  // uniform: too few to pay, they stay for the naive pass
    blk.for_each_warp([&](auto const& w, auto t) {
      auto const a = load(w, st.addr, t);
      when(w, a == sampled, [&](auto const& m) {
        update<peer_reduce>(m, op, scope::block_local{}, st.total, load(m, st.value, t));
        store(m, merged, t, 1);
      });
    });
    blk.sync();
    blk.for_each_warp([&](auto const& w, auto t) {
      when(w, t == 0, [&](auto const& l) { atomic_update(l, op, s, sampled, load(l, st.total, 0)); });
    });
    blk.sync();
  }
  blk.for_each_warp([&](auto const& w, auto t) {
    auto const a = load(w, st.addr, t);
    when(w, (load(w, merged, t) == 0) & (a != decltype(a)(nullptr)), [&](auto const& o) { atomic_update(o, op, s, a, load(o, st.value, t)); });
  });
  blk.sync();
}

}  // namespace calm
