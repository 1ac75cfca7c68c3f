// SPDX-License-Identifier: Apache-2.0
// calm/mpi.hpp under mpirun: replicated and partitioned tables against a sequential reference of the whole
// data set (every rank draws every rank's keys from one seed), every op, ragged shards, empty ranks, keys outside
// the table; a bad argument or a disagreement on one rank an error on every rank, the tables unchanged.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <calm/mpi.hpp>

#include <mpi.h>
#if defined(CALM_MPI_TEST_KOKKOS)
#include <Kokkos_Core.hpp>
#endif

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using calm::index_t;

/// The strategy of the op and type sweeps: one strategy compiles in a fraction of automatic's time, and the
/// tables' exchange does not depend on it (the views and error tests run automatic).
constexpr calm::strategy swept = calm::strategy::thread_private;

int rank_of() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int ranks() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

/// One seed for every rank: rank 0's Catch seed, broadcast.
std::uint64_t shared_seed(std::uint64_t salt) {
  std::uint64_t s = static_cast<std::uint64_t>(Catch::rngSeed()) * 0x9E3779B97F4A7C15ull + salt;
  MPI_Bcast(&s, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return s;
}

/// The shards of every rank: keys (about 1 in 40 outside the table, negative or past it) and values.
template <class T>
struct shard {
  std::vector<std::int64_t> keys;
  std::vector<T> values;
};

template <class Op, class T>
T draw_value(std::mt19937_64& g) {
  if constexpr (std::is_floating_point<T>::value) return static_cast<T>(std::uniform_real_distribution<double>(-100.0, 100.0)(g));
  else if constexpr (std::is_same<Op, calm::plus>::value) return static_cast<T>(g() % 1000);
  else return static_cast<T>(g());
}

template <class Op, class T>
std::vector<shard<T>> all_shards(std::uint64_t seed, index_t bins, int parts) {
  std::mt19937_64 g(seed);
  std::vector<shard<T>> s(static_cast<std::size_t>(parts));
  for (int r = 0; r < parts; ++r) {
    index_t const n = r == 1 ? 0 : static_cast<index_t>(g() % 3000) + (r == 0 ? 1 : 0);  // rank 1 has no keys
    bool const hot = g() % 2 == 0;
    for (index_t i = 0; i < n; ++i) {
      std::int64_t k = hot && g() % 2 == 0 ? static_cast<std::int64_t>(bins / 2) : static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(bins));
      if (g() % 40 == 0) k = g() % 2 ? -1 - static_cast<std::int64_t>(g() % 5) : bins + static_cast<std::int64_t>(g() % 5);
      s[static_cast<std::size_t>(r)].keys.push_back(k);
      s[static_cast<std::size_t>(r)].values.push_back(draw_value<Op, T>(g));
    }
  }
  return s;
}

/// The whole data set folded into `table` in rank order; `magnitude` gets each entry's sum of |terms|.
template <class Op, class T>
void fold(std::vector<shard<T>> const& s, std::vector<T>& table, std::vector<double>& magnitude) {
  magnitude.assign(table.size(), 0.0);
  for (auto const& sh : s)
    for (std::size_t i = 0; i < sh.keys.size(); ++i) {
      std::int64_t const k = sh.keys[i];
      if (k < 0 || k >= static_cast<std::int64_t>(table.size())) continue;
      table[static_cast<std::size_t>(k)] = Op{}(table[static_cast<std::size_t>(k)], sh.values[i]);
      magnitude[static_cast<std::size_t>(k)] += std::fabs(static_cast<double>(sh.values[i]));
    }
}

template <class T>
void check_entries(std::vector<T> const& got, std::vector<T> const& want, std::vector<double> const& magnitude, char const* what) {
  std::size_t wrong = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    bool ok = got[i] == want[i];
    if constexpr (std::is_floating_point<T>::value) ok = std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i])) <= 64 * 1.2e-7 * (magnitude[i] + std::fabs(static_cast<double>(want[i])));
    if (!ok && wrong++ == 0) first = i;
  }
  INFO(what << ": " << wrong << " of " << got.size() << " entries wrong, the first at " << first);
  CHECK(wrong == 0);
}

std::int64_t outside(std::vector<std::int64_t> const& keys, index_t bins) {
  std::int64_t c = 0;
  for (auto k : keys) c += k < 0 || k >= bins;
  return c;
}

template <class Op, class T>
void check_replicated(index_t bins, int root, bool overwrite = false) {
  int const me = rank_of(), p = ranks();
  auto const shards = all_shards<Op, T>(shared_seed(static_cast<std::uint64_t>(bins) * 7 + static_cast<std::uint64_t>(root + 2)), bins, p);
  std::mt19937_64 g(shared_seed(99) + static_cast<std::uint64_t>(me));  // each rank's table starts as its own
  std::vector<T> table(static_cast<std::size_t>(bins));
  for (auto& x : table) x = draw_value<Op, T>(g);
  std::vector<T> want = table;
  std::vector<double> magnitude;
  bool const receives = root == calm::mpi::all_ranks || me == root;
  if (receives && overwrite) std::fill(want.begin(), want.end(), Op::template identity<T>());
  if (receives) fold<Op>(shards, want, magnitude);
  else magnitude.assign(want.size(), 0.0);
  auto const& mine = shards[static_cast<std::size_t>(me)];
  std::uint64_t skipped = 0;
  calm::scatter_options opt;
  opt.skipped = &skipped;
  opt.overwrite = overwrite;
  calm::mpi::scatter_replicated<swept>(MPI_COMM_WORLD, Op{}, mine.keys.data(), mine.values.data(), static_cast<index_t>(mine.keys.size()), table.data(), bins,
                                       opt, root);
  INFO("replicated, rank " << me << " of " << p << ", bins " << bins << ", root " << root << ", overwrite " << overwrite);
  check_entries(table, want, magnitude, "the table");
  CHECK(static_cast<std::int64_t>(skipped) == outside(mine.keys, bins));
}

template <class Op, class T, class Owner>
void check_partitioned(index_t bins, bool counting, bool overwrite = false) {
  int const me = rank_of(), p = ranks();
  auto shards = all_shards<Op, T>(shared_seed(static_cast<std::uint64_t>(bins) * 13 + Owner::id * 3 + counting), bins, p);
  if (counting)
    for (auto& s : shards) std::fill(s.values.begin(), s.values.end(), T(1));
  std::vector<T> whole(static_cast<std::size_t>(bins));
  std::mt19937_64 g(shared_seed(7));
  for (auto& x : whole) x = draw_value<Op, T>(g);
  Owner const owner{bins, p};
  std::vector<T> part;
  for (index_t k = 0; k < bins; ++k)
    if (owner.owner(k) == me) part.push_back(whole[static_cast<std::size_t>(k)]);
  REQUIRE(static_cast<index_t>(part.size()) == owner.size(me));
  std::vector<double> magnitude;
  if (overwrite) std::fill(whole.begin(), whole.end(), Op::template identity<T>());
  fold<Op>(shards, whole, magnitude);
  auto const& mine = shards[static_cast<std::size_t>(me)];
  index_t const n = static_cast<index_t>(mine.keys.size());
  std::uint64_t skipped = 0;
  calm::scatter_options opt;
  opt.skipped = &skipped;
  opt.overwrite = overwrite;
  calm::mpi::exchange_report const report =
      counting ? calm::mpi::scatter_partitioned<swept, Owner>(MPI_COMM_WORLD, Op{}, mine.keys.data(), calm::constant(T(1)), n,
                                                                                   part.data(), bins, opt)
               : calm::mpi::scatter_partitioned<swept, Owner>(MPI_COMM_WORLD, Op{}, mine.keys.data(), mine.values.data(), n, part.data(),
                                                                                   bins, opt);
  INFO("partitioned (owner map " << Owner::id << "), rank " << me << " of " << p << ", bins " << bins << ", counting " << counting);
  std::vector<T> want_part;
  std::vector<double> mag;
  for (index_t k = 0; k < bins; ++k)
    if (owner.owner(k) == me) want_part.push_back(whole[static_cast<std::size_t>(k)]), mag.push_back(magnitude[static_cast<std::size_t>(k)]);
  check_entries(part, want_part, mag, "this rank's part");
  CHECK(static_cast<std::int64_t>(skipped) == outside(mine.keys, bins));
  CHECK(report.keys == n);
  CHECK(report.sent + report.kept <= n - outside(mine.keys, bins));
  CHECK(report.bytes_sent == report.sent * static_cast<std::int64_t>(8 + sizeof(T)));
  std::int64_t sent = report.sent, received = report.received, all_sent = 0, all_received = 0;
  MPI_Allreduce(&sent, &all_sent, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&received, &all_received, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  CHECK(all_sent == all_received);
}

}  // namespace

TEST_CASE("mpi: a replicated table gets every rank's updates, every op, on every rank or on a root", "[mpi]") {
  for (index_t bins : {index_t(1), index_t(7), index_t(4099)}) {
    for (int root : {calm::mpi::all_ranks, ranks() - 1}) {
      check_replicated<calm::plus, std::int64_t>(bins, root);
      check_replicated<calm::plus, double>(bins, root);
      check_replicated<calm::max, std::int32_t>(bins, root);
      check_replicated<calm::min, float>(bins, root);
      check_replicated<calm::bit_or, std::uint32_t>(bins, root);
      check_replicated<calm::bit_xor, std::uint64_t>(bins, root);
      check_replicated<calm::bit_and, std::uint64_t>(bins, root);
      check_replicated<calm::plus, float>(bins, root, true);
      check_replicated<calm::max, std::int64_t>(bins, root, true);
    }
  }
}

TEST_CASE("mpi: a partitioned table gets every rank's updates at their owners, block and cyclic", "[mpi]") {
  for (index_t bins : {index_t(1), index_t(5), index_t(4099), index_t(1) << 20}) {  // 2^20: more entries than keys, the updates sent as they are
    check_partitioned<calm::plus, std::uint32_t, calm::mpi::block_owner>(bins, true);
    check_partitioned<calm::plus, double, calm::mpi::block_owner>(bins, false);
    check_partitioned<calm::plus, std::int64_t, calm::mpi::cyclic_owner>(bins, false);
    check_partitioned<calm::max, float, calm::mpi::cyclic_owner>(bins, false);
    check_partitioned<calm::min, std::int32_t, calm::mpi::block_owner>(bins, false);
    check_partitioned<calm::bit_xor, std::uint64_t, calm::mpi::cyclic_owner>(bins, false);
    check_partitioned<calm::plus, float, calm::mpi::cyclic_owner>(bins, false, true);
  }
}

TEST_CASE("mpi: a bad argument or a disagreement on one rank is an error on every rank, nothing exchanged", "[mpi]") {
  int const me = rank_of(), p = ranks();
  std::vector<std::int64_t> keys(10, 2);
  std::vector<float> values(10, 1.0f), table(16, 3.0f);
  std::vector<float> const before = table;
  // rank 0 passes null keys
  REQUIRE_THROWS_AS(calm::mpi::scatter_replicated(MPI_COMM_WORLD, calm::plus{}, me == 0 ? nullptr : keys.data(), values.data(), 10, table.data(), 16),
                    calm::error);
  // the last rank has another table size
  index_t const bins = me == p - 1 ? 15 : 16;
  REQUIRE_THROWS_AS(calm::mpi::scatter_replicated(MPI_COMM_WORLD, calm::plus{}, keys.data(), values.data(), 10, table.data(), bins), calm::error);
  CHECK(table == before);
  calm::mpi::block_owner const owner{16, p};
  std::vector<float> part(static_cast<std::size_t>(owner.size(me)), 3.0f);
  std::vector<float> const part_before = part;
  REQUIRE_THROWS_AS(calm::mpi::scatter_partitioned(MPI_COMM_WORLD, calm::plus{}, keys.data(), values.data(), 10, part.data(), bins), calm::error);
  REQUIRE_THROWS_AS(calm::mpi::scatter_partitioned(MPI_COMM_WORLD, calm::plus{}, keys.data(), me == 0 ? nullptr : values.data(), 10, part.data(), 16),
                    calm::error);
  CHECK(part == part_before);
  // a forced block-local strategy that the parts of all ranks but the last outgrow
  index_t const capacity = calm::privatize_capacity<float>(calm::default_exec{});
  index_t const big = capacity * p + 1;
  calm::mpi::block_owner const big_owner{big, p};
  std::vector<float> big_part(static_cast<std::size_t>(big_owner.size(me)), 0.0f);
  REQUIRE_THROWS_AS(calm::mpi::scatter_partitioned<calm::strategy::privatize>(MPI_COMM_WORLD, calm::plus{}, keys.data(), values.data(), 10, big_part.data(), big),
                    calm::error);
  // after the errors the ranks still meet: a good call goes through
  calm::mpi::scatter_replicated(MPI_COMM_WORLD, calm::plus{}, keys.data(), values.data(), 10, table.data(), 16);
  CHECK(table[2] == 3.0f + 10.0f * static_cast<float>(p));
}

/// A contiguous or strided one-dimensional view of a vector, with Kokkos::View's members calm::mpi reads.
template <class T>
struct strided_view {
  std::vector<T>* v;
  std::size_t stride = 1;
  T* data() const { return v->data(); }
  std::size_t extent(int) const { return v->size() / stride; }
  bool span_is_contiguous() const { return stride == 1; }
};

TEST_CASE("mpi: views of keys, values and tables, and a view that is not contiguous an error on every rank", "[mpi]") {
  int const me = rank_of(), p = ranks();
  std::vector<std::int32_t> keys(1000);
  std::vector<double> values(1000, 0.5), table(64, 0.0), copy;
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<std::int32_t>((i * 7 + static_cast<std::size_t>(me)) % 64);
  calm::mpi::scatter_replicated(MPI_COMM_WORLD, calm::plus{}, strided_view<std::int32_t>{&keys}, strided_view<double>{&values}, strided_view<double>{&table});
  double total = 0;
  for (double x : table) total += x;
  CHECK(total == 500.0 * p);
  copy = table;
  REQUIRE_THROWS_AS(calm::mpi::scatter_replicated(MPI_COMM_WORLD, calm::plus{}, strided_view<std::int32_t>{&keys, me == 0 ? 2u : 1u},
                                                  calm::constant(1.0), strided_view<double>{&table}),
                    calm::error);
  CHECK(table == copy);
  calm::mpi::cyclic_owner const owner{64, p};
  std::vector<double> part(static_cast<std::size_t>(owner.size(me)), 0.0);
  calm::mpi::scatter_partitioned<calm::strategy::automatic, calm::mpi::cyclic_owner>(MPI_COMM_WORLD, calm::plus{}, strided_view<std::int32_t>{&keys},
                                                                                     calm::constant(2.0), strided_view<double>{&part}, 64);
  double mine = 0, all = 0;
  for (double x : part) mine += x;
  MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  CHECK(all == 2000.0 * p);
  std::vector<double> wrong(part.size() + 1);  // a part of another size than the owner map gives
  REQUIRE_THROWS_AS(calm::mpi::scatter_partitioned(MPI_COMM_WORLD, calm::plus{}, strided_view<std::int32_t>{&keys}, calm::constant(2.0),
                                                   strided_view<double>{me == p - 1 ? &wrong : &part}, 64),
                    calm::error);
#if defined(CALM_MPI_TEST_KOKKOS)
  Kokkos::View<std::int64_t*, Kokkos::HostSpace> kk("keys", 500);
  Kokkos::View<float*, Kokkos::HostSpace> kt("table", 10);
  for (int i = 0; i < 500; ++i) kk(i) = (i + me) % 10;
  calm::mpi::scatter_replicated(MPI_COMM_WORLD, calm::max{}, kk, calm::constant(3.0f), kt);
  for (int b = 0; b < 10; ++b) CHECK(kt(b) == 3.0f);
#endif
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
#if defined(CALM_MPI_TEST_KOKKOS)
  Kokkos::initialize(argc, argv);
#endif
  int const result = Catch::Session().run(argc, argv);
#if defined(CALM_MPI_TEST_KOKKOS)
  Kokkos::finalize();
#endif
  int worst = 0;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
