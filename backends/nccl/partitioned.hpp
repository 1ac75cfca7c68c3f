// SPDX-License-Identifier: Apache-2.0
// calm/backends/nccl/partitioned.hpp: a bulk scatter into a table partitioned among the ranks of an NCCL
// communicator (one GPU a rank): each rank's updates go to their entries' owners, combined on the way.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "tables.hpp"

namespace calm {
namespace nccl {

/// The most ranks scatter_partitioned takes (its bucketing keeps two counters a rank in block-local memory).
constexpr int max_partitioned_ranks = 2048;

/// What scatter_partitioned moved on this rank.
struct exchange_report {
  index_t keys = 0;             ///< this rank's keys
  bool dense = false;           ///< the updates went as one ncclReduceScatter of whole tables, combined
  index_t sent = 0;             ///< pairs: updates sent to other ranks
  index_t kept = 0;             ///< pairs: updates for this rank's own entries
  index_t received = 0;         ///< pairs: updates received from other ranks
  std::int64_t bytes_sent = 0;  ///< bytes this rank sent to the others
};

namespace detail {

/// Entry k's place in the table arranged by owner (Arranged: owner(k) * per() + local(k)) or its owner
/// (else); keys outside [0, bins) at -1.
template <class Owner, bool Arranged>
struct owner_key {
  Owner owner;
  template <class K>
  CALM_HD index_t operator()(K key) const {
    index_t const k = calm::detail::identity_key{}(key);
    if (k < 0 || k >= owner.bins) return -1;
    return Arranged ? owner.owner(k) * owner.per() + owner.local(k) : owner.owner(k);
  }
};

/// Writes each update inside the table as the pair (its entry's index on its owner, its value) at
/// out[offset[o] + j], j counted per owner o over the blocks (cursor: zeroed, one per rank). Per tile: the
/// block counts its items per owner in block-local memory, reserves that many places per owner with one
/// device atomic each, and writes.
template <class K, class VS, class T, class Owner>
struct bucket_program {
  K const* keys;
  VS values;
  index_t n;
  Owner owner;
  index_t const* offset;
  std::uint64_t* cursor;
  std::int64_t* out_index;
  T* out_value;

  /// Block-local bytes: counts and bases per rank, then each thread's owner and place.
  static std::size_t scratch_bytes(int ranks, int threads) {
    return static_cast<std::size_t>(ranks) * 2 * sizeof(std::uint64_t) + static_cast<std::size_t>(threads) * 2 * sizeof(std::uint64_t);
  }

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    int const ranks = owner.ranks, threads = blk.threads();
    auto* const count = blk.template scratch<std::uint64_t>();
    auto* const base = count + ranks;
    auto* const own = reinterpret_cast<index_t*>(base + ranks);  // each thread's owner, -1: none
    auto* const place = reinterpret_cast<std::uint64_t*>(own + threads);  // its place among its owner's items in this tile
    auto const clear = [&] {
      for (int r0 = 0; r0 < ranks; r0 += threads)
        blk.for_each_warp([&](auto const& w, auto t) {
          auto const r = map([r0](int x) { return r0 + x; }, t);
          when(w, r < ranks, [&](auto const& l) { store(l, count, r, std::uint64_t(0)); });
        });
    };
    clear();
    blk.sync();
    blk.for_each_tile((n + threads - 1) / threads, [&](index_t tile) {
      index_t const first = tile * threads;
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const i = map([first](int x) { return first + static_cast<index_t>(x); }, t);
        auto const o = map([b = owner](index_t k) { return k >= 0 && k < b.bins ? static_cast<index_t>(b.owner(k)) : index_t(-1); }, key_of(w, i));
        store(w, own, t, o);
        when(w, o >= 0, [&](auto const& l) {
          store(l, place, t, atomic_fetch_update(l, plus{}, scope::block_local{}, count + select(o >= 0, o, index_t(0)), std::uint64_t(1)));
        });
      });
      blk.sync();
      for (int r0 = 0; r0 < ranks; r0 += threads)
        blk.for_each_warp([&](auto const& w, auto t) {
          auto const r = map([r0](int x) { return r0 + x; }, t);
          when(w, r < ranks, [&](auto const& l) {
            auto const c = load(l, count, r);
            store(l, base, r, atomic_fetch_update(l, plus{}, scope::device{}, cursor + r, c));
            store(l, count, r, std::uint64_t(0));
          });
        });
      blk.sync();
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const i = map([first](int x) { return first + static_cast<index_t>(x); }, t);
        auto const o = load(w, own, t);
        when(w, o >= 0, [&](auto const& l) {
          auto const oo = select(o >= 0, o, index_t(0));
          auto const at = map([](index_t off, std::uint64_t b, std::uint64_t p) { return off + static_cast<index_t>(b + p); },
                              load(l, offset, oo), load(l, base, oo), load(l, place, t));
          auto const k = calm::detail::map_keys(l, calm::detail::identity_key{}, load(l, keys, i));
          store(l, out_index, at, map([b = owner](index_t kk) { return static_cast<std::int64_t>(b.local(kk)); }, k));
          if constexpr (is_same_value<VS>::value) store(l, out_value, at, values.value);
          else store(l, out_value, at, load(l, values, i));
        });
      });
      blk.sync();
    });
  }

  /// The keys of the lanes' items as table indices (-1 past n).
  template <class W, class I>
  CALM_HD auto key_of(W const& w, I const& i) const {
    auto k = map([](index_t) { return index_t(-1); }, i);
    when(w, i < n, [&](auto const& l) { k = select(i < n, calm::detail::map_keys(l, calm::detail::identity_key{}, load(l, keys, select(i < n, i, index_t(0)))), k); });
    return k;
  }
};

}  // namespace detail

/// table[keys[i]] = op(table[keys[i]], values[i]) for the keys of every rank of comm, into a table of
/// `bins` entries partitioned among the ranks by Owner (block_split by default, or cyclic_split): this
/// rank holds `part`, its owner.size(rank) entries in device memory. Where the whole table costs no
/// more than the largest rank's updates as pairs (bins * sizeof(T) <= n * (8 + sizeof(T))), each rank
/// scatters its keys with calm::scatter<S> into a workspace table arranged by owner and one
/// ncclReduceScatter hands each rank its entries combined over all ranks; otherwise each rank writes
/// its updates as (index on the owner, value) pairs grouped by owner, the ranks exchange the pairs
/// (ncclSend and ncclRecv in one group), and each scatters what it receives into `part` with
/// calm::scatter<S>. On ex's stream; the pairs' counts cost two waits. Ops: plus, max, min. Every rank
/// calls it (n may be 0); the ranks must agree on bins, op, T and Owner: a bad argument or a
/// disagreement on any rank throws calm::error on every rank before anything is exchanged, the parts
/// unchanged. opt.skipped counts this rank's keys outside the table; opt.overwrite sets `part` to the
/// op's identity first; opt.order is not taken.
///
///   calm::nccl::block_split const owner{bins, ranks};  // part: owner.size(rank) entries
///   calm::nccl::scatter_partitioned(comm, calm::plus{}, keys, weights, n, part, bins);
template <strategy S = strategy::automatic, class Owner = block_split, class Op, class K, class Values, class T, class Exec = default_exec>
exchange_report scatter_partitioned(ncclComm_t comm, Op op, K const* keys, Values values, index_t n, T* part, index_t bins, scatter_options const& opt = {},
                                    Exec const& ex = Exec{}) {
  static_assert(std::is_integral<K>::value, "calm::nccl::scatter_partitioned: keys must be integers");
  char const* const who = "calm::nccl::scatter_partitioned";
  int const ranks = detail::size_of(comm), me = detail::rank_of(comm);
  Owner const owner{bins, ranks};
  std::int64_t const fields[5] = {bins, detail::op_number<Op>(), sizeof(T), std::is_floating_point<T>::value, -2 - Owner::id};
  std::string const why = detail::verdict([&] {
    calm::detail::check_scatter_sizes(who, n, bins);
    calm::detail::check_scatter_arguments(who, n, keys, values, part, owner.size(me));
    require(opt.order == nullptr, errc::invalid_argument, [&] { return std::string(who) + ": opt.order is not taken by a partitioned table"; });
    require(ranks <= max_partitioned_ranks, errc::invalid_argument,
            [&] { return std::string(who) + ": " + std::to_string(ranks) + " ranks; at most " + std::to_string(max_partitioned_ranks) + " are taken"; });
    require(!is_block_local(S) || owner.per() * ranks <= privatize_capacity<T>(ex), errc::invalid_argument,
            [&] { return std::string(who) + ": the table is too large for the block-local strategy " + to_string(S); });
  });
  std::int64_t most = 0;
  detail::require_agreement(comm, who, fields, why, ex, n, &most);
  exchange_report report;
  report.keys = n;
  index_t const per = owner.per();
  if (per == 0) {
    detail::count_all_outside(keys, values, n, part, opt, ex);
    return report;
  }
  using calm::detail::workspace;
  if (static_cast<double>(bins) * sizeof(T) <= static_cast<double>(most) * (sizeof(std::int64_t) + sizeof(T))) {  // the same on every rank
    report.dense = true;
    std::size_t const whole = static_cast<std::size_t>(per) * static_cast<std::size_t>(ranks);
    workspace<Exec> ws(ex, (whole + static_cast<std::size_t>(per)) * sizeof(T));
    T* const arranged = ws.template at<T>(0);
    T* const mine = arranged + whole;
    scatter_options each;
    each.overwrite = true;  // every entry at the op's identity, the padding too
    each.skipped = opt.skipped;
    calm::detail::bulk_scatter<family_model<Exec::family>, S>(who, op, keys, values, n, arranged, static_cast<index_t>(whole), detail::owner_key<Owner, true>{owner},
                                                              each, ex);
    detail::check(ncclReduceScatter(arranged, mine, static_cast<std::size_t>(per), detail::datatype<T>(), detail::reduction<Op>(), comm, ex.stream),
                  "ncclReduceScatter");
    detail::combine(op, part, mine, owner.size(me), 0, opt.overwrite, ex);
    report.bytes_sent = static_cast<std::int64_t>(whole - static_cast<std::size_t>(per)) * static_cast<std::int64_t>(sizeof(T));
    return report;
  }
  // pairs: each rank's updates counted per owner (calm's scatter over the owners), placed by owner, exchanged
  std::size_t const r = static_cast<std::size_t>(ranks);
  workspace<Exec> counts_ws(ex, (r + r * r + r) * sizeof(std::uint64_t) + r * sizeof(index_t));
  auto* const counts = counts_ws.template at<std::uint64_t>(0);
  auto* const all_counts = counts + r;
  auto* const cursor = all_counts + r * r;
  auto* const offset = reinterpret_cast<index_t*>(cursor + r);
  scatter_options counting;
  counting.overwrite = true;
  counting.skipped = opt.skipped;
  calm::detail::bulk_scatter<family_model<Exec::family>, strategy::automatic>(who, plus{}, keys, constant(std::uint64_t(1)), n, counts, static_cast<index_t>(ranks),
                                                                               detail::owner_key<Owner, false>{owner}, counting, ex);
  detail::check(ncclAllGather(counts, all_counts, r, ncclUint64, comm, ex.stream), "ncclAllGather");
  std::vector<std::uint64_t> table_counts(r * r);
  ex.to_host(table_counts.data(), all_counts, r * r * sizeof(std::uint64_t));  // row q: rank q's counts per owner
  std::vector<index_t> out_offset(r + 1, 0), in_offset(r + 1, 0);
  for (std::size_t q = 0; q < r; ++q) {
    out_offset[q + 1] = out_offset[q] + static_cast<index_t>(table_counts[static_cast<std::size_t>(me) * r + q]);
    in_offset[q + 1] = in_offset[q] + static_cast<index_t>(table_counts[q * r + static_cast<std::size_t>(me)]);
  }
  index_t const sending = out_offset[r], receiving = in_offset[r];
  CALM_CUDA_CHECK(cudaMemcpyAsync(offset, out_offset.data(), r * sizeof(index_t), cudaMemcpyHostToDevice, ex.stream));
  ex.fill(cursor, 0, r * sizeof(std::uint64_t));
  // the indices first, then the values: each array aligned for its type whatever the counts
  std::size_t const pairs_n = static_cast<std::size_t>(sending) + static_cast<std::size_t>(receiving);
  workspace<Exec> pairs(ex, pairs_n * (sizeof(std::int64_t) + sizeof(T)));
  auto* const out_index = pairs.template at<std::int64_t>(0);
  auto* const in_index = out_index + sending;
  T* const out_value = pairs.template at<T>(pairs_n * sizeof(std::int64_t));
  T* const in_value = out_value + sending;
  if (n > 0) {
    auto const vals = calm::detail::as_value_source<T>(values);
    using program = detail::bucket_program<K, std::decay_t<decltype(vals)>, T, Owner>;
    constexpr int threads = 256;
    ex.for_each_resident_block((n + threads - 1) / threads, threads, program::scratch_bytes(ranks, threads),
                               program{keys, vals, n, owner, offset, cursor, out_index, out_value});
  }
  detail::check(ncclGroupStart(), "ncclGroupStart");
  for (int q = 0; q < ranks; ++q) {
    std::size_t const o = static_cast<std::size_t>(out_offset[static_cast<std::size_t>(q)]), i = static_cast<std::size_t>(in_offset[static_cast<std::size_t>(q)]);
    std::size_t const so = static_cast<std::size_t>(out_offset[static_cast<std::size_t>(q) + 1]) - o, si = static_cast<std::size_t>(in_offset[static_cast<std::size_t>(q) + 1]) - i;
    if (so > 0) {
      detail::check(ncclSend(out_index + o, so, ncclInt64, q, comm, ex.stream), "ncclSend");
      detail::check(ncclSend(out_value + o, so, detail::datatype<T>(), q, comm, ex.stream), "ncclSend");
    }
    if (si > 0) {
      detail::check(ncclRecv(in_index + i, si, ncclInt64, q, comm, ex.stream), "ncclRecv");
      detail::check(ncclRecv(in_value + i, si, detail::datatype<T>(), q, comm, ex.stream), "ncclRecv");
    }
  }
  detail::check(ncclGroupEnd(), "ncclGroupEnd");
  scatter_options local;
  local.overwrite = opt.overwrite;
  scatter<S>(op, in_index, in_value, receiving, part, owner.size(me), local, ex);
  report.kept = out_offset[static_cast<std::size_t>(me) + 1] - out_offset[static_cast<std::size_t>(me)];
  report.sent = sending - report.kept;
  report.received = receiving - (in_offset[static_cast<std::size_t>(me) + 1] - in_offset[static_cast<std::size_t>(me)]);
  report.bytes_sent = static_cast<std::int64_t>(report.sent) * static_cast<std::int64_t>(sizeof(std::int64_t) + sizeof(T));
  return report;
}

}  // namespace nccl
}  // namespace calm
