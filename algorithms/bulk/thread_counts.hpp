// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/thread_counts.hpp: thread_private's narrow counters. A histogram into a large table
// counts in one byte per entry, a quarter of a 4-byte table's cache; a counter that wraps leaves its 256 in
// the thread's spill log, which the merge adds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../../core/exec.hpp"
#include "../../core/ops.hpp"
#include "../warp/group_reduce.hpp"

namespace calm {
namespace detail {

/// A private table's entry when it counts (plan_thread_tables' `narrow`).
using narrow_count = std::uint8_t;
/// Tables of at least this (in the table's own type, a core's L2) count in narrow_count: 2 cores, 2^18-2^20
/// entries of 4 bytes, 1.05-1.25x faster than a table per thread of the table's type; in L2 the wrap test
/// costs more than the bytes save (2^16 entries, skewed keys: 0.88x).
constexpr std::size_t narrow_count_bytes = std::size_t(1) << 20;

/// Whether a scatter is a count: plus of the constant 1 (a histogram) into an integer table of 4 or 8
/// bytes. Only the value is known at run time.
template <class Op, class VS, class T>
constexpr bool may_count() {
  return std::is_same<Op, plus>::value && is_same_value<VS>::value && std::is_integral<T>::value && sizeof(T) >= 4;
}
template <class Op, class VS, class T>
bool counts_ones(VS const& vals) {
  if constexpr (may_count<Op, VS, T>()) return vals.value == 1;
  else return false;
}

/// `amount` more for entry `slot`, which a narrow counter could not hold.
template <class T>
struct count_spill {
  index_t slot;
  T amount;
};

/// A slice's spill log: at most (its items) / 256 wraps, and one total of a hot entry.
template <class T>
struct spill_log {
  count_spill<T>* entries;
  index_t size = 0;
  CALM_HD void push(index_t slot, T amount) { entries[size++] = count_spill<T>{slot, amount}; }
};

/// Spill entries a slice of `items` may leave.
CALM_HD inline index_t spill_capacity(index_t items) { return items / 256 + 2; }

/// c[at] += x (x below 256): a counter that passes 255 keeps the rest and spills 256 for `at`.
template <class T>
CALM_HD void narrow_add(narrow_count* __restrict__ c, index_t at, T x, spill_log<T>& log) {
  auto const small = static_cast<narrow_count>(x);
  auto const now = static_cast<narrow_count>(c[at] + small);
  c[at] = now;
  if (now < small) log.push(at, T(256));
}

/// Entries [begin, end) of the table: each block's spills for them added (blocks' logs of `capacity` entries).
template <class Op, class T>
CALM_HD void add_spills(Op const& op, T* table, index_t begin, index_t end, index_t blocks, count_spill<T> const* logs,
                        index_t const* sizes, index_t capacity) {
  for (index_t c = 0; c < blocks; ++c) {
    count_spill<T> const* const log = logs + c * capacity;
    for (index_t s = 0; s < sizes[c]; ++s)
      if (log[s].slot >= begin && log[s].slot < end) table[log[s].slot] = op(table[log[s].slot], log[s].amount);
  }
}

}  // namespace detail
}  // namespace calm
