// SPDX-License-Identifier: Apache-2.0
// calm/backends/mpi/agreement.hpp: what calm's MPI tables check on every rank before they move data:
// that the ranks' arguments were accepted and that they agree on the table's shape, op and owner map,
// so that a bad argument on one rank is an error on every rank, not a hang in a collective.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "../../core/error.hpp"
#include "../../core/ops.hpp"

namespace calm {
namespace mpi {
namespace detail {

/// Throws calm::error (errc::unsupported) where an MPI call fails, naming it.
inline void check(int rc, char const* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  raise_error(error(errc::unsupported, std::string("calm::mpi: ") + call + " failed: " + std::string(text, static_cast<std::size_t>(length))));
}

/// The MPI datatype of T (the integer and floating-point types calm's ops take).
template <class T>
MPI_Datatype datatype() {
  static_assert(std::is_arithmetic<T>::value && !std::is_same<T, bool>::value, "calm::mpi: tables of integers or floating point");
  if constexpr (std::is_same<T, float>::value) return MPI_FLOAT;
  else if constexpr (std::is_same<T, double>::value) return MPI_DOUBLE;
  else if constexpr (std::is_same<T, long double>::value) return MPI_LONG_DOUBLE;
  else if constexpr (std::is_signed<T>::value) return sizeof(T) == 1 ? MPI_INT8_T : sizeof(T) == 2 ? MPI_INT16_T : sizeof(T) == 4 ? MPI_INT32_T : MPI_INT64_T;
  else return sizeof(T) == 1 ? MPI_UINT8_T : sizeof(T) == 2 ? MPI_UINT16_T : sizeof(T) == 4 ? MPI_UINT32_T : MPI_UINT64_T;
}

/// The MPI reduction of Op (sum, max, min and the bit operations), and a number that names Op.
template <class Op>
MPI_Op reduction() {
  if constexpr (std::is_same<Op, plus>::value) return MPI_SUM;
  else if constexpr (std::is_same<Op, max>::value) return MPI_MAX;
  else if constexpr (std::is_same<Op, min>::value) return MPI_MIN;
  else if constexpr (std::is_same<Op, bit_or>::value) return MPI_BOR;
  else if constexpr (std::is_same<Op, bit_and>::value) return MPI_BAND;
  else {
    static_assert(std::is_same<Op, bit_xor>::value, "calm::mpi: plus, max, min, bit_or, bit_and or bit_xor");
    return MPI_BXOR;
  }
}
template <class Op>
constexpr std::int64_t op_number() {
  return std::is_same<Op, plus>::value ? 1 : std::is_same<Op, max>::value ? 2 : std::is_same<Op, min>::value ? 3 : std::is_same<Op, bit_or>::value ? 4
         : std::is_same<Op, bit_and>::value ? 5 : 6;
}

/// What the ranks must agree on, and whether this rank's arguments were accepted (with why not).
struct agreement {
  std::int64_t fields[6] = {};  ///< bins, op, sizeof(T), floating point, layout, owner map (partitioned) or root (replicated)
  bool accepted = true;
  std::string why;
};

/// Every rank's agreement compared on every rank (two reductions of seven numbers): throws calm::error
/// on every rank where one rank's arguments were rejected (with its reason there) or the ranks differ.
inline void require_agreement(MPI_Comm comm, char const* who, agreement const& mine) {
  constexpr int count = 7;
  std::int64_t low[count], high[count], local[count];
  for (int i = 0; i < 6; ++i) local[i] = mine.fields[i];
  local[6] = mine.accepted ? 1 : 0;
  check(MPI_Allreduce(local, low, count, MPI_INT64_T, MPI_MIN, comm), "MPI_Allreduce");
  check(MPI_Allreduce(local, high, count, MPI_INT64_T, MPI_MAX, comm), "MPI_Allreduce");
  if (!mine.accepted) raise_error(error(errc::invalid_argument, std::string(who) + ": " + mine.why));
  require(low[6] == 1, errc::invalid_argument, [&] { return std::string(who) + ": another rank's arguments were rejected; nothing was exchanged"; });
  static char const* const names[6] = {"table size", "op", "table entry size", "table entry type", "table layout", "owner map or root"};
  for (int i = 0; i < 6; ++i)
    require(low[i] == high[i], errc::invalid_argument, [&] {
      return std::string(who) + ": the ranks disagree on the " + names[i] + " (" + std::to_string(low[i]) + " to " + std::to_string(high[i]) +
             "); nothing was exchanged";
    });
}

/// Runs check() (which throws calm::error on a bad argument) and records its verdict in `a`; without
/// exceptions a bad argument aborts this rank, as calm's errors do there.
template <class Check>
void record_verdict(agreement& a, Check&& check) {
#if CALM_EXCEPTIONS
  try {
    check();
  } catch (error const& e) {
    a.accepted = false;
    a.why = e.what();
  }
#else
  check();
#endif
}

}  // namespace detail
}  // namespace mpi
}  // namespace calm
