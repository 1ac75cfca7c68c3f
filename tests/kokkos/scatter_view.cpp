// SPDX-License-Identifier: Apache-2.0
// calm::kokkos::ScatterView against a sequential reference, on Kokkos's default execution space
// (Serial with Debian's Kokkos in CI; Cuda with a Kokkos built for the GPU): every op, element type,
// duplication and contribution, every key distribution, awkward sizes, and every member function.
#include "kokkos_support.hpp"

namespace calm_kokkos_test {

using calm::kokkos::ScatterDuplicated;
using calm::kokkos::ScatterMax;
using calm::kokkos::ScatterMin;
using calm::kokkos::ScatterNonDuplicated;
using calm::kokkos::ScatterProd;
using calm::kokkos::ScatterSum;

/// The body a user writes: one update per item, through the form `form` picks (0: (), 1: [],
/// 2: update(), 3: the op's other operator).
template <class SV, class T>
struct scatter_body {
  SV sv;
  view1<int const> keys;
  view1<T const> vals;
  int form;
  KOKKOS_INLINE_FUNCTION void operator()(int i) const {
    auto a = sv.access();
    int const k = keys(i);
    T const v = vals(i);
    using Op = typename SV::scatter_op;
    if (form == 2) {
      a(k).update(v);
    } else if constexpr (std::is_same<Op, ScatterSum>::value) {
      if (form == 0) a(k) += v;
      else if (form == 1) a[k] += v;
      else a(k) -= T(-v);
    } else if constexpr (std::is_same<Op, ScatterProd>::value) {
      if (form == 0) a(k) *= v;
      else if (form == 1) a[k] *= v;
      else a(k) /= v;  // v = +-1: the same product
    } else {
      if (form == 1) a[k].update(v);
      else a(k).update(v);
    }
  }
};

template <class Op, class T, class Dup>
void scatter_case(std::size_t n, int bins, calm_test::keys_kind kind, int form, std::mt19937& g) {
  INFO("n " << n << ", bins " << bins << ", keys " << calm_test::to_string(kind) << ", form " << form << ", duplicated "
            << (std::is_same<Dup, ScatterDuplicated>::value));
  auto const keys = keys_in(n, kind, bins, g);
  auto const vals = values_for<Op, T>(n, g);
  auto const init = values_for<Op, T>(static_cast<std::size_t>(bins), g);
  auto table = to_device(init, "table");
  using SV = calm::kokkos::ScatterView<T*, typename view1<T>::array_layout, space, Op, Dup>;
  SV sv(table);
  Kokkos::parallel_for("scatter", Kokkos::RangePolicy<space>(0, n), scatter_body<SV, T>{sv, to_device(keys, "keys"), to_device(vals, "vals"), form});
  calm::kokkos::contribute(table, sv);
  check_table<Op>(init, keys, vals, to_host(table));
}

}  // namespace calm_kokkos_test

using namespace calm_kokkos_test;

TEMPLATE_TEST_CASE("ScatterView: every op, type and duplication against the sequential fold", "[kokkos][scatter_view]", int, long,
                   long long, unsigned, float, double) {
  std::mt19937 g(Catch::rngSeed());
  using T = TestType;
  for (auto kind : calm_test::all_key_kinds())
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(33), std::size_t(4099), std::size_t(100003)})
      for (int bins : {1, 7, 256, 4096}) {
        int const form = static_cast<int>(g() % 4);
        if constexpr (std::is_signed<T>::value) {
          scatter_case<ScatterSum, T, ScatterNonDuplicated>(n, bins, kind, form, g);
          scatter_case<ScatterSum, T, ScatterDuplicated>(n, bins, kind, form, g);
          scatter_case<ScatterProd, T, ScatterDuplicated>(n, bins, kind, form, g);
          scatter_case<ScatterProd, T, ScatterNonDuplicated>(n, bins, kind, form, g);
        }
        scatter_case<ScatterMax, T, ScatterDuplicated>(n, bins, kind, form, g);
        scatter_case<ScatterMin, T, ScatterNonDuplicated>(n, bins, kind, form, g);
        scatter_case<ScatterMax, T, ScatterNonDuplicated>(n, bins, kind, form, g);
        scatter_case<ScatterMin, T, ScatterDuplicated>(n, bins, kind, form, g);
      }
}

namespace calm_kokkos_test {

/// ++ and -- through a count view: +1 for even items, -1 for odd ones, pre and post forms.
template <class SV>
struct count_body {
  SV sv;
  view1<int const> keys;
  KOKKOS_INLINE_FUNCTION void operator()(int i) const {
    auto a = sv.access();
    switch (i & 3) {
      case 0: ++a(keys(i)); break;
      case 1: a(keys(i))--; break;
      case 2: a(keys(i))++; break;
      default: --a[keys(i)]; break;
    }
  }
};

/// entry 0 *= 6 then /= 3; entry 1 /= 4.
template <class SV>
struct div_body {
  SV sv;
  KOKKOS_INLINE_FUNCTION void operator()(int) const {
    auto a = sv.access();
    a(0) *= 6;
    a(0) /= 3;
    a(1) /= 4;
  }
};

/// A rank-2 table: row keys(i), column i % cols, += 1 + column.
template <class SV>
struct rank2_body {
  SV sv;
  view1<int const> keys;
  int cols;
  KOKKOS_INLINE_FUNCTION void operator()(int i) const {
    auto a = sv.access();
    a(keys(i), i % cols) += 1 + i % cols;
  }
};

template <class Layout, class Dup, class DataType>
void rank2_case(std::mt19937& g) {
  int const rows = 37, cols = 3;
  std::size_t const n = 5003;
  auto const keys = keys_in(n, calm_test::keys_kind::hot, rows, g);
  using table_type = Kokkos::View<DataType, Layout, space>;
  table_type table;
  if constexpr (table_type::rank_dynamic == 1) table = table_type("table", rows);  // long*[3]: the 3 is in the type
  else table = table_type("table", rows, cols);
  Kokkos::deep_copy(table, 5);
  using SV = calm::kokkos::ScatterView<DataType, Layout, space, ScatterSum, Dup>;
  SV sv(table);
  Kokkos::parallel_for(Kokkos::RangePolicy<space>(0, n), rank2_body<SV>{sv, to_device(keys, "keys"), cols});
  calm::kokkos::contribute(table, sv);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), table);
  std::vector<long> expect(rows * cols, 5);
  for (std::size_t i = 0; i < n; ++i) expect[keys[i] * cols + i % cols] += 1 + static_cast<long>(i % cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) REQUIRE(h(r, c) == expect[r * cols + c]);
}

}  // namespace calm_kokkos_test

TEMPLATE_TEST_CASE("ScatterView: ++ and --, rank 2 in both layouts", "[kokkos][scatter_view]", ScatterNonDuplicated, ScatterDuplicated) {
  std::mt19937 g(Catch::rngSeed());
  using Dup = TestType;
  for (int bins : {1, 5, 300}) {
    std::size_t const n = 10007;
    auto const keys = keys_in(n, calm_test::keys_kind::zipf, bins, g);
    view1<long> table("table", bins);
    using SV = calm::kokkos::ScatterView<long*, typename view1<long>::array_layout, space, ScatterSum, Dup>;
    SV sv(table);
    Kokkos::parallel_for(Kokkos::RangePolicy<space>(0, n), count_body<SV>{sv, to_device(keys, "keys")});
    calm::kokkos::contribute(table, sv);
    std::vector<long> expect(bins, 0);
    for (std::size_t i = 0; i < n; ++i) expect[keys[i]] += (i & 3) == 0 || (i & 3) == 2 ? 1 : -1;
    REQUIRE(to_host(table) == expect);
  }
  rank2_case<Kokkos::LayoutRight, Dup, long**>(g);
  rank2_case<Kokkos::LayoutLeft, Dup, long**>(g);
  rank2_case<Kokkos::LayoutRight, Dup, long* [3]>(g);
  rank2_case<Kokkos::LayoutLeft, Dup, long* [3]>(g);
}

TEMPLATE_TEST_CASE("ScatterView: reset, reset_except, contribute_into, subview, resize, realloc", "[kokkos][scatter_view]",
                   ScatterNonDuplicated, ScatterDuplicated) {
  std::mt19937 g(Catch::rngSeed());
  using Dup = TestType;
  constexpr bool dup = std::is_same<Dup, ScatterDuplicated>::value;
  using SV = calm::kokkos::ScatterView<int*, typename view1<int>::array_layout, space, ScatterSum, Dup>;
  int const bins = 50;
  std::size_t const n = 3001;
  auto const keys = keys_in(n, calm_test::keys_kind::uniform_many, bins, g);
  auto const vals = values_for<ScatterSum, int>(n, g);
  auto const dkeys = to_device(keys, "keys");
  auto const dvals = to_device(vals, "vals");
  std::vector<int> const init(bins, 7), zero(bins, 0);
  auto run = [&](SV const& sv) { Kokkos::parallel_for(Kokkos::RangePolicy<space>(0, n), scatter_body<SV, int>{sv, dkeys, dvals, 0}); };

  SECTION("reset_except keeps the original; reset clears what updates go to") {
    auto table = to_device(init, "table");
    SV sv(table);
    sv.reset_except(table);
    REQUIRE(to_host(table) == init);
    run(sv);
    calm::kokkos::contribute(table, sv);
    check_table<ScatterSum>(init, keys, vals, to_host(table));
    sv.reset();
    if (!dup) REQUIRE(to_host(table) == zero);  // the original is the copy (Kokkos's semantics)
    REQUIRE(to_host(sv.subview()) == zero);
  }
  SECTION("contribute_into another view, twice: duplicated, each adds everything gathered; not, nothing (as Kokkos)") {
    auto table = to_device(init, "table");
    auto other = to_device(init, "other");
    SV sv(table);
    sv.reset_except(table);
    run(sv);
    sv.contribute_into(other);
    sv.contribute_into(other);
    auto twice = to_host(other);
    if (dup) {
      std::vector<int> doubled(vals.size());
      for (std::size_t i = 0; i < vals.size(); ++i) doubled[i] = 2 * vals[i];
      check_table<ScatterSum>(init, keys, doubled, twice);
      REQUIRE(to_host(table) == init);  // untouched until contributed into
    } else {
      REQUIRE(twice == init);  // the updates went into table
      check_table<ScatterSum>(init, keys, vals, to_host(table));
    }
  }
  SECTION("a view of its own: contribute_into(subview()) folds the copies into the first") {
    SV sv("own", bins);
    REQUIRE(sv.is_allocated());
    REQUIRE(to_host(sv.subview()) == zero);
    run(sv);
    sv.contribute_into(sv.subview());
    check_table<ScatterSum>(zero, keys, vals, to_host(sv.subview()));
  }
  SECTION("resize and realloc give new extents; duplicated copies start again at the identity") {
    SV sv("own", 3);
    Kokkos::deep_copy(sv.subview(), 7);
    Kokkos::resize(sv, bins);
    REQUIRE(sv.subview().extent(0) == static_cast<std::size_t>(bins));
    auto const kept = to_host(sv.subview());
    for (int b = 0; b < bins; ++b) REQUIRE(kept[b] == (dup || b >= 3 ? 0 : 7));  // Kokkos::resize keeps the view's contents
    sv.reset();
    run(sv);
    view1<int> out("out", bins);
    calm::kokkos::contribute(out, sv);
    if (dup) check_table<ScatterSum>(zero, keys, vals, to_host(out));
    else check_table<ScatterSum>(zero, keys, vals, to_host(sv.subview()));
    Kokkos::realloc(sv, 2 * bins);
    REQUIRE(sv.subview().extent(0) == static_cast<std::size_t>(2 * bins));
    REQUIRE(to_host(sv.subview()) == std::vector<int>(2 * bins, 0));
    run(sv);
    view1<int> out2("out2", 2 * bins);
    calm::kokkos::contribute(out2, sv);
    std::vector<int> init2(2 * bins, 0);
    check_table<ScatterSum>(init2, keys, vals, dup ? to_host(out2) : to_host(sv.subview()));
  }
  SECTION("create_scatter_view picks the op and the defaults") {
    auto table = to_device(init, "table");
    auto sv_max = calm::kokkos::create_scatter_view(ScatterMax{}, table);
    using defaults = calm::kokkos::ScatterView<int*, typename view1<int>::array_layout, typename view1<int>::device_type, ScatterMax>;
    static_assert(std::is_same<decltype(sv_max), defaults>::value, "create_scatter_view(op, view): the op and the defaults");
    static_assert(std::is_same<decltype(calm::kokkos::create_scatter_view(table)),
                               calm::kokkos::ScatterView<int*, typename view1<int>::array_layout, typename view1<int>::device_type>>::value,
                  "create_scatter_view(view): the defaults");
    auto sv = calm::kokkos::create_scatter_view<ScatterSum, Dup, calm::kokkos::ScatterAtomic>(table);
    static_assert(std::is_same<decltype(sv), calm::kokkos::ScatterView<int*, typename view1<int>::array_layout, typename view1<int>::device_type,
                                                                       ScatterSum, Dup, calm::kokkos::ScatterAtomic>>::value,
                  "create_scatter_view type");
    sv.reset_except(table);
    Kokkos::parallel_for(Kokkos::RangePolicy<space>(0, n), scatter_body<decltype(sv), int>{sv, dkeys, dvals, 1});
    calm::kokkos::contribute(table, sv);
    check_table<ScatterSum>(init, keys, vals, to_host(table));
  }
  SECTION("a destination of other extents is refused before anything runs (duplicated)") {
    auto table = to_device(init, "table");
    SV sv(table);
    sv.reset_except(table);
    view1<int> small("small", bins - 1);
    Kokkos::deep_copy(small, 3);
    if (dup) REQUIRE_THROWS_AS(sv.contribute_into(small), calm::error);
    REQUIRE(to_host(small) == std::vector<int>(bins - 1, 3));
  }
  SECTION("/= divides, as Kokkos's") {
    using PV = calm::kokkos::ScatterView<int*, typename view1<int>::array_layout, space, ScatterProd, Dup>;
    auto table = to_device(std::vector<int>(4, 12), "table");
    PV pv(table);
    pv.reset_except(table);
    Kokkos::parallel_for(Kokkos::RangePolicy<space>(0, 1), div_body<PV>{pv});
    calm::kokkos::contribute(table, pv);
    // entry 0: *6 then /3 (x2); 1: /4 (x1/4, integer: 12 -> 3 in place; a copy at 1 goes to 0);
    std::vector<int> const expect = dup ? std::vector<int>{24, 0, 12, 12} : std::vector<int>{24, 3, 12, 12};
    REQUIRE(to_host(table) == expect);
  }
}
