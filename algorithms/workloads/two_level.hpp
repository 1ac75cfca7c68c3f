// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/workloads/two_level.hpp: reduce an array into one value with an idempotent op (max, min, and, or)
// by the four schemes of 003: naive atomics, culling against a cached value, block reduce, block-local atomics.
#pragma once

#include <string>
#include <type_traits>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "../bulk/privatize.hpp"

namespace calm {

/// The schemes of 003 ("Performance advantages and penalties of atomic operations in CUDA").
enum class two_level {
  /// One device atomic per value ("naive approach").
  naive,
  /// Each block caches *out in block-local memory and only values that would change the cached value
  /// go to the device ("less naive": culling); the cache follows the block's own updates.
  cull,
  /// Each thread folds its values in registers, each warp merges its lanes, one device atomic per
  /// block ("smart": block reduce then one atomic).
  block_reduce,
  /// One block-local atomic per value into a block accumulator, then one device atomic per block
  /// ("smarter": atomics on both levels).
  block_atomic,
};

inline char const* to_string(two_level s) {
  static char const* names[] = {"naive", "cull", "block_reduce", "block_atomic"};
  return names[static_cast<int>(s)];
}

namespace detail {

template <int Vec, two_level Scheme, class Op, class T>
struct two_level_program {
  Op op;
  T const* values;
  index_t n;
  T* out;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    int const threads = blk.threads();
    // block-local: [0] the block's accumulator (or the cached value), [1 ..] one accumulator per thread
    T* const shared = blk.template scratch<T>();
    T* const acc = shared + 1;
    T const id = Op::template identity<T>();
    blk.for_each_warp([&](auto const& w, auto t) {
      store(w, acc, t, id);
      when(w, t == 0, [&](auto const& l) { store(l, shared, 0, Scheme == two_level::cull ? load(l, out, 0) : id); });
    });
    blk.sync();
    index_t const chunks = n / Vec;
    auto const fold = [&](auto const& w, auto const& t, auto const& v) {
      if constexpr (Scheme == two_level::naive) {
        atomic_update(w, op, scope::device{}, out, v);
      } else if constexpr (Scheme == two_level::cull) {
        auto const cached = load(w, shared, 0);
        when(w, map(op, cached, v) != cached, [&](auto const& u) {
          atomic_update(u, op, scope::block_local{}, shared, v);
          atomic_update(u, op, scope::device{}, out, v);
        });
      } else if constexpr (Scheme == two_level::block_reduce) {
        store(w, acc, t, map(op, load(w, acc, t), v));
      } else {
        atomic_update(w, op, scope::block_local{}, shared, v);
      }
    };
    blk.for_each_tile((chunks + threads - 1) / threads, [&](index_t tile) {
      index_t const base = tile * threads;
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const c = map([base](int tt) { return base + tt; }, t);
        when(w, c < chunks, [&](auto const& v) {
          auto const vc = load_chunk<Vec>(v, values, c);
          for (int j = 0; j < Vec; ++j) fold(v, t, component(vc, j));
        });
      });
    });
    if (Vec > 1 && blk.index() == 0)
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const i = map([c = chunks * Vec](int tt) { return c + tt; }, t);
        when(w, i < n, [&](auto const& v) { fold(v, t, load(v, values, i)); });
      });
    if constexpr (Scheme == two_level::block_reduce) {
      blk.sync();
      blk.for_each_warp([&](auto const& w, auto t) {
        update<peer_reduce>(w, op, scope::block_local{}, shared, load(w, acc, t));
      });
    }
    if constexpr (Scheme == two_level::block_reduce || Scheme == two_level::block_atomic) {
      blk.sync();
      blk.for_each_warp([&](auto const& w, auto t) {
        when(w, t == 0, [&](auto const& l) {
          T const total = shared[0];
          if (!(total == id)) atomic_update(l, op, scope::device{}, out, total);
        });
      });
    }
  }
};

}  // namespace detail

/// *out = op(*out, values[0], ..., values[n-1]) for an idempotent op (max, min, bit_and, bit_or), by
/// one of the four schemes of 003. Throws calm::error before launching on bad arguments; asynchronous
/// on a GPU. block_reduce is the scheme to use; the others are there to compare (perf/bench_two_level).
///
///   calm::reduce_idempotent(calm::max{}, values, n, result, calm::two_level::block_reduce);
template <class Op, class T, class Exec = default_exec>
void reduce_idempotent(Op op, T const* values, index_t n, T* out, two_level scheme = two_level::block_reduce,
                       int threads = 256, Exec const& ex = Exec{}) {
  check_atomic_op<Op, T>();
  static_assert(Op::idempotent, "reduce_idempotent: the op must be idempotent (max, min, bit_and, bit_or)");
  require(n >= 0, errc::invalid_argument, [&] { return "reduce_idempotent: n = " + std::to_string(n) + " is negative"; });
  require(n == 0 || values != nullptr, errc::invalid_argument, "reduce_idempotent: values is null");
  require(out != nullptr, errc::invalid_argument, "reduce_idempotent: out is null");
  require(threads >= 1 && threads <= 1024, errc::invalid_argument, "reduce_idempotent: threads must be in [1, 1024]");
  int const si = static_cast<int>(scheme);
  require(si >= 0 && si <= static_cast<int>(two_level::block_atomic), errc::invalid_argument, [&] { return "reduce_idempotent: unknown scheme " + std::to_string(si); });
  if (n == 0) return;
  std::size_t const bytes = (static_cast<std::size_t>(threads) + 1) * sizeof(T);
  bool const vec = Exec::vector_loads && sizeof(T) * 4 <= 16 && reinterpret_cast<std::uintptr_t>(values) % (sizeof(T) * 4) == 0;
  index_t const tiles = (n + threads * 4 - 1) / (threads * 4);
  auto launch = [&](auto program, index_t max_blocks) { ex.for_each_resident_block(max_blocks, threads, bytes, program); };
  auto dispatch = [&](auto scheme_tag) {
    constexpr two_level S = decltype(scheme_tag)::value;
    if (vec) launch(detail::two_level_program<4, S, Op, T>{op, values, n, out}, tiles);
    else launch(detail::two_level_program<1, S, Op, T>{op, values, n, out}, tiles * 4);
  };
  switch (scheme) {
    case two_level::naive: dispatch(std::integral_constant<two_level, two_level::naive>{}); break;
    case two_level::cull: dispatch(std::integral_constant<two_level, two_level::cull>{}); break;
    case two_level::block_reduce: dispatch(std::integral_constant<two_level, two_level::block_reduce>{}); break;
    case two_level::block_atomic: dispatch(std::integral_constant<two_level, two_level::block_atomic>{}); break;
  }
}

}  // namespace calm
