// SPDX-License-Identifier: Apache-2.0
// Conformance: the workload routines (spmv_coo, sum_compacted, kmeans_update, count_duplicates,
// global_max/min) against sequential references on random inputs of every shape, with ragged sizes,
// empty inputs, and bad input rejected before anything is written.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "../support/scatter_reference.hpp"

namespace calm_test {

/// got[i] within bound[i] of expect[i] for every i, one assertion for the whole output.
template <class T>
void require_close(std::vector<T> const& got, std::vector<double> const& expect, std::vector<double> const& bound, char const* what) {
  REQUIRE(got.size() == expect.size());
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(static_cast<double>(got[i]) - expect[i]) <= bound[i])) {
      if (!bad) first = i;
      ++bad;
    }
  if (bad) {
    INFO(what << ": " << bad << " of " << got.size() << " outside the bound; first at " << first << ": got " << got[first] << ", expected "
              << expect[first] << " +- " << bound[first]);
    REQUIRE(bad == 0);
  }
}

// ---- spmv_coo ----

enum class matrix_kind { stencil2d, stencil3d, power_law, dense_rows, uniform, one_row };
inline char const* to_string(matrix_kind k) {
  static char const* names[] = {"stencil2d", "stencil3d", "power_law", "dense_rows", "uniform", "one_row"};
  return names[static_cast<int>(k)];
}

struct coo {
  index_t rows = 0, cols = 0;
  std::vector<long long> row, col;
};

/// A random matrix of about `size` rows of the given kind, entries sorted by row unless shuffled.
template <class G>
coo make_matrix(matrix_kind kind, index_t size, G& g, bool shuffled) {
  coo m;
  auto add = [&](long long r, long long c) { m.row.push_back(r), m.col.push_back(c); };
  switch (kind) {
    case matrix_kind::stencil2d: {
      index_t const s = std::max<index_t>(1, static_cast<index_t>(std::sqrt(static_cast<double>(size))));
      m.rows = m.cols = s * s;
      for (index_t y = 0; y < s; ++y)
        for (index_t x = 0; x < s; ++x) {
          index_t const r = y * s + x;
          if (y > 0) add(r, r - s);
          if (x > 0) add(r, r - 1);
          add(r, r);
          if (x + 1 < s) add(r, r + 1);
          if (y + 1 < s) add(r, r + s);
        }
      break;
    }
    case matrix_kind::stencil3d: {
      index_t const s = std::max<index_t>(1, static_cast<index_t>(std::cbrt(static_cast<double>(size))));
      m.rows = m.cols = s * s * s;
      for (index_t z = 0; z < s; ++z)
        for (index_t y = 0; y < s; ++y)
          for (index_t x = 0; x < s; ++x)
            for (int dz = -1; dz <= 1; ++dz)
              for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                  index_t const X = x + dx, Y = y + dy, Z = z + dz;
                  if (X >= 0 && X < s && Y >= 0 && Y < s && Z >= 0 && Z < s) add((z * s + y) * s + x, (Z * s + Y) * s + X);
                }
      break;
    }
    case matrix_kind::power_law:
    case matrix_kind::dense_rows:
    case matrix_kind::uniform: {
      m.rows = m.cols = std::max<index_t>(1, size);
      std::uniform_int_distribution<long long> any(0, m.cols - 1);
      std::uniform_real_distribution<double> u(0, 1);
      for (index_t r = 0; r < m.rows; ++r) {
        index_t len = 0;
        if (kind == matrix_kind::power_law) len = std::min<index_t>(m.cols, static_cast<index_t>(1.0 / std::pow(1.0 - u(g), 1.0 / 1.5)) - 1);
        else if (kind == matrix_kind::dense_rows) len = (r % 97 == 3) ? std::min<index_t>(m.cols, 700) : 3;
        else len = static_cast<index_t>(u(g) * 8);
        for (index_t j = 0; j < len; ++j) add(r, any(g));
      }
      break;
    }
    case matrix_kind::one_row: {
      m.rows = 10, m.cols = std::max<index_t>(1, size);
      std::uniform_int_distribution<long long> any(0, m.cols - 1);
      for (index_t j = 0; j < size * 3 + 7; ++j) add(5, any(g));
      break;
    }
  }
  if (shuffled) {
    std::vector<std::size_t> p(m.row.size());
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = i;
    std::shuffle(p.begin(), p.end(), g);
    coo s = m;
    for (std::size_t i = 0; i < p.size(); ++i) s.row[i] = m.row[p[i]], s.col[i] = m.col[p[i]];
    m = s;
  }
  return m;
}

/// offset: the arrays start that many elements into their buffers (1: not aligned to 16-byte chunks).
/// together: the run merge with the host's W lanes kept together as on a GPU (the routine gives each
/// host lane a slice of its own; on a GPU both are the same code).
template <class T, class I>
void check_spmv(matrix_kind kind, index_t size, bool shuffled, calm::spmv_method method, int offset = 0, bool together = false) {
  auto g = rng(4242 + static_cast<int>(kind) * 31 + size + shuffled * 7 + static_cast<int>(method) * 1009);
  coo const m = make_matrix(kind, size, g, shuffled);
  index_t const nnz = static_cast<index_t>(m.row.size());
  std::vector<I> row(static_cast<std::size_t>(offset), I(0)), col(static_cast<std::size_t>(offset), I(0));
  row.insert(row.end(), m.row.begin(), m.row.end());
  col.insert(col.end(), m.col.begin(), m.col.end());
  auto vals = random_values<T>(static_cast<std::size_t>(nnz + offset), g, T(-2), T(2));
  auto x = random_values<T>(static_cast<std::size_t>(m.cols), g, T(-1), T(1));
  auto y0 = random_values<T>(static_cast<std::size_t>(m.rows), g, T(-1), T(1));
  std::vector<double> expect(y0.begin(), y0.end()), abs_sum(y0.size()), terms(y0.size(), 1.0), bound(y0.size());
  for (index_t e = 0; e < nnz; ++e) {
    double const p = static_cast<double>(vals[e + offset]) * static_cast<double>(x[m.col[e]]);
    expect[m.row[e]] += p, abs_sum[m.row[e]] += std::fabs(p), terms[m.row[e]] += 1;
  }
  for (std::size_t r = 0; r < y0.size(); ++r) bound[r] = sum_bound<T>(static_cast<std::size_t>(terms[r]) + 1, abs_sum[r] + std::fabs(y0[r]));
  buffer<I> drow(row), dcol(col);
  buffer<T> dvals(vals), dx(x), dy(y0);
  calm::spmv_options opt;
  opt.method = method;
  INFO("spmv_coo " << to_string(kind) << ", rows " << m.rows << ", nnz " << nnz << ", shuffled " << shuffled << ", method " << static_cast<int>(method)
                   << ", " << sizeof(T) << "-byte values, " << sizeof(I) << "-byte indices, offset " << offset << ", lanes together " << together);
  if (together) {
    calm::detail::coo_source<T, I> const src{static_cast<I const*>(drow.data()) + offset, static_cast<I const*>(dcol.data()) + offset,
                                             static_cast<T const*>(dvals.data()) + offset, static_cast<T const*>(dx.data()), m.rows, m.cols};
    if (nnz > 0) calm::detail::launch_run_merge<true, 4, false>(calm::plus{}, src, nnz, dy.data(), offset == 0, exec{});
  } else {
    calm::spmv_coo(static_cast<I const*>(drow.data()) + offset, static_cast<I const*>(dcol.data()) + offset, static_cast<T const*>(dvals.data()) + offset,
                   nnz, static_cast<T const*>(dx.data()), dy.data(), m.rows, m.cols, opt, exec{});
  }
  synchronize();
  require_close(dy.download(), expect, bound, "y");
}

// ---- kmeans_update ----

template <class T, class C>
void check_kmeans(calm::kmeans_method method, keys_kind kind, index_t n, int d, index_t k) {
  auto g = rng(777 + static_cast<int>(kind) * 17 + n + d * 5 + k * 3 + static_cast<int>(method) * 101);
  auto assign = table_keys<std::int32_t>(static_cast<std::size_t>(n), kind, k, g, false);
  auto points = random_values<T>(static_cast<std::size_t>(n) * d, g, T(-10), T(10));
  auto sums0 = random_values<T>(static_cast<std::size_t>(k) * d, g, T(-1), T(1));
  auto counts0 = random_values<C>(static_cast<std::size_t>(k), g, C(0), C(100));
  std::vector<double> expect(sums0.begin(), sums0.end()), abs_sum(expect.size()), bound(expect.size());
  std::vector<C> expect_counts = counts0;
  for (index_t i = 0; i < n; ++i) {
    index_t const a = assign[i];
    expect_counts[a] += 1;
    for (int j = 0; j < d; ++j) expect[a * d + j] += points[i * d + j], abs_sum[a * d + j] += std::fabs(points[i * d + j]);
  }
  for (std::size_t e = 0; e < expect.size(); ++e)
    bound[e] = sum_bound<T>(static_cast<std::size_t>(expect_counts[e / d] - counts0[e / d]) + 1, abs_sum[e] + std::fabs(sums0[e]));
  buffer<std::int32_t> da(assign);
  buffer<T> dp(points), ds(sums0);
  buffer<C> dc(counts0);
  calm::kmeans_options opt;
  opt.method = method;
  INFO("kmeans_update " << calm::to_string(method) << ", " << to_string(kind) << ", n " << n << ", d " << d << ", k " << k);
  calm::kmeans_update(static_cast<T const*>(dp.data()), static_cast<std::int32_t const*>(da.data()), n, d, k, ds.data(), dc.data(), opt, exec{});
  synchronize();
  require_equal(dc.download(), expect_counts, "counts");
  require_close(ds.download(), expect, bound, "sums");
}

// ---- count_duplicates ----

template <class K, class C>
void check_count_duplicates(calm::strategy s, keys_kind kind, index_t n, index_t bound) {
  auto g = rng(31337 + static_cast<int>(kind) * 19 + n + bound * 7 + static_cast<int>(s) * 3);
  auto keys = table_keys<K>(static_cast<std::size_t>(n), kind, bound, g, false);
  std::map<long long, C> ref;
  for (K k : keys) ref[static_cast<long long>(k)] += 1;
  index_t const room = std::max<index_t>(1, std::min(n, bound));
  buffer<K> dk(keys), du(static_cast<std::size_t>(room));
  buffer<C> dc(static_cast<std::size_t>(room));
  buffer<index_t> dn(std::vector<index_t>{-5});
  du.fill_bytes(0xff);
  dc.fill_bytes(0xff);
  INFO("count_duplicates " << calm::to_string(s) << ", " << to_string(kind) << ", n " << n << ", key_bound " << bound);
  with_one_of<calm::strategy::automatic, calm::strategy::naive, calm::strategy::peer_reduce, calm::strategy::privatize>(s, [&](auto c) {
    calm::count_duplicates<c()>(static_cast<K const*>(dk.data()), n, bound, du.data(), dc.data(), dn.data(), {}, exec{});
  });
  synchronize();
  index_t const got_n = dn.download()[0];
  REQUIRE(got_n == static_cast<index_t>(ref.size()));
  std::vector<K> expect_keys;
  std::vector<C> expect_counts;
  for (auto const& kv : ref) expect_keys.push_back(static_cast<K>(kv.first)), expect_counts.push_back(kv.second);
  auto u = du.download();
  auto c = dc.download();
  u.resize(static_cast<std::size_t>(got_n));
  c.resize(static_cast<std::size_t>(got_n));
  require_equal(u, expect_keys, "unique keys");
  require_equal(c, expect_counts, "counts");
}

/// Keys of any value for the hashed count_duplicates: a pool of `distinct` values of K with random
/// bits, the type's extremes, 0, 1 and all-ones among them, drawn uniformly, skewed (a few keys take
/// most draws), or in sorted runs.
enum class pool_draw { uniform, skewed, runs };
inline char const* to_string(pool_draw d) {
  static char const* names[] = {"uniform", "skewed", "runs"};
  return names[static_cast<int>(d)];
}

template <class K>
std::vector<K> pool_keys(std::size_t n, std::size_t distinct, pool_draw draw, std::mt19937_64& g) {
  std::vector<K> pool = {std::numeric_limits<K>::min(), std::numeric_limits<K>::max(), K(0), K(1), static_cast<K>(~K(0))};
  while (pool.size() < distinct) pool.push_back(static_cast<K>(g()));
  pool.resize(std::max<std::size_t>(1, distinct));
  std::shuffle(pool.begin(), pool.end(), g);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<K> keys(n);
  for (std::size_t i = 0; i < n; ++i) {
    double const x = u(g);
    std::size_t const at = draw == pool_draw::skewed ? static_cast<std::size_t>(static_cast<double>(pool.size()) * std::pow(x, 6.0))
                           : draw == pool_draw::runs ? (i / 37) * 7919
                                                     : static_cast<std::size_t>(static_cast<double>(pool.size()) * x);
    keys[i] = pool[at % pool.size()];
  }
  return keys;
}

template <class K, class C>
void check_count_duplicates_any(calm::strategy s, pool_draw draw, index_t n, std::size_t distinct, index_t max_unique = 0) {
  auto g = rng(4242 + static_cast<int>(draw) * 13 + n + static_cast<index_t>(distinct) * 5 + static_cast<int>(s) * 3 + sizeof(K));
  auto keys = pool_keys<K>(static_cast<std::size_t>(n), distinct, draw, g);
  std::map<K, C> ref;
  for (K k : keys) ref[k] += 1;
  index_t const room = std::max<index_t>(1, n);
  buffer<K> dk(keys), du(static_cast<std::size_t>(room));
  buffer<C> dc(static_cast<std::size_t>(room));
  buffer<index_t> dn(std::vector<index_t>{-5});
  du.fill_bytes(0x5a);
  dc.fill_bytes(0x5a);
  calm::count_options opt;
  opt.max_unique = max_unique;
  INFO("count_duplicates (any keys) " << calm::to_string(s) << ", " << to_string(draw) << ", n " << n << ", distinct " << distinct << ", key bytes "
                                      << sizeof(K) << ", max_unique " << max_unique);
  with_one_of<calm::strategy::automatic, calm::strategy::naive, calm::strategy::peer_reduce, calm::strategy::privatize,
              calm::strategy::privatize_peer_reduce>(
      s, [&](auto c) { calm::count_duplicates<c()>(static_cast<K const*>(dk.data()), n, du.data(), dc.data(), dn.data(), opt, exec{}); });
  synchronize();
  index_t const got_n = dn.download()[0];
  REQUIRE(got_n == static_cast<index_t>(ref.size()));
  auto u = du.download();
  auto c = dc.download();
  std::vector<std::pair<K, C>> got;
  for (index_t i = 0; i < got_n; ++i) got.emplace_back(u[static_cast<std::size_t>(i)], c[static_cast<std::size_t>(i)]);
  std::sort(got.begin(), got.end());
  std::vector<std::pair<K, C>> const expect(ref.begin(), ref.end());
  REQUIRE(got == expect);
}

}  // namespace calm_test

TEST_CASE("spmv_coo: y += A x against a sequential product, every matrix shape and method", "[workload][spmv]") {
  using namespace calm_test;
  matrix_kind const kind = GENERATE(matrix_kind::stencil2d, matrix_kind::stencil3d, matrix_kind::power_law, matrix_kind::dense_rows,
                                    matrix_kind::uniform, matrix_kind::one_row);
  index_t const size = GENERATE(1, 37, 1000, 30011);
  bool const shuffled = GENERATE(false, true);
  calm::spmv_method const method = GENERATE(calm::spmv_method::automatic, calm::spmv_method::naive, calm::spmv_method::merge_rows);
  CAPTURE(name, warp_size());
  check_spmv<float, std::int32_t>(kind, size, shuffled, method);
  check_spmv<double, std::uint32_t>(kind, size, shuffled, method);
  check_spmv<float, std::int64_t>(kind, size, shuffled, method);
  check_spmv<float, std::int32_t>(kind, size, shuffled, method, 1);  // not aligned to chunks: item by item
  if (method == calm::spmv_method::merge_rows) {
    check_spmv<float, std::int32_t>(kind, size, shuffled, method, 0, true);
    check_spmv<double, std::int64_t>(kind, size, shuffled, method, 1, true);
  }
}

TEST_CASE("spmv_coo: empty matrices, bad indices and bad arguments", "[workload][spmv]") {
  using namespace calm_test;
  std::vector<float> y0{1, 2, 3, 4};
  buffer<int> row(std::vector<int>{0, 1, 1, 3, 2}), col(std::vector<int>{0, 1, 2, 3, 4});
  buffer<float> vals(std::vector<float>{1, 2, 3, 4, 5}), x(std::vector<float>{1, 1, 1, 1, 1}), y(y0);
  int const* r = row.data();
  int const* c = col.data();
  float const* v = vals.data();
  float const* px = x.data();
  // no entries: nothing happens; entries of a matrix without rows are outside it (checked), or skipped
  calm::spmv_coo(r, c, v, 0, px, y.data(), 4, 5, {}, exec{});
  calm::spmv_options unchecked_rows;
  unchecked_rows.check_indices = false;
  calm::spmv_coo(r, c, v, 5, px, y.data(), 0, 5, unchecked_rows, exec{});
  REQUIRE_THROWS_AS(calm::spmv_coo(r, c, v, 5, px, y.data(), 0, 5, {}, exec{}), calm::error);
  synchronize();
  require_equal(y.download(), y0, "y after empty products");
  // column 4 is outside a 4 x 4 matrix; row 3 outside a 3-row one; negative sizes; null pointers
  REQUIRE_THROWS_AS(calm::spmv_coo(r, c, v, 5, px, y.data(), 4, 4, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::spmv_coo(r, c, v, 4, px, y.data(), 3, 5, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::spmv_coo(r, c, v, -1, px, y.data(), 4, 5, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::spmv_coo(r, static_cast<int const*>(nullptr), v, 5, px, y.data(), 4, 5, {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::spmv_coo(r, c, v, 5, static_cast<float const*>(nullptr), y.data(), 4, 5, {}, exec{}), calm::error);
  calm::spmv_options bad;
  bad.method = static_cast<calm::spmv_method>(9);
  REQUIRE_THROWS_AS(calm::spmv_coo(r, c, v, 5, px, y.data(), 4, 5, bad, exec{}), calm::error);
  synchronize();
  require_equal(y.download(), y0, "y after rejected calls");
  // unchecked: the entry outside (column 4 of a 4 x 4 matrix) is skipped
  calm::spmv_options unchecked;
  unchecked.check_indices = false;
  calm::spmv_coo(r, c, v, 5, px, y.data(), 4, 4, unchecked, exec{});
  synchronize();
  require_equal(y.download(), std::vector<float>{2, 7, 3, 8}, "y with the outside entry skipped");
}

TEST_CASE("sum_compacted: m partial sums of equal slices against a sequential sum", "[workload][sum_compacted]") {
  using namespace calm_test;
  index_t const n = GENERATE(0, 1, 31, 1000, 100003);
  index_t const m = GENERATE(1, 3, 32, 1000, 200000);
  calm::compact_method const method = GENERATE(calm::compact_method::automatic, calm::compact_method::naive, calm::compact_method::merge_runs);
  CAPTURE(name, warp_size(), n, m, static_cast<int>(method));
  auto g = rng(99 + n + m * 3 + static_cast<int>(method));
  index_t const per = n == 0 ? 1 : (n + m - 1) / m;
  {  // exact for integers
    auto v = random_values<std::int64_t>(static_cast<std::size_t>(n), g, -1000000, 1000000);
    auto o = random_values<std::int64_t>(static_cast<std::size_t>(m), g, -5, 5);
    std::vector<std::int64_t> expect = o;
    for (index_t i = 0; i < n; ++i) expect[i / per] += v[i];
    buffer<std::int64_t> dv(v), dout(o), dtog(o);
    calm::sum_compacted(static_cast<std::int64_t const*>(dv.data()), n, dout.data(), m, method, exec{});
    if (n > 0) {  // the run merge with the host's W lanes kept together, as on a GPU
      calm::detail::compacted_source<std::int64_t> const src{static_cast<std::int64_t const*>(dv.data()), per, 1.0 / static_cast<double>(per)};
      calm::detail::launch_run_merge<true, 16, false>(calm::plus{}, src, n, dtog.data(), true, exec{});
    } else {
      dtog.upload(expect);
    }
    synchronize();
    require_equal(dout.download(), expect, "int64 partial sums");
    require_equal(dtog.download(), expect, "int64 partial sums, lanes together");
  }
  {  // to a bound for floats
    auto v = random_values<float>(static_cast<std::size_t>(n), g, -1.0f, 1.0f);
    auto o = random_values<float>(static_cast<std::size_t>(m), g, -1.0f, 1.0f);
    std::vector<double> expect(o.begin(), o.end()), abs_sum(static_cast<std::size_t>(m)), bound(static_cast<std::size_t>(m));
    for (index_t i = 0; i < n; ++i) expect[i / per] += v[i], abs_sum[i / per] += std::fabs(v[i]);
    for (index_t j = 0; j < m; ++j) bound[j] = sum_bound<float>(static_cast<std::size_t>(per) + 1, abs_sum[j] + std::fabs(o[j]));
    buffer<float> dv(v), dout(o);
    calm::sum_compacted(static_cast<float const*>(dv.data()), n, dout.data(), m, method, exec{});
    synchronize();
    require_close(dout.download(), expect, bound, "float partial sums");
    if (n > 1) {  // values not aligned to chunks: item by item (the first value left out)
      std::vector<float> v1(v.begin() + 1, v.end());
      index_t const per1 = (n - 1 + m - 1) / m;
      std::vector<double> e1(o.begin(), o.end()), a1(static_cast<std::size_t>(m)), b1(static_cast<std::size_t>(m));
      for (index_t i = 0; i + 1 < n; ++i) e1[i / per1] += v1[i], a1[i / per1] += std::fabs(v1[i]);
      for (index_t j = 0; j < m; ++j) b1[j] = sum_bound<float>(static_cast<std::size_t>(per1) + 1, a1[j] + std::fabs(o[j]));
      buffer<float> dout1(o);
      calm::sum_compacted(static_cast<float const*>(dv.data()) + 1, n - 1, dout1.data(), m, method, exec{});
      synchronize();
      require_close(dout1.download(), e1, b1, "float partial sums, unaligned");
    }
  }
}

TEST_CASE("sum_compacted: bad arguments throw before launching", "[workload][sum_compacted]") {
  using namespace calm_test;
  buffer<float> v(std::vector<float>(10, 1.0f)), out(std::vector<float>{3.0f});
  float const* pv = v.data();
  REQUIRE_THROWS_AS(calm::sum_compacted(pv, 10, out.data(), 0, calm::compact_method::automatic, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::sum_compacted(pv, -1, out.data(), 1, calm::compact_method::automatic, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::sum_compacted(static_cast<float const*>(nullptr), 10, out.data(), 1, calm::compact_method::automatic, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::sum_compacted(pv, 10, static_cast<float*>(nullptr), 1, calm::compact_method::automatic, exec{}), calm::error);
  synchronize();
  require_equal(out.download(), std::vector<float>{3.0f}, "out after rejected calls");
}

TEST_CASE("kmeans_update: centroid sums and counts against a sequential update", "[workload][kmeans]") {
  using namespace calm_test;
  calm::kmeans_method const method = GENERATE(calm::kmeans_method::automatic, calm::kmeans_method::naive, calm::kmeans_method::peer_reduce,
                                              calm::kmeans_method::privatize, calm::kmeans_method::privatize_peer_reduce,
                                              calm::kmeans_method::thread_private);
  keys_kind const kind = GENERATE(keys_kind::uniform_many, keys_kind::runs, keys_kind::hot, keys_kind::one);
  index_t const n = GENERATE(0, 1, 1001, 40003);
  int const d = GENERATE(1, 2, 3, 4, 5, 8);  // 5: thread_private's loop for any width
  index_t const k = GENERATE(1, 16, 1000);
  CAPTURE(name, warp_size());
  check_kmeans<float, std::uint32_t>(method, kind, n, d, k);
  check_kmeans<double, std::int64_t>(method, kind, n, d, k);
}

TEST_CASE("kmeans_update: bad assignments and arguments throw before anything is written", "[workload][kmeans]") {
  using namespace calm_test;
  std::vector<float> s0(8, 1.0f);
  std::vector<std::uint32_t> c0(4, 2u);
  buffer<float> pts(std::vector<float>{1, 2, 3, 4, 5, 6}), sums(s0);
  buffer<std::uint32_t> counts(c0);
  buffer<int> assign(std::vector<int>{0, 4, 1});  // 4 is outside k = 4
  float const* p = pts.data();
  int const* a = assign.data();
  REQUIRE_THROWS_AS(calm::kmeans_update(p, a, 3, 2, 4, sums.data(), counts.data(), {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::kmeans_update(p, a, 3, 0, 4, sums.data(), counts.data(), {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::kmeans_update(p, a, -3, 2, 4, sums.data(), counts.data(), {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::kmeans_update(p, static_cast<int const*>(nullptr), 3, 2, 4, sums.data(), counts.data(), {}, exec{}), calm::error);
  calm::kmeans_options forced;
  forced.method = calm::kmeans_method::privatize;
  index_t const huge = static_cast<index_t>(exec{}.block_local_bytes());  // vote spaces of this many entries cannot fit
  REQUIRE_THROWS_AS(calm::kmeans_update(p, a, 3, 2, huge, sums.data(), counts.data(), forced, exec{}), calm::error);
  synchronize();
  require_equal(sums.download(), s0, "sums after rejected calls");
  require_equal(counts.download(), c0, "counts after rejected calls");
  calm::kmeans_options unchecked;
  unchecked.check_indices = false;  // the point assigned to 4 is skipped
  calm::kmeans_update(p, a, 3, 2, 4, sums.data(), counts.data(), unchecked, exec{});
  synchronize();
  require_equal(sums.download(), std::vector<float>{2, 3, 6, 7, 1, 1, 1, 1}, "sums with the outside point skipped");
  require_equal(counts.download(), std::vector<std::uint32_t>{3, 3, 2, 2}, "counts with the outside point skipped");
}

TEST_CASE("count_duplicates: distinct keys and counts against a sequential count", "[workload][count_duplicates]") {
  using namespace calm_test;
  calm::strategy const s = GENERATE(calm::strategy::automatic, calm::strategy::naive, calm::strategy::peer_reduce, calm::strategy::privatize);
  keys_kind const kind = GENERATE(from_range(all_key_kinds()));
  int const n_i = GENERATE(0, 1, 2, 3), bound_i = GENERATE(0, 1, 2, 3);
  index_t const n = std::array<index_t, 4>{0, 1, 1001, 40003}[n_i], bound = std::array<index_t, 4>{1, 7, 4099, 1 << 20}[bound_i];
  CAPTURE(name, warp_size(), n, bound);
  if (!runs_in_this_build(static_cast<std::size_t>(s) + static_cast<std::size_t>(kind) + static_cast<std::size_t>(n_i + bound_i), 2)) return;
  if (s == calm::strategy::privatize && bound > calm::privatize_capacity<std::uint32_t>(exec{})) return;
  check_count_duplicates<std::uint32_t, std::uint32_t>(s, kind, n, bound);
  check_count_duplicates<std::int32_t, std::uint64_t>(s, kind, n, bound);
}

TEST_CASE("count_duplicates: keys outside the bound and bad arguments throw before anything is written", "[workload][count_duplicates]") {
  using namespace calm_test;
  buffer<std::uint32_t> keys(std::vector<std::uint32_t>{1, 5, 1, 9}), unique(std::vector<std::uint32_t>(4, 7u)), counts(std::vector<std::uint32_t>(4, 7u));
  buffer<index_t> num(std::vector<index_t>{-1});
  std::uint32_t const* k = keys.data();
  REQUIRE_THROWS_AS(calm::count_duplicates(k, 4, 9, unique.data(), counts.data(), num.data(), {}, exec{}), calm::error);  // 9 >= 9
  REQUIRE_THROWS_AS(calm::count_duplicates(k, -1, 10, unique.data(), counts.data(), num.data(), {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::count_duplicates(k, 4, 10, unique.data(), counts.data(), static_cast<index_t*>(nullptr), {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::count_duplicates(k, 4, 10, static_cast<std::uint32_t*>(nullptr), counts.data(), num.data(), {}, exec{}), calm::error);
  synchronize();
  require_equal(num.download(), std::vector<index_t>{-1}, "num_unique after rejected calls");
  require_equal(unique.download(), std::vector<std::uint32_t>(4, 7u), "unique after rejected calls");
  calm::count_duplicates(k, 4, 10, unique.data(), counts.data(), num.data(), {}, exec{});
  synchronize();
  require_equal(num.download(), std::vector<index_t>{3}, "num_unique");
  auto u = unique.download();
  auto c = counts.download();
  require_equal(std::vector<std::uint32_t>(u.begin(), u.begin() + 3), std::vector<std::uint32_t>{1, 5, 9}, "unique");
  require_equal(std::vector<std::uint32_t>(c.begin(), c.begin() + 3), std::vector<std::uint32_t>{2, 1, 1}, "counts");
}

TEST_CASE("count_duplicates (keys of any value): distinct keys and counts against a sequential count", "[workload][count_duplicates]") {
  using namespace calm_test;
  calm::strategy const s = GENERATE(calm::strategy::automatic, calm::strategy::naive, calm::strategy::peer_reduce);
  pool_draw const draw = GENERATE(pool_draw::uniform, pool_draw::skewed, pool_draw::runs);
  index_t const n = GENERATE(0, 1, 999, 40003);
  std::size_t const distinct = GENERATE(std::size_t(1), std::size_t(5), std::size_t(300), std::size_t(50000));
  CAPTURE(name, warp_size());
  check_count_duplicates_any<std::uint32_t, std::uint32_t>(s, draw, n, distinct);
  check_count_duplicates_any<std::int64_t, std::uint32_t>(s, draw, n, distinct);
  // tables sized for 3 or 100 distinct keys at first: too small ones are noticed and replaced
  check_count_duplicates_any<std::uint64_t, std::uint32_t>(s, draw, n, distinct, 3);
  check_count_duplicates_any<std::int32_t, std::uint32_t>(s, draw, n, distinct, 100);
  if (s == calm::strategy::automatic) {
    check_count_duplicates_any<std::int32_t, std::uint64_t>(s, draw, n, distinct);
    check_count_duplicates_any<std::uint64_t, std::int32_t>(s, draw, n, distinct);
    check_count_duplicates_any<std::int16_t, std::uint32_t>(s, draw, n, distinct);
    check_count_duplicates_any<std::uint8_t, std::uint32_t>(s, draw, n, distinct);
  }
}

TEST_CASE("count_duplicates (keys of any value): a small table through privatization, and bad arguments", "[workload][count_duplicates]") {
  using namespace calm_test;
  check_count_duplicates_any<std::uint8_t, std::uint32_t>(calm::strategy::privatize, pool_draw::skewed, 20011, 256);
  check_count_duplicates_any<std::int32_t, std::uint32_t>(calm::strategy::privatize, pool_draw::uniform, 100, 40);
  // a count table too large for a block: the forced privatize counts with peer_reduce instead
  check_count_duplicates_any<std::int32_t, std::uint32_t>(calm::strategy::privatize, pool_draw::uniform, 200003, 5000);
  check_count_duplicates_any<std::int64_t, std::uint32_t>(calm::strategy::privatize_peer_reduce, pool_draw::skewed, 200003, 50000);
  std::vector<std::int64_t> const hk = {70000, -2, 70000, 70000, 5, -2};
  buffer<std::int64_t> keys(hk), unique(std::vector<std::int64_t>(6, 7));
  buffer<std::uint32_t> counts(std::vector<std::uint32_t>(6, 7u));
  buffer<index_t> num(std::vector<index_t>{-1});
  std::int64_t const* k = keys.data();
  REQUIRE_THROWS_AS(calm::count_duplicates(k, -1, unique.data(), counts.data(), num.data(), {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::count_duplicates(static_cast<std::int64_t const*>(nullptr), 6, unique.data(), counts.data(), num.data(), {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::count_duplicates(k, 6, unique.data(), counts.data(), static_cast<index_t*>(nullptr), {}, exec{}), calm::error);
  REQUIRE_THROWS_AS(calm::count_duplicates(k, 6, unique.data(), static_cast<std::uint32_t*>(nullptr), num.data(), {}, exec{}), calm::error);
  calm::count_options negative;
  negative.max_unique = -1;
  REQUIRE_THROWS_AS(calm::count_duplicates(k, 6, unique.data(), counts.data(), num.data(), negative, exec{}), calm::error);
  synchronize();
  require_equal(num.download(), std::vector<index_t>{-1}, "num_unique after rejected calls");
  require_equal(unique.download(), std::vector<std::int64_t>(6, 7), "unique after rejected calls");
  require_equal(counts.download(), std::vector<std::uint32_t>(6, 7u), "counts after rejected calls");
  calm::count_duplicates(k, 6, unique.data(), counts.data(), num.data(), {}, exec{});
  synchronize();
  REQUIRE(num.download()[0] == 3);
  auto u = unique.download();
  auto c = counts.download();
  std::map<std::int64_t, std::uint32_t> got;
  for (int i = 0; i < 3; ++i) got[u[static_cast<std::size_t>(i)]] = c[static_cast<std::size_t>(i)];
  REQUIRE(got == std::map<std::int64_t, std::uint32_t>{{-2, 2}, {5, 1}, {70000, 3}});
  calm::count_duplicates(k, 0, static_cast<std::int64_t*>(nullptr), static_cast<std::uint32_t*>(nullptr), num.data(), {}, exec{});
  synchronize();
  REQUIRE(num.download()[0] == 0);
}

TEST_CASE("global_max and global_min against a sequential fold", "[workload][global_max]") {
  using namespace calm_test;
  index_t const n = GENERATE(0, 1, 33, 1001, 300007);
  auto g = rng(5 + n);
  auto v = random_values<float>(static_cast<std::size_t>(n), g, -1e6f, 1e6f);
  auto iv = random_values<std::int64_t>(static_cast<std::size_t>(n), g, -(1ll << 40), 1ll << 40);
  buffer<float> dv(v), mx(std::vector<float>{-1e30f}), mn(std::vector<float>{1e30f});
  buffer<std::int64_t> div(iv), imx(std::vector<std::int64_t>{0});
  calm::global_max(static_cast<float const*>(dv.data()), n, mx.data(), exec{});
  calm::global_min(static_cast<float const*>(dv.data()), n, mn.data(), exec{});
  calm::global_max(static_cast<std::int64_t const*>(div.data()), n, imx.data(), exec{});
  synchronize();
  float emax = -1e30f, emin = 1e30f;
  std::int64_t eimax = 0;
  for (index_t i = 0; i < n; ++i) emax = std::max(emax, v[i]), emin = std::min(emin, v[i]), eimax = std::max(eimax, iv[i]);
  require_equal(mx.download(), std::vector<float>{emax}, "max");
  require_equal(mn.download(), std::vector<float>{emin}, "min");
  require_equal(imx.download(), std::vector<std::int64_t>{eimax}, "int64 max");
  REQUIRE_THROWS_AS(calm::global_max(static_cast<float const*>(nullptr), 5, mx.data(), exec{}), calm::error);
}
