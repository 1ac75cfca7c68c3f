// SPDX-License-Identifier: Apache-2.0
// calm/backends/mpi/tables.hpp: bulk scatters whose keys are sharded over the ranks of an MPI
// communicator, into a table replicated on every rank or partitioned among them (host tables).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "../../algorithms/bulk/scatter.hpp"
#include "agreement.hpp"

namespace calm {
namespace mpi {

/// scatter_replicated's root for a table reduced onto every rank (MPI_Allreduce).
constexpr int all_ranks = -1;

/// The owner map of a partitioned table of `bins` entries over `ranks` ranks (block_owner, cyclic_owner,
/// or a map of your own with the same members): entry k belongs to rank owner(k), at its index local(k)
/// there; rank r holds size(r) entries; `id` names the map where the ranks compare theirs.
struct block_owner {
  static constexpr std::int64_t id = 1;  ///< the map's name where the ranks compare theirs
  index_t bins = 0;                      ///< the table's entries
  int ranks = 1;                         ///< the ranks sharing it
  /// The entries of each rank but the last ones: ceil(bins / ranks).
  index_t per() const { return (bins + ranks - 1) / ranks; }
  /// The rank that holds entry k: one contiguous range each.
  int owner(index_t k) const { return static_cast<int>(k / per()); }
  /// Entry k's index on its rank.
  index_t local(index_t k) const { return k % per(); }
  /// The entries rank r holds.
  index_t size(int r) const { return std::max<index_t>(0, std::min<index_t>(per(), bins - per() * r)); }
};
/// The entries dealt out in turn: entry k to rank k % ranks, at index k / ranks there.
struct cyclic_owner {
  static constexpr std::int64_t id = 2;  ///< the map's name where the ranks compare theirs
  index_t bins = 0;                      ///< the table's entries
  int ranks = 1;                         ///< the ranks sharing it
  /// The rank that holds entry k.
  int owner(index_t k) const { return static_cast<int>(k % ranks); }
  /// Entry k's index on its rank.
  index_t local(index_t k) const { return k / ranks; }
  /// The entries rank r holds.
  index_t size(int r) const { return bins > r ? (bins - r + ranks - 1) / ranks : 0; }
};

/// What a partitioned scatter moved on this rank.
struct exchange_report {
  index_t keys = 0;             ///< this rank's keys
  index_t sent = 0;             ///< updates sent to other ranks (combined where a dense table was cheap)
  index_t kept = 0;             ///< updates for this rank's own entries
  index_t received = 0;         ///< updates received from other ranks
  std::int64_t bytes_sent = 0;  ///< the bytes of the updates sent: an 8-byte index and a value each
};

namespace detail {

inline int rank_of(MPI_Comm comm) {
  int r = 0;
  check(MPI_Comm_rank(comm, &r), "MPI_Comm_rank");
  return r;
}
inline int size_of(MPI_Comm comm) {
  int s = 1;
  check(MPI_Comm_size(comm, &s), "MPI_Comm_size");
  return s;
}

/// table[i] = op(table[i], part[i]) for i < bins (part[i] alone where `overwrite`).
template <class Op, class T>
void combine_into(Op op, T* table, T const* part, index_t bins, bool overwrite) {
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < bins; ++i) table[i] = overwrite ? part[i] : op(table[i], part[i]);
}

/// MPI_Allreduce (root all_ranks) or MPI_Reduce of data[0, count) in place, in pieces MPI's int counts take.
template <class T>
void reduce_in_place(MPI_Comm comm, T* data, index_t count, MPI_Op op, int root) {
  constexpr index_t piece = index_t(1) << 30;
  bool const mine = root == all_ranks || rank_of(comm) == root;
  for (index_t at = 0; at < count; at += piece) {
    int const c = static_cast<int>(std::min(piece, count - at));
    if (root == all_ranks) check(MPI_Allreduce(MPI_IN_PLACE, data + at, c, datatype<T>(), op, comm), "MPI_Allreduce");
    else check(MPI_Reduce(mine ? MPI_IN_PLACE : data + at, data + at, c, datatype<T>(), op, root, comm), "MPI_Reduce");
  }
}

/// scatter_replicated, with `rejected`: why the caller rejected this rank's arguments already (empty: it did not).
template <strategy S, class Op, class K, class Values, class T>
void replicated(MPI_Comm comm, Op op, K const* keys, Values values, index_t n, T* table, index_t bins, scatter_options const& opt, int root,
                std::string const& rejected) {
  static_assert(default_exec::family == device_family::host, "calm::mpi: tables in host memory (the host backend)");
  char const* const who = "calm::mpi::scatter_replicated";
  int const ranks = size_of(comm);
  agreement a;
  std::int64_t const fields[6] = {bins, op_number<Op>(), sizeof(T), std::is_floating_point<T>::value, 1, root};
  std::copy(fields, fields + 6, a.fields);
  record_verdict(a, [&] {
    require(rejected.empty(), errc::invalid_argument, [&] { return std::string(who) + ": " + rejected; });
    calm::detail::check_scatter_sizes(who, n, bins);
    calm::detail::check_scatter_arguments(who, n, keys, values, table, bins);
    require(root == all_ranks || (root >= 0 && root < ranks), errc::invalid_argument, [&] { return std::string(who) + ": no rank " + std::to_string(root); });
    require(!is_block_local(S) || bins <= privatize_capacity<T>(default_exec{}), errc::invalid_argument,
            [&] { return std::string(who) + ": the table is too large for the block-local strategy " + to_string(S); });
  });
  require_agreement(comm, who, a);
  if (opt.overwrite && root == all_ranks) {  // every table receives the reduction alone: no second table
    scatter<S>(op, keys, values, n, table, bins, opt, default_exec{});
    reduce_in_place(comm, table, bins, reduction<Op>(), root);
    return;
  }
  std::vector<T> part(static_cast<std::size_t>(bins), Op::template identity<T>());
  scatter_options local = opt;
  local.overwrite = false;
  scatter<S>(op, keys, values, n, part.data(), bins, local, default_exec{});
  reduce_in_place(comm, part.data(), bins, reduction<Op>(), root);
  if (root == all_ranks || rank_of(comm) == root) combine_into(op, table, part.data(), bins, opt.overwrite);
}

}  // namespace detail

/// table[keys[i]] = op(table[keys[i]], values[i]) for the keys of every rank of comm, into a table of
/// `bins` entries that each rank holds whole: each rank scatters its own keys with calm::scatter<S>
/// into a table of the op's identity, and one reduction (MPI_Allreduce, or MPI_Reduce to `root`)
/// combines them into `table` on every rank (on root alone; the others' tables stay as they were).
/// Ops: plus, max, min and the bit operations; tables of host memory. Every rank calls it with its own
/// keys (n may differ, and may be 0); the ranks must agree on bins, op, T and root: a bad argument or a
/// disagreement on any rank throws calm::error on every rank before anything is exchanged, the tables
/// unchanged. opt applies to each rank's scatter (opt.skipped counts that rank's keys outside the
/// table; opt.overwrite: the table receives the reduction alone).
///
///   calm::mpi::scatter_replicated(MPI_COMM_WORLD, calm::plus{}, my_keys, my_weights, my_n, table, bins);
template <strategy S = strategy::automatic, class Op, class K, class Values, class T>
void scatter_replicated(MPI_Comm comm, Op op, K const* keys, Values values, index_t n, T* table, index_t bins, scatter_options const& opt = {},
                        int root = all_ranks) {
  detail::replicated<S>(comm, op, keys, values, n, table, bins, opt, root, std::string());
}

}  // namespace mpi
}  // namespace calm
