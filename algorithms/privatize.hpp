// calm/algorithms/privatize.hpp: scatter whole arrays through a table privatized in each block's
// block-local memory (001 §3 replication and padding, §4.2 histogram), lanes merged first by a strategy.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../core/error.hpp"
#include "../core/exec.hpp"
#include "private_table.hpp"

namespace calm {

/// What privatize_scatter may be told; 0 / -1 leave the choice to plan_privatize.
struct privatize_options {
  int copies = 0;   ///< R, the copies of the table per block (0: by the rule below)
  int pad = -1;     ///< entries between copies (-1: one when R > 1)
  copy_mapping mapping = copy_mapping::cyclic;
  int threads = 0;  ///< threads per block (0: 512)
};

/// The chosen shape of a privatized scatter: the table layout, threads per block, block-local bytes.
struct privatize_plan {
  private_layout layout;
  int threads = 512;
  std::size_t bytes = 0;
};

/// The replication rule: the largest R = 2^k <= max_copies whose R copies (with padding) fit in
/// copy_budget bytes, at least 1. On Fermi the budget was the lock-aliasing size, 1,024 words (001 §3);
/// the figures for current GPUs and the host come from perf/bench_privatize.cpp (see its results file).
constexpr int replication_for(index_t bins, std::size_t elem, std::size_t copy_budget, int max_copies) {
  int r = 1;
  while (r * 2 <= max_copies && static_cast<std::size_t>(r * 2) * static_cast<std::size_t>(bins + 1) * elem <= copy_budget) r *= 2;
  return r;
}

/// Budget of the replication rule, in bytes of block-local memory for all copies of one block.
constexpr std::size_t replication_budget_bytes = 16 * 1024;

/// The plan for `bins` entries of T on exec: R by replication_for unless forced, one pad entry between
/// copies; throws errc::out_of_range (before anything runs) if the copies do not fit in one block's
/// block-local memory.
template <class T, class Exec>
privatize_plan plan_privatize(index_t bins, privatize_options const& opt, Exec const& ex) {
  require(bins >= 0, errc::invalid_argument, "privatize: negative table size " + std::to_string(bins));
  require(opt.copies >= 0 && opt.copies <= 1024, errc::invalid_argument, "privatize: copies must be in [0, 1024]");
  require(opt.threads >= 0 && opt.threads <= 1024, errc::invalid_argument, "privatize: threads must be in [0, 1024]");
  privatize_plan p;
  p.threads = opt.threads > 0 ? opt.threads : 512;
  p.layout.bins = bins;
  p.layout.mapping = opt.mapping;
  p.layout.copies = opt.copies > 0 ? opt.copies : replication_for(bins, sizeof(T), replication_budget_bytes, 32);
  p.layout.pad = opt.pad >= 0 ? opt.pad : (p.layout.copies > 1 ? 1 : 0);
  p.bytes = p.layout.template bytes<T>();
  std::size_t const limit = ex.block_local_bytes();
  require(p.bytes <= limit, errc::out_of_range,
          "privatize: " + std::to_string(p.layout.copies) + " copies of " + std::to_string(bins) + " entries need " +
              std::to_string(p.bytes) + " bytes of block-local memory; one block has " + std::to_string(limit));
  return p;
}

/// The most entries of T that one block's block-local memory holds on exec (one copy, no padding).
template <class T, class Exec>
index_t privatize_capacity(Exec const& ex) {
  return static_cast<index_t>(ex.block_local_bytes() / sizeof(T));
}

namespace detail {

/// Vec consecutive items, loaded at once (16 bytes for Vec = 4 and 4-byte keys).
template <class K, int Vec>
struct alignas(sizeof(K) * Vec) chunk {
  K v[Vec];
};

template <int Vec, class Warp, class T, class I>
CALM_HD auto load_chunk(Warp const& w, T const* p, I const& c) {
  return load(w, reinterpret_cast<chunk<T, Vec> const*>(p), c);
}
template <int Vec, class Warp, class T, class I>
CALM_HD auto load_chunk(Warp const&, same_value<T> const& v, I const&) {
  return v;
}
template <class T>
CALM_HD same_value<T> component(same_value<T> const& v, int) {
  return v;
}
template <class C>
CALM_HD auto component(C const& c, int j) {
  return map([j](auto const& x) { return x.v[j]; }, c);
}

/// Whether key k names an entry of a table of `bins` entries (negative keys do not).
template <class K>
CALM_HD auto in_table(K const& k, index_t bins) {
  return map([bins](auto kk) {
    if constexpr (std::is_signed<decltype(kk)>::value) return kk >= 0 && static_cast<index_t>(kk) < bins;
    else return static_cast<index_t>(kk) < bins;
  }, k);
}

/// The block program of privatize_scatter: clear the private table, stream tiles of `threads` chunks of
/// Vec items (the backend's block says which tiles are this block's), then merge the copies.
template <int Vec, class Strategy, class Op, class K, class Values, class T>
struct privatized_scatter_program {
  Op op;
  K const* keys;
  Values values;  // T const* or same_value<T>
  index_t n;
  T* out;
  private_layout layout;
  Strategy strategy;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    private_table<T> const tab{blk.template scratch<T>(), layout, blk.threads()};
    tab.clear(blk, op);
    index_t const chunks = n / Vec, bins = layout.bins;
    index_t const threads = blk.threads();
    blk.for_each_tile((chunks + threads - 1) / threads, [&](index_t tile) {
      index_t const base = tile * threads;
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const c = map([base](int tt) { return base + tt; }, t);
        when(w, c < chunks, [&](auto const& v) {
          auto const kc = load_chunk<Vec>(v, keys, c);
          auto const vc = load_chunk<Vec>(v, values, c);
          for (int j = 0; j < Vec; ++j) {
            auto const k = component(kc, j);
            when(v, in_table(k, bins), [&](auto const& u) {
              update(u, op, scope::block_local{}, tab.slot(u, t, k), component(vc, j), strategy);
            });
          }
        });
      });
    });
    if (Vec > 1 && blk.index() == 0)  // the last n % Vec items
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const i = map([c = chunks * Vec](int tt) { return c + tt; }, t);
        when(w, i < n, [&](auto const& v) {
          auto const k = load(v, keys, i);
          when(v, in_table(k, bins), [&](auto const& u) {
            update(u, op, scope::block_local{}, tab.slot(u, t, k), component(load_chunk<1>(u, values, i), 0), strategy);
          });
        });
      });
    tab.merge_into(blk, op, scope::device{}, out);
  }
};

/// values as the program reads them: a pointer to T, or a same_value of T.
template <class T, class V>
auto as_value_source(V const& v) {
  if constexpr (is_same_value<V>::value) {
    return same_value<T>{static_cast<T>(v.value)};
  } else {
    static_assert(std::is_pointer<V>::value && std::is_same<std::remove_cv_t<std::remove_pointer_t<V>>, T>::value,
                  "privatize_scatter: values must be a pointer to the table's type, or calm::constant(v)");
    return static_cast<T const*>(v);
  }
}

}  // namespace detail

/// table[keys[i]] = op(table[keys[i]], values[i]) for i < n, through a copy of the table in each block's
/// block-local memory: R copies with padding (plan_privatize), lanes merged by Strategy before each
/// block-local atomic, then one device atomic per bin and block. values: a T const* of n values, or
/// calm::constant(v) for every item (a histogram's +1). Keys outside [0, bins) are skipped. Throws
/// calm::error before launching if an argument is wrong or the table does not fit. Asynchronous on
/// a GPU (ex's stream).
///
///   calm::privatize_scatter(calm::plus{}, keys, calm::constant(1u), n, hist, 256);  // a histogram
template <class Strategy = naive, class Op, class K, class Values, class T, class Exec = default_exec>
void privatize_scatter(Op op, K const* keys, Values values, index_t n, T* table, index_t bins,
                       privatize_options const& opt = {}, Strategy strategy = {}, Exec const& ex = Exec{}) {
  check_atomic_op<Op, T>();
  static_assert(std::is_integral<K>::value, "privatize_scatter: keys must be integers");
  require(n >= 0, errc::invalid_argument, "privatize_scatter: n = " + std::to_string(n) + " is negative");
  require(n == 0 || keys != nullptr, errc::invalid_argument, "privatize_scatter: keys is null");
  require(bins == 0 || table != nullptr, errc::invalid_argument, "privatize_scatter: table is null");
  if constexpr (std::is_pointer<Values>::value)
    require(n == 0 || values != nullptr, errc::invalid_argument, "privatize_scatter: values is null");
  privatize_plan const plan = plan_privatize<T>(bins, opt, ex);
  if (n == 0 || bins == 0) return;
  auto const vals = detail::as_value_source<T>(values);
  using VS = std::decay_t<decltype(vals)>;
  index_t const tiles = (n + plan.threads * 4 - 1) / (plan.threads * 4);
  bool aligned = reinterpret_cast<std::uintptr_t>(keys) % (sizeof(K) * 4) == 0 && sizeof(K) * 4 <= 16;
  if constexpr (std::is_pointer<VS>::value) aligned = aligned && reinterpret_cast<std::uintptr_t>(vals) % (sizeof(T) * 4) == 0 && sizeof(T) * 4 <= 32;
  if (aligned)
    ex.for_each_resident_block(tiles, plan.threads, plan.bytes,
                               detail::privatized_scatter_program<4, Strategy, Op, K, VS, T>{op, keys, vals, n, table, plan.layout, strategy});
  else
    ex.for_each_resident_block(tiles * 4, plan.threads, plan.bytes,
                               detail::privatized_scatter_program<1, Strategy, Op, K, VS, T>{op, keys, vals, n, table, plan.layout, strategy});
}

}  // namespace calm
