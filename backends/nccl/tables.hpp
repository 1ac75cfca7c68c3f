// SPDX-License-Identifier: Apache-2.0
// calm/backends/nccl/tables.hpp: bulk scatters whose keys are sharded over the ranks of an NCCL communicator
// (one GPU a rank, the CUDA backend), into a table replicated on every rank or split in blocks among them.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "../../algorithms/bulk/scatter.hpp"
#include "../../algorithms/bulk/workspace.hpp"

namespace calm {
namespace nccl {

/// scatter_replicated's root for a table reduced onto every rank (ncclAllReduce).
constexpr int all_ranks = -1;

/// The entries of a table of `bins` split in blocks over `ranks` ranks: rank r holds [r * per(), ...)
/// of size(r) entries (as calm::mpi::block_owner); entry k is local(k) of owner(k).
struct block_split {
  index_t bins = 0;
  int ranks = 1;
  static constexpr int id = 0;
  CALM_HD index_t per() const { return (bins + ranks - 1) / ranks; }
  CALM_HD index_t first(int r) const { return per() * r < bins ? per() * r : bins; }
  CALM_HD index_t size(int r) const { return (per() * (r + 1) < bins ? per() * (r + 1) : bins) - first(r); }
  CALM_HD int owner(index_t k) const { return static_cast<int>(k / per()); }
  CALM_HD index_t local(index_t k) const { return k - per() * owner(k); }
};

/// The entries dealt round the ranks: entry k is entry k / ranks of rank k % ranks (as calm::mpi::cyclic_owner).
struct cyclic_split {
  index_t bins = 0;
  int ranks = 1;
  static constexpr int id = 1;
  CALM_HD index_t per() const { return (bins + ranks - 1) / ranks; }
  CALM_HD index_t size(int r) const { return r < bins ? (bins - r + ranks - 1) / ranks : 0; }
  CALM_HD int owner(index_t k) const { return static_cast<int>(k % ranks); }
  CALM_HD index_t local(index_t k) const { return k / ranks; }
};

namespace detail {

/// Throws calm::error (errc::unsupported) where an NCCL call fails, naming it.
inline void check(ncclResult_t rc, char const* call) {
  if (rc == ncclSuccess) return;
  raise_error(error(errc::unsupported, std::string("calm::nccl: ") + call + " failed: " + ncclGetErrorString(rc)));
}

inline int rank_of(ncclComm_t comm) {
  int r = 0;
  check(ncclCommUserRank(comm, &r), "ncclCommUserRank");
  return r;
}
inline int size_of(ncclComm_t comm) {
  int s = 1;
  check(ncclCommCount(comm, &s), "ncclCommCount");
  return s;
}

/// NCCL's datatype of T (the types calm's atomics take).
template <class T>
ncclDataType_t datatype() {
  static_assert(is_atomic_type<T>, "calm::nccl: tables of int32, uint32, int64, uint64, float or double");
  if constexpr (std::is_same<T, float>::value) return ncclFloat32;
  else if constexpr (std::is_same<T, double>::value) return ncclFloat64;
  else if constexpr (std::is_signed<T>::value) return sizeof(T) == 4 ? ncclInt32 : ncclInt64;
  else return sizeof(T) == 4 ? ncclUint32 : ncclUint64;
}

/// NCCL's reduction of Op: sum, max and min (NCCL has no bit operations: calm::mpi has them).
template <class Op>
ncclRedOp_t reduction() {
  static_assert(std::is_same<Op, plus>::value || std::is_same<Op, max>::value || std::is_same<Op, min>::value,
                "calm::nccl: plus, max or min (NCCL reduces no bit operations; calm::mpi does)");
  if constexpr (std::is_same<Op, plus>::value) return ncclSum;
  else if constexpr (std::is_same<Op, max>::value) return ncclMax;
  else return ncclMin;
}
template <class Op>
constexpr std::int64_t op_number() {
  return std::is_same<Op, plus>::value ? 1 : std::is_same<Op, max>::value ? 2 : 3;
}

/// table[i] = op(table[i], part[i]) (part[i] alone where `overwrite`) for i < count; and
/// table[i] = identity for i in [count, fill_to) (the padding of a split table).
template <class Op, class T>
struct combine_program {
  Op op;
  T* table;
  T const* part;
  index_t count, fill_to;
  bool overwrite;

  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    int const threads = blk.threads();
    index_t const end = fill_to > count ? fill_to : count;
    blk.for_each_tile((end + threads - 1) / threads, [&](index_t tile) {
      index_t const base = tile * threads;
      blk.for_each_warp([&](auto const& w, auto t) {
        auto const i = map([base](int x) { return base + static_cast<index_t>(x); }, t);
        auto const mine = map([c = count](index_t x) { return x < c; }, i);
        auto const pad = map([c = count, e = end](index_t x) { return x >= c && x < e; }, i);
        when(w, mine, [&](auto const& l) {
          auto const p = load(l, part, i);
          store(l, table, i, overwrite ? p : map(op, load(l, table, i), p));
        });
        when(w, pad, [&](auto const& l) { store(l, table, i, Op::template identity<T>()); });
      });
    });
  }
};

template <class Op, class T, class Exec>
void combine(Op op, T* table, T const* part, index_t count, index_t fill_to, bool overwrite, Exec const& ex) {
  index_t const end = fill_to > count ? fill_to : count;
  if (end == 0) return;
  ex.for_each_resident_block((end + 255) / 256, 256, 0, combine_program<Op, T>{op, table, part, count, fill_to, overwrite});
}

/// Every rank's fields compared on every rank with one ncclAllReduce (min of each field and of its
/// negation), then a wait: throws calm::error on every rank where one rank rejected its arguments
/// (`why` there) or the ranks differ, before any table is touched.
/// `most`, where given, receives the largest `items` of any rank (the same reduction).
template <class Exec>
void require_agreement(ncclComm_t comm, char const* who, std::int64_t const (&fields)[5], std::string const& why, Exec const& ex,
                       std::int64_t items = 0, std::int64_t* most = nullptr) {
  constexpr int count = 7;
  std::int64_t local[2 * count];
  for (int i = 0; i < 5; ++i) local[i] = fields[i], local[count + i] = -fields[i];
  local[5] = why.empty() ? 1 : 0;
  local[count + 5] = -local[5];
  local[6] = -items, local[count + 6] = 0;
  calm::detail::workspace<Exec> ws(ex, sizeof(local));
  auto* const d = ws.template at<std::int64_t>(0);
  CALM_CUDA_CHECK(cudaMemcpyAsync(d, local, sizeof(local), cudaMemcpyHostToDevice, ex.stream));
  check(ncclAllReduce(d, d, 2 * count, ncclInt64, ncclMin, comm, ex.stream), "ncclAllReduce");
  std::int64_t low[2 * count];
  CALM_CUDA_CHECK(cudaMemcpyAsync(low, d, sizeof(low), cudaMemcpyDeviceToHost, ex.stream));
  CALM_CUDA_CHECK(cudaStreamSynchronize(ex.stream));
  require(why.empty(), errc::invalid_argument, [&] { return std::string(who) + ": " + why; });
  require(low[5] == 1, errc::invalid_argument, [&] { return std::string(who) + ": another rank's arguments were rejected; nothing was exchanged"; });
  if (most != nullptr) *most = -low[6];
  static char const* const names[5] = {"table size", "op", "table entry size", "table entry type", "table's form (root, split or owner map)"};
  for (int i = 0; i < 5; ++i)
    require(low[i] == -low[count + i], errc::invalid_argument, [&] {
      return std::string(who) + ": the ranks disagree on the " + names[i] + " (" + std::to_string(low[i]) + " to " + std::to_string(-low[count + i]) +
             "); nothing was exchanged";
    });
}

/// A table of no entries: every key of this rank is outside it, counted into opt.skipped where given.
template <class K, class Values, class T, class Exec>
void count_all_outside(K const* keys, Values values, index_t n, T* table, scatter_options const& opt, Exec const& ex) {
  if (opt.skipped == nullptr || n == 0) return;
  scatter_options counted;
  counted.skipped = opt.skipped;
  scatter(plus{}, keys, values, n, table, 0, counted, ex);
}

/// Why this rank's arguments are rejected (empty: they are not).
template <class Check>
std::string verdict(Check&& check) {
#if CALM_EXCEPTIONS
  try {
    check();
  } catch (error const& e) {
    return e.what();
  }
#else
  check();
#endif
  return std::string();
}

}  // namespace detail

/// table[keys[i]] = op(table[keys[i]], values[i]) for the keys of every rank of comm, into a table of
/// `bins` entries in device memory that each rank holds whole: each rank scatters its own keys with
/// calm::scatter<S> into a workspace table, one ncclAllReduce (ncclReduce to `root`) combines them,
/// and each rank (root alone) folds the result into `table`, all on ex's stream. Ops: plus, max, min.
/// Every rank calls it with its own keys (n may differ, and may be 0); the ranks must agree on bins,
/// op, T and root: a bad argument or a disagreement on any rank throws calm::error on every rank
/// before anything is exchanged (one wait for that check), the tables unchanged.
///
///   calm::nccl::scatter_replicated(comm, calm::plus{}, keys, weights, n, table, bins);
template <strategy S = strategy::automatic, class Op, class K, class Values, class T, class Exec = default_exec>
void scatter_replicated(ncclComm_t comm, Op op, K const* keys, Values values, index_t n, T* table, index_t bins, scatter_options const& opt = {},
                        int root = all_ranks, Exec const& ex = Exec{}) {
  char const* const who = "calm::nccl::scatter_replicated";
  int const ranks = detail::size_of(comm);
  std::int64_t const fields[5] = {bins, detail::op_number<Op>(), sizeof(T), std::is_floating_point<T>::value, root};
  std::string const why = detail::verdict([&] {
    calm::detail::check_scatter_sizes(who, n, bins);
    calm::detail::check_scatter_arguments(who, n, keys, values, table, bins);
    require(root == all_ranks || (root >= 0 && root < ranks), errc::invalid_argument, [&] { return std::string(who) + ": no rank " + std::to_string(root); });
  });
  detail::require_agreement(comm, who, fields, why, ex);
  if (bins == 0) return detail::count_all_outside(keys, values, n, table, opt, ex);
  calm::detail::workspace<Exec> ws(ex, static_cast<std::size_t>(bins) * sizeof(T));
  T* const part = ws.template at<T>(0);
  scatter_options local = opt;
  local.overwrite = true;  // the workspace starts at the op's identity
  scatter<S>(op, keys, values, n, part, bins, local, ex);
  if (root == all_ranks) detail::check(ncclAllReduce(part, part, static_cast<std::size_t>(bins), detail::datatype<T>(), detail::reduction<Op>(), comm, ex.stream), "ncclAllReduce");
  else detail::check(ncclReduce(part, part, static_cast<std::size_t>(bins), detail::datatype<T>(), detail::reduction<Op>(), root, comm, ex.stream), "ncclReduce");
  if (root == all_ranks || detail::rank_of(comm) == root) detail::combine(op, table, part, bins, 0, opt.overwrite, ex);
}

/// The same into a table split in blocks over the ranks (block_split: rank r holds `local`, its
/// size(r) entries from first(r)): each rank scatters its keys into a workspace of the whole table, and
/// one ncclReduceScatter hands each rank its block reduced over all ranks, folded into `local`. What
/// each rank sends is the whole table (its blocks padded to equal size), whatever its keys: the form
/// for tables no larger than the updates. Same ops, agreement and errors as scatter_replicated.
///
///   calm::nccl::scatter_split(comm, calm::plus{}, keys, calm::constant(1u), n, my_block, bins);
template <strategy S = strategy::automatic, class Op, class K, class Values, class T, class Exec = default_exec>
void scatter_split(ncclComm_t comm, Op op, K const* keys, Values values, index_t n, T* local, index_t bins, scatter_options const& opt = {},
                   Exec const& ex = Exec{}) {
  char const* const who = "calm::nccl::scatter_split";
  int const ranks = detail::size_of(comm), rank = detail::rank_of(comm);
  block_split const split{bins, ranks};
  std::int64_t const fields[5] = {bins, detail::op_number<Op>(), sizeof(T), std::is_floating_point<T>::value, 1};
  std::string const why = detail::verdict([&] {
    calm::detail::check_scatter_sizes(who, n, bins);
    calm::detail::check_scatter_arguments(who, n, keys, values, local, split.size(rank));  // local: null where this rank's block is empty
  });
  detail::require_agreement(comm, who, fields, why, ex);
  index_t const per = split.per();
  if (per == 0) return detail::count_all_outside(keys, values, n, local, opt, ex);
  std::size_t const whole = static_cast<std::size_t>(per) * static_cast<std::size_t>(ranks);
  calm::detail::workspace<Exec> ws(ex, (whole + static_cast<std::size_t>(per)) * sizeof(T));
  T* const part = ws.template at<T>(0);
  T* const mine = part + whole;
  scatter_options each = opt;
  each.overwrite = true;
  scatter<S>(op, keys, values, n, part, bins, each, ex);
  detail::combine(op, part + bins, part, 0, static_cast<index_t>(whole) - bins, false, ex);  // the padding past bins: the identity
  detail::check(ncclReduceScatter(part, mine, static_cast<std::size_t>(per), detail::datatype<T>(), detail::reduction<Op>(), comm, ex.stream), "ncclReduceScatter");
  detail::combine(op, local, mine, split.size(rank), 0, opt.overwrite, ex);
}

}  // namespace nccl
}  // namespace calm
