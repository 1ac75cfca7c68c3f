// SPDX-License-Identifier: Apache-2.0
// calm/backends/mpi/partitioned.hpp: a bulk scatter into a table partitioned among the ranks of an MPI
// communicator: updates combined on their rank, sent to their entries' owners, scattered there.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tables.hpp"

namespace calm {
namespace mpi {
namespace detail {

/// A rank's updates bound for the other ranks: entries' local indices and values, grouped by owner.
template <class T>
struct outgoing {
  std::vector<std::int64_t> index;
  std::vector<T> value;
  std::vector<int> count, offset;  // per rank
};

/// This rank's updates as (entry, value) pairs, one per entry touched: where a dense table of `bins`
/// entries costs no more than the keys (bins <= 2n + 2^16), its updates are combined there first
/// (calm::scatter into the op's identity, the touched entries marked by a bit_or scatter); else each
/// key in the table is one pair. Keys outside the table are left out (and counted into *skipped).
template <strategy S, class Op, class K, class Values, class T>
void local_updates(Op op, K const* keys, Values values, index_t n, index_t bins, std::uint64_t* skipped, std::vector<std::int64_t>& key_out,
                   std::vector<T>& value_out) {
  default_exec const ex{};
  scatter_options counted;
  counted.skipped = skipped;
  bool const fits = !is_block_local(S) || bins <= privatize_capacity<T>(ex);  // a forced block-local strategy takes it
  if (n > 0 && bins > 0 && bins <= 2 * n + 65536 && fits) {
    std::vector<T> dense(static_cast<std::size_t>(bins), Op::template identity<T>());
    std::vector<std::uint32_t> touched(static_cast<std::size_t>(bins), 0u);
    scatter<S>(op, keys, values, n, dense.data(), bins, counted, ex);
    scatter<S>(bit_or{}, keys, constant(1u), n, touched.data(), bins, scatter_options{}, ex);
    for (index_t k = 0; k < bins; ++k)
      if (touched[static_cast<std::size_t>(k)]) key_out.push_back(k), value_out.push_back(dense[static_cast<std::size_t>(k)]);
    return;
  }
  for (index_t i = 0; i < n; ++i) {
    auto const k = static_cast<std::int64_t>(keys[i]);
    bool const inside = !(keys[i] < K(0)) && static_cast<std::uint64_t>(keys[i]) < static_cast<std::uint64_t>(bins);
    if (!inside) {
      if (skipped) ++*skipped;
      continue;
    }
    key_out.push_back(k);
    if constexpr (calm::is_same_value<Values>::value) value_out.push_back(values.value);
    else value_out.push_back(values[i]);
  }
}

/// The pairs grouped by owner, their keys turned into the owner's local indices.
template <class T, class Owner>
outgoing<T> group_by_owner(std::vector<std::int64_t> const& keys, std::vector<T> const& values, Owner const& owner, int ranks) {
  outgoing<T> out;
  out.count.assign(static_cast<std::size_t>(ranks), 0);
  out.offset.assign(static_cast<std::size_t>(ranks), 0);
  for (std::int64_t k : keys) ++out.count[static_cast<std::size_t>(owner.owner(k))];
  for (int r = 1; r < ranks; ++r) out.offset[static_cast<std::size_t>(r)] = out.offset[static_cast<std::size_t>(r - 1)] + out.count[static_cast<std::size_t>(r - 1)];
  out.index.resize(keys.size());
  out.value.resize(keys.size());
  std::vector<int> at = out.offset;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    int const o = at[static_cast<std::size_t>(owner.owner(keys[i]))]++;
    out.index[static_cast<std::size_t>(o)] = owner.local(keys[i]);
    out.value[static_cast<std::size_t>(o)] = values[i];
  }
  return out;
}

/// scatter_partitioned, with `rejected`: why the caller rejected this rank's arguments already (empty: it did not).
template <strategy S, class Owner, class Op, class K, class Values, class T>
exchange_report partitioned(MPI_Comm comm, Op op, K const* keys, Values values, index_t n, T* part, index_t bins, scatter_options const& opt,
                            std::string const& rejected) {
  static_assert(default_exec::family == device_family::host, "calm::mpi: tables in host memory (the host backend)");
  char const* const who = "calm::mpi::scatter_partitioned";
  int const ranks = detail::size_of(comm), me = detail::rank_of(comm);
  Owner const owner{bins, ranks};
  detail::agreement a;
  std::int64_t const fields[6] = {bins, detail::op_number<Op>(), sizeof(T), std::is_floating_point<T>::value, 2, Owner::id};
  std::copy(fields, fields + 6, a.fields);
  detail::record_verdict(a, [&] {
    require(rejected.empty(), errc::invalid_argument, [&] { return std::string(who) + ": " + rejected; });
    calm::detail::check_scatter_sizes(who, n, bins);
    calm::detail::check_scatter_arguments(who, n, keys, values, part, owner.size(me));
    require(opt.order == nullptr, errc::invalid_argument, [&] { return std::string(who) + ": opt.order is not taken by a partitioned table"; });
    require(!is_block_local(S) || owner.size(me) <= privatize_capacity<T>(default_exec{}), errc::invalid_argument,
            [&] { return std::string(who) + ": this rank's part is too large for the block-local strategy " + to_string(S); });
  });
  detail::require_agreement(comm, who, a);
  std::vector<std::int64_t> pair_keys;
  std::vector<T> pair_values;
  detail::local_updates<S>(op, keys, values, n, bins, opt.skipped, pair_keys, pair_values);
  detail::outgoing<T> const out = detail::group_by_owner(pair_keys, pair_values, owner, ranks);
  std::vector<int> in_count(static_cast<std::size_t>(ranks)), in_offset(static_cast<std::size_t>(ranks), 0);
  detail::check(MPI_Alltoall(out.count.data(), 1, MPI_INT, in_count.data(), 1, MPI_INT, comm), "MPI_Alltoall");
  std::int64_t received = 0;
  for (int r = 0; r < ranks; ++r) in_offset[static_cast<std::size_t>(r)] = static_cast<int>(std::min<std::int64_t>(received, INT_MAX)), received += in_count[static_cast<std::size_t>(r)];
  std::int64_t most = std::max<std::int64_t>(received, static_cast<std::int64_t>(pair_keys.size())), largest = 0;
  detail::check(MPI_Allreduce(&most, &largest, 1, MPI_INT64_T, MPI_MAX, comm), "MPI_Allreduce");
  require(largest < INT_MAX, errc::invalid_argument, [&] { return std::string(who) + ": a rank sends or receives 2^31 updates or more; nothing was exchanged"; });
  std::vector<std::int64_t> in_index(static_cast<std::size_t>(received));
  std::vector<T> in_value(static_cast<std::size_t>(received));
  detail::check(MPI_Alltoallv(out.index.data(), out.count.data(), out.offset.data(), MPI_INT64_T, in_index.data(), in_count.data(), in_offset.data(),
                              MPI_INT64_T, comm), "MPI_Alltoallv");
  detail::check(MPI_Alltoallv(out.value.data(), out.count.data(), out.offset.data(), detail::datatype<T>(), in_value.data(), in_count.data(),
                              in_offset.data(), detail::datatype<T>(), comm), "MPI_Alltoallv");
  scatter_options local;
  local.overwrite = opt.overwrite;
  scatter<S>(op, in_index.data(), in_value.data(), received, part, owner.size(me), local, default_exec{});
  exchange_report report;
  report.keys = n;
  report.kept = out.count[static_cast<std::size_t>(me)];
  report.sent = static_cast<index_t>(pair_keys.size()) - report.kept;
  report.received = received - in_count[static_cast<std::size_t>(me)];
  report.bytes_sent = report.sent * static_cast<std::int64_t>(sizeof(std::int64_t) + sizeof(T));
  return report;
}

}  // namespace detail

/// table[keys[i]] = op(table[keys[i]], values[i]) for the keys of every rank of comm, into a table of
/// `bins` entries partitioned among the ranks by `owner` (block_owner by default): this rank holds
/// `part`, its owner.size(rank) entries. Each rank combines its own updates (where a dense table of
/// `bins` entries costs no more than its keys: one update per entry touched), sends each to its
/// entry's owner (MPI_Alltoallv) and scatters what it receives into `part` with calm::scatter<S>.
/// The owner map is made with the table's bins and the communicator's size. Ops: plus, max, min and
/// the bit operations; host memory. Every rank calls it (n may be 0); the ranks must agree on bins,
/// op, T and the owner map: a bad argument or a disagreement on any rank throws calm::error on every
/// rank before anything is exchanged, the parts unchanged. opt.skipped counts this rank's keys outside
/// the table; opt.overwrite sets `part` to the op's identity first; opt.order is not taken.
/// Returns what this rank moved.
///
///   calm::mpi::block_owner const owner{bins, ranks};
///   std::vector<float> part(owner.size(rank));
///   calm::mpi::scatter_partitioned(MPI_COMM_WORLD, calm::plus{}, my_keys, my_weights, my_n, part.data(), bins);
template <strategy S = strategy::automatic, class Owner = block_owner, class Op, class K, class Values, class T>
exchange_report scatter_partitioned(MPI_Comm comm, Op op, K const* keys, Values values, index_t n, T* part, index_t bins, scatter_options const& opt = {}) {
  return detail::partitioned<S, Owner>(comm, op, keys, values, n, part, bins, opt, std::string());
}

}  // namespace mpi
}  // namespace calm
