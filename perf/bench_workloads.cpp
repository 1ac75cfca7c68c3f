// SPDX-License-Identifier: Apache-2.0
// The workload routines beside their strongest peers in the same process: spmv_coo beside cuSPARSE's COO
// and CSR SpMV, kmeans_update beside a sort + reduce-by-key (CUB), sum_compacted beside cub::DeviceReduce
// and DeviceSegmentedReduce, count_duplicates beside a CUB radix sort + run-length encode; on the host
// beside OpenMP loops. Names: <workload>/<input>/<method>; every calm case checks its result first.
#include "bench_common.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#if defined(CALM_BACKEND_CUDA)
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda/std/functional>
#include <cusparse.h>
#endif

namespace calm_bench {
namespace {

template <class T>
using dbuf = backend::device_buffer<T>;

template <class F, class... A>
void add(std::string const& name, F f, A... a) {
  benchmark::RegisterBenchmark(name.c_str(), f, a...)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.05);
}

bool close(double got, double want, double rel) { return std::fabs(got - want) <= rel * (std::fabs(want) + 1.0); }

#if defined(CALM_BACKEND_CUDA)
void check_cuda(cudaError_t e, char const* what) {
  if (e != cudaSuccess) throw calm::error(calm::errc::backend_failure, std::string(what) + ": " + cudaGetErrorString(e));
}
void check_sparse(cusparseStatus_t s, char const* what) {
  if (s != CUSPARSE_STATUS_SUCCESS) throw calm::error(calm::errc::backend_failure, std::string(what) + ": cuSPARSE status " + std::to_string(s));
}
#endif

// ---------------------------------------------------------------- spmv_coo

struct matrix {
  index_t rows = 0, cols = 0;
  std::vector<int> row, col;  // sorted by row
  std::vector<float> val;
};

/// The generated matrix set (000 §4 used Matrix Market; none is at hand): rows = keys_n() / 16.
matrix make_matrix(std::string const& kind) {
  matrix m;
  std::uint64_t s = 12345;
  index_t const target = static_cast<index_t>(keys_n() / 16);
  auto add_entry = [&](index_t r, index_t c) { m.row.push_back(static_cast<int>(r)), m.col.push_back(static_cast<int>(c)); };
  auto unit = [&] { return static_cast<double>(splitmix64(s) >> 11) * 0x1.0p-53; };
  if (kind == "stencil2d") {  // 5-point Laplacian on a square grid
    index_t const n = static_cast<index_t>(std::sqrt(static_cast<double>(target)));
    m.rows = m.cols = n * n;
    for (index_t y = 0; y < n; ++y)
      for (index_t x = 0; x < n; ++x) {
        index_t const r = y * n + x;
        if (y > 0) add_entry(r, r - n);
        if (x > 0) add_entry(r, r - 1);
        add_entry(r, r);
        if (x + 1 < n) add_entry(r, r + 1);
        if (y + 1 < n) add_entry(r, r + n);
      }
  } else if (kind == "stencil3d27") {  // 27-point stencil on a cube (FEM-like: ~27 entries per row)
    index_t const n = static_cast<index_t>(std::cbrt(static_cast<double>(target) / 2));
    m.rows = m.cols = n * n * n;
    for (index_t z = 0; z < n; ++z)
      for (index_t y = 0; y < n; ++y)
        for (index_t x = 0; x < n; ++x)
          for (int dz = -1; dz <= 1; ++dz)
            for (int dy = -1; dy <= 1; ++dy)
              for (int dx = -1; dx <= 1; ++dx) {
                index_t const X = x + dx, Y = y + dy, Z = z + dz;
                if (X >= 0 && X < n && Y >= 0 && Y < n && Z >= 0 && Z < n) add_entry((z * n + y) * n + x, (Z * n + Y) * n + X);
              }
  } else {
    m.rows = m.cols = target;
    for (index_t r = 0; r < m.rows; ++r) {
      index_t len = 0;
      if (kind == "power_law") len = std::min<index_t>(1 << 16, static_cast<index_t>(1.0 / std::pow(1.0 - unit(), 1.0 / 1.2)));
      else if (kind == "dense_rows") len = (r % 4096 == 7) ? 16384 : 4;
      else len = 1 + static_cast<index_t>(unit() * 7);  // uniform: 1 to 7 random entries per row
      std::vector<index_t> cs(static_cast<std::size_t>(len));
      for (auto& c : cs) c = static_cast<index_t>(splitmix64(s) % static_cast<std::uint64_t>(m.cols));
      std::sort(cs.begin(), cs.end());
      for (index_t c : cs) add_entry(r, c);
    }
  }
  m.val.resize(m.row.size());
  for (auto& v : m.val) v = static_cast<float>(unit() * 2 - 1);
  return m;
}

struct device_matrix {
  matrix host;
  dbuf<int> row, col, offsets;
  dbuf<float> val, x;
  std::vector<float> x_host;
  index_t nnz() const { return static_cast<index_t>(host.row.size()); }
  double bytes() const { return static_cast<double>(nnz()) * 12.0 + static_cast<double>(host.rows) * 8.0 + static_cast<double>(host.cols) * 4.0; }
};

device_matrix const& get_matrix(std::string const& kind) {
  static std::map<std::string, std::unique_ptr<device_matrix>> cache;
  auto& p = cache[kind];
  if (!p) {
    p = std::make_unique<device_matrix>();
    p->host = make_matrix(kind);
    matrix const& m = p->host;
    std::vector<int> off(static_cast<std::size_t>(m.rows) + 1, 0);
    for (int r : m.row) ++off[static_cast<std::size_t>(r) + 1];
    std::partial_sum(off.begin(), off.end(), off.begin());
    p->x_host.resize(static_cast<std::size_t>(m.cols));
    for (std::size_t i = 0; i < p->x_host.size(); ++i) p->x_host[i] = 1.0f + static_cast<float>(i % 5) * 0.125f;
    p->row = dbuf<int>(m.row), p->col = dbuf<int>(m.col), p->offsets = dbuf<int>(off);
    p->val = dbuf<float>(m.val), p->x = dbuf<float>(p->x_host);
  }
  return *p;
}

/// y = A x in double on the host (first) and the sums of |terms| per row (second), the check of every case.
std::pair<std::vector<double>, std::vector<double>> spmv_reference(device_matrix const& dm) {
  std::vector<double> y(static_cast<std::size_t>(dm.host.rows), 0.0), a(y.size(), 0.0);
  for (std::size_t e = 0; e < dm.host.row.size(); ++e) {
    double const p = static_cast<double>(dm.host.val[e]) * dm.x_host[dm.host.col[e]];
    y[dm.host.row[e]] += p, a[dm.host.row[e]] += std::fabs(p);
  }
  return {y, a};
}

template <class Run>
void time_spmv(benchmark::State& state, device_matrix const& dm, Run run) {
  dbuf<float> y(static_cast<std::size_t>(dm.host.rows));
  y.fill_bytes(0);
  run(y.data());
  backend::synchronize();
  auto const got = y.download();
  auto const [want, abs_sum] = spmv_reference(dm);
  for (std::size_t r = 0; r < want.size(); ++r)
    if (!(std::fabs(got[r] - want[r]) <= 1e-5 * (abs_sum[r] + 1.0))) {
      state.SkipWithError(("wrong y at row " + std::to_string(r)).c_str());
      return;
    }
  for (auto _ : state) state.SetIterationTime(time_device([&] { run(y.data()); }));
  report_bytes(state, dm.bytes(), static_cast<double>(dm.nnz()));
  state.counters["nnz"] = static_cast<double>(dm.nnz());
}

void spmv_calm(benchmark::State& state, std::string kind, calm::spmv_method method, bool checked) {
  device_matrix const& dm = get_matrix(kind);
  calm::spmv_options opt;
  opt.method = method;
  opt.check_indices = checked;
  time_spmv(state, dm, [&](float* y) {
    calm::spmv_coo(dm.row.data(), dm.col.data(), dm.val.data(), dm.nnz(), dm.x.data(), y, dm.host.rows, dm.host.cols, opt);
  });
}

#if defined(CALM_BACKEND_CUDA) || defined(CALM_BACKEND_OPENMP)
// SpMV as the products, then a bulk scatter of them by row: the form 000 §2 applies scan_reduce and
// set_scatter to (Fig. 5), beside calm::spmv_coo's run merge. The set_scatter layout (warp
// granularity: whole warps of consecutive entries dealt in rounds of distinct rows) is computed once
// per matrix on the host, as 000 does, and not timed.
#if defined(CALM_BACKEND_CUDA)
__global__ void coo_products(int const* col, float const* val, float const* x, float* prod, index_t nnz) {
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; e < nnz; e += static_cast<index_t>(gridDim.x) * blockDim.x)
    prod[e] = val[e] * x[col[e]];
}
void products(device_matrix const& dm, float* prod) {
  coo_products<<<1024, 256>>>(dm.col.data(), dm.val.data(), dm.x.data(), prod, dm.nnz());
  check_cuda(cudaGetLastError(), "coo_products");
}
#else
void products(device_matrix const& dm, float* prod) {
  int const* col = dm.col.data();
  float const *val = dm.val.data(), *x = dm.x.data();
  index_t const nnz = dm.nnz();
#pragma omp parallel for schedule(static)
  for (index_t e = 0; e < nnz; ++e) prod[e] = val[e] * x[col[e]];
}
#endif

void spmv_scatter(benchmark::State& state, std::string kind, calm::strategy s, bool spread) {
  device_matrix const& dm = get_matrix(kind);
  dbuf<float> prod(static_cast<std::size_t>(dm.nnz()));
  dbuf<index_t> order;
  calm::scatter_options opt;
  if (spread) {
    order = dbuf<index_t>(calm::set_scatter(dm.host.row.data(), dm.nnz(), calm::scatter_granularity::warp, calm::default_exec::warp_type::size));
    opt.order = order.data();
  }
  time_spmv(state, dm, [&](float* y) {
    products(dm, prod.data());
    calm::for_strategy(s, [&](auto c) { calm::scatter<c()>(calm::plus{}, dm.row.data(), static_cast<float const*>(prod.data()), dm.nnz(), y, dm.host.rows, opt); });
  });
}
#endif

#if defined(CALM_BACKEND_CUDA)
void spmv_cusparse(benchmark::State& state, std::string kind, bool csr) {
  device_matrix const& dm = get_matrix(kind);
  dbuf<float> y(static_cast<std::size_t>(dm.host.rows));
  cusparseHandle_t h;
  check_sparse(cusparseCreate(&h), "cusparseCreate");
  cusparseSpMatDescr_t a;
  auto* row = const_cast<int*>(dm.row.data());
  auto* col = const_cast<int*>(dm.col.data());
  auto* val = const_cast<float*>(dm.val.data());
  if (csr)
    check_sparse(cusparseCreateCsr(&a, dm.host.rows, dm.host.cols, dm.nnz(), const_cast<int*>(dm.offsets.data()), col, val, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
                 "cusparseCreateCsr");
  else
    check_sparse(cusparseCreateCoo(&a, dm.host.rows, dm.host.cols, dm.nnz(), row, col, val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
                 "cusparseCreateCoo");
  cusparseDnVecDescr_t x, yv;
  check_sparse(cusparseCreateDnVec(&x, dm.host.cols, const_cast<float*>(dm.x.data()), CUDA_R_32F), "cusparseCreateDnVec");
  check_sparse(cusparseCreateDnVec(&yv, dm.host.rows, y.data(), CUDA_R_32F), "cusparseCreateDnVec");
  float const one = 1.0f;
  cusparseSpMVAlg_t const alg = csr ? CUSPARSE_SPMV_CSR_ALG1 : CUSPARSE_SPMV_COO_ALG1;
  std::size_t bytes = 0;
  check_sparse(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, x, &one, yv, CUDA_R_32F, alg, &bytes), "cusparseSpMV_bufferSize");
  dbuf<unsigned char> work(std::max<std::size_t>(bytes, 1));
  time_spmv(state, dm, [&](float* yp) {
    check_sparse(cusparseDnVecSetValues(yv, yp), "cusparseDnVecSetValues");
    check_sparse(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, x, &one, yv, CUDA_R_32F, alg, work.data()), "cusparseSpMV");
  });
  cusparseDestroyDnVec(x);
  cusparseDestroyDnVec(yv);
  cusparseDestroySpMat(a);
  cusparseDestroy(h);
}
#endif

#if defined(CALM_BACKEND_OPENMP)
void spmv_omp_csr(benchmark::State& state, std::string kind) {  // the host's strongest simple peer: a row-parallel CSR loop
  device_matrix const& dm = get_matrix(kind);
  int const* off = dm.offsets.data();
  int const* col = dm.col.data();
  float const* val = dm.val.data();
  float const* x = dm.x.data();
  index_t const rows = dm.host.rows;
  time_spmv(state, dm, [&](float* y) {
#pragma omp parallel for schedule(dynamic, 1024)
    for (index_t r = 0; r < rows; ++r) {
      float s = 0;
      for (int e = off[r]; e < off[r + 1]; ++e) s += val[e] * x[col[e]];
      y[r] += s;
    }
  });
}

void spmv_omp_coo(benchmark::State& state, std::string kind) {  // the same COO arrays as calm: an OpenMP array reduction over y
  device_matrix const& dm = get_matrix(kind);
  int const* row = dm.row.data();
  int const* col = dm.col.data();
  float const* val = dm.val.data();
  float const* x = dm.x.data();
  index_t const rows = dm.host.rows, nnz = dm.nnz();
  time_spmv(state, dm, [&](float* y) {
#pragma omp parallel for reduction(+ : y[:rows]) schedule(static)
    for (index_t e = 0; e < nnz; ++e) y[row[e]] += val[e] * x[col[e]];
  });
}
#endif

// ---------------------------------------------------------------- kmeans_update

struct points_set {
  index_t n = 0;
  int d = 0;
  index_t k = 0;
  dbuf<float> points;
  dbuf<int> assign;
  std::vector<double> sums;
  std::vector<std::uint32_t> counts;
};

/// keys_n() / 4 points of d components, assigned uniformly to k clusters.
points_set const& get_points(int d, index_t k) {
  static std::map<std::pair<int, index_t>, std::unique_ptr<points_set>> cache;
  auto& p = cache[{d, k}];
  if (!p) {
    p = std::make_unique<points_set>();
    p->n = static_cast<index_t>(keys_n() / 4), p->d = d, p->k = k;
    std::uint64_t s = 777 + static_cast<std::uint64_t>(d * 1000 + k);
    std::vector<float> pts(static_cast<std::size_t>(p->n) * d);
    std::vector<int> a(static_cast<std::size_t>(p->n));
    p->sums.assign(static_cast<std::size_t>(k) * d, 0.0);
    p->counts.assign(static_cast<std::size_t>(k), 0);
    for (index_t i = 0; i < p->n; ++i) {
      a[i] = static_cast<int>(splitmix64(s) % static_cast<std::uint64_t>(k));
      ++p->counts[a[i]];
      for (int j = 0; j < d; ++j) {
        pts[i * d + j] = static_cast<float>((splitmix64(s) >> 40) % 1000) * 0.01f;
        p->sums[a[i] * d + j] += pts[i * d + j];
      }
    }
    p->points = dbuf<float>(pts), p->assign = dbuf<int>(a);
  }
  return *p;
}

double kmeans_bytes(points_set const& ps) { return static_cast<double>(ps.n) * (4.0 * ps.d + 4.0); }

bool kmeans_ok(points_set const& ps, std::vector<float> const& sums, std::vector<std::uint32_t> const& counts) {
  if (counts != ps.counts) return false;
  for (std::size_t e = 0; e < sums.size(); ++e)
    if (!close(sums[e], ps.sums[e], 1e-3)) return false;
  return true;
}

void kmeans_calm(benchmark::State& state, int d, index_t k, calm::kmeans_method method) {
  points_set const& ps = get_points(d, k);
  dbuf<float> sums(static_cast<std::size_t>(k) * d);
  dbuf<std::uint32_t> counts(static_cast<std::size_t>(k));
  calm::kmeans_options opt;
  opt.method = method;
  opt.check_indices = false;
  auto run = [&] {
    sums.fill_bytes(0);
    counts.fill_bytes(0);
    calm::kmeans_update(ps.points.data(), ps.assign.data(), ps.n, d, k, sums.data(), counts.data(), opt);
  };
  run();
  backend::synchronize();
  if (!kmeans_ok(ps, sums.download(), counts.download())) return state.SkipWithError("wrong sums or counts");
  for (auto _ : state) state.SetIterationTime(time_device(run));
  report_bytes(state, kmeans_bytes(ps), static_cast<double>(ps.n));
}

#if defined(CALM_BACKEND_CUDA)
__global__ void gather_component(float const* points, int const* order, index_t n, int d, int j, float* out) {
  index_t const i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = points[static_cast<index_t>(order[i]) * d + j];
}
__global__ void iota_kernel(int* out, index_t n) {
  index_t const i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<int>(i);
}

/// The sort-based peer: radix-sort the assignments with the point indices, run-length encode the
/// sorted assignments (counts), and reduce each gathered component by key (sums).
void kmeans_cub(benchmark::State& state, int d, index_t k) {
  points_set const& ps = get_points(d, k);
  index_t const n = ps.n;
  dbuf<int> idx(static_cast<std::size_t>(n)), keys_out(static_cast<std::size_t>(n)), idx_out(static_cast<std::size_t>(n)), unique(static_cast<std::size_t>(k));
  dbuf<std::uint32_t> counts(static_cast<std::size_t>(k));
  dbuf<float> comp(static_cast<std::size_t>(n)), agg(static_cast<std::size_t>(k) * d);
  dbuf<int> runs(1);
  int const bits = std::max(1, static_cast<int>(std::ceil(std::log2(static_cast<double>(k)))));
  std::size_t b1 = 0, b2 = 0, b3 = 0;
  check_cuda(cub::DeviceRadixSort::SortPairs(nullptr, b1, ps.assign.data(), keys_out.data(), idx.data(), idx_out.data(), static_cast<int>(n), 0, bits), "SortPairs");
  check_cuda(cub::DeviceRunLengthEncode::Encode(nullptr, b2, keys_out.data(), unique.data(), counts.data(), runs.data(), static_cast<int>(n)), "Encode");
  check_cuda(cub::DeviceReduce::ReduceByKey(nullptr, b3, keys_out.data(), unique.data(), comp.data(), agg.data(), runs.data(), cuda::std::plus<>{},
                                            static_cast<int>(n)),
             "ReduceByKey");
  dbuf<unsigned char> temp(std::max({b1, b2, b3, std::size_t(1)}));
  std::vector<dbuf<float>> per(static_cast<std::size_t>(d));
  for (auto& p : per) p = dbuf<float>(static_cast<std::size_t>(k));
  unsigned const blocks = static_cast<unsigned>((n + 255) / 256);
  auto run = [&] {
    std::size_t t = temp.size();
    iota_kernel<<<blocks, 256>>>(idx.data(), n);
    check_cuda(cub::DeviceRadixSort::SortPairs(temp.data(), t, ps.assign.data(), keys_out.data(), idx.data(), idx_out.data(), static_cast<int>(n), 0, bits),
               "SortPairs");
    t = temp.size();
    check_cuda(cub::DeviceRunLengthEncode::Encode(temp.data(), t, keys_out.data(), unique.data(), counts.data(), runs.data(), static_cast<int>(n)), "Encode");
    for (int j = 0; j < d; ++j) {
      gather_component<<<blocks, 256>>>(ps.points.data(), idx_out.data(), n, d, j, comp.data());
      t = temp.size();
      check_cuda(cub::DeviceReduce::ReduceByKey(temp.data(), t, keys_out.data(), unique.data(), comp.data(), per[j].data(), runs.data(),
                                                cuda::std::plus<>{}, static_cast<int>(n)),
                 "ReduceByKey");
    }
    check_cuda(cudaGetLastError(), "kmeans_cub kernels");
  };
  run();
  backend::synchronize();
  // every cluster has points (uniform assignment, n >> k): unique is 0 .. k-1 in order
  std::vector<float> sums(static_cast<std::size_t>(k) * d);
  for (int j = 0; j < d; ++j) {
    auto const pj = per[j].download();
    for (index_t c = 0; c < k; ++c) sums[c * d + j] = pj[c];
  }
  if (!kmeans_ok(ps, sums, counts.download())) return state.SkipWithError("cub: wrong sums or counts");
  for (auto _ : state) state.SetIterationTime(time_device(run));
  report_bytes(state, kmeans_bytes(ps), static_cast<double>(ps.n));
}
#endif

#if defined(CALM_BACKEND_OPENMP)
void kmeans_omp(benchmark::State& state, int d, index_t k) {  // OpenMP array reductions over the sums and counts
  points_set const& ps = get_points(d, k);
  std::vector<float> sums(static_cast<std::size_t>(k) * d);
  std::vector<std::uint32_t> counts(static_cast<std::size_t>(k));
  float const* p = ps.points.data();
  int const* a = ps.assign.data();
  index_t const n = ps.n;
  float* s = sums.data();
  std::uint32_t* c = counts.data();
  std::size_t const sk = sums.size();
  auto run = [&] {
    std::fill(sums.begin(), sums.end(), 0.0f);
    std::fill(counts.begin(), counts.end(), 0u);
#pragma omp parallel for reduction(+ : s[:sk], c[:k]) schedule(static)
    for (index_t i = 0; i < n; ++i) {
      ++c[a[i]];
      for (int j = 0; j < d; ++j) s[a[i] * d + j] += p[i * d + j];
    }
  };
  run();
  if (!kmeans_ok(ps, sums, counts)) return state.SkipWithError("omp: wrong sums or counts");
  for (auto _ : state) state.SetIterationTime(time_device(run));
  report_bytes(state, kmeans_bytes(ps), static_cast<double>(ps.n));
}
#endif

// ---------------------------------------------------------------- sum_compacted

dbuf<float> const& summands() {
  static dbuf<float> v = [] {
    std::vector<float> h(keys_n());
    std::uint64_t s = 99;
    for (auto& x : h) x = static_cast<float>((splitmix64(s) >> 40) % 1000) * 0.001f;
    return dbuf<float>(h);
  }();
  return v;
}

std::vector<double> compacted_reference(index_t m) {
  auto const h = summands().download();
  index_t const n = static_cast<index_t>(h.size()), per = (n + m - 1) / m;
  std::vector<double> out(static_cast<std::size_t>(m), 0.0);
  for (index_t i = 0; i < n; ++i) out[i / per] += h[i];
  return out;
}

template <class Run>
void time_compacted(benchmark::State& state, index_t m, Run run) {
  dbuf<float> out(static_cast<std::size_t>(m));
  auto once = [&] {
    out.fill_bytes(0);
    run(out.data());
  };
  once();
  backend::synchronize();
  auto const got = out.download();
  auto const want = compacted_reference(m);
  for (std::size_t j = 0; j < want.size(); ++j)
    if (!close(got[j], want[j], 1e-3)) return state.SkipWithError(("wrong sum " + std::to_string(j)).c_str());
  for (auto _ : state) state.SetIterationTime(time_device(once));
  report_bytes(state, static_cast<double>(summands().size()) * 4.0, static_cast<double>(summands().size()));
}

void compacted_calm(benchmark::State& state, index_t m, calm::compact_method method) {
  time_compacted(state, m, [&](float* out) { calm::sum_compacted(summands().data(), static_cast<index_t>(summands().size()), out, m, method); });
}

#if defined(CALM_BACKEND_CUDA)
void compacted_cub(benchmark::State& state, index_t m) {
  index_t const n = static_cast<index_t>(summands().size()), per = (n + m - 1) / m;
  std::vector<int> off(static_cast<std::size_t>(m) + 1);
  for (index_t j = 0; j <= m; ++j) off[j] = static_cast<int>(std::min(n, j * per));
  dbuf<int> doff(off);
  float const* v = summands().data();
  std::size_t bytes = 0;
  auto call = [&](void* temp, float* out) {
    if (m == 1) check_cuda(cub::DeviceReduce::Sum(temp, bytes, v, out, static_cast<int>(n)), "DeviceReduce::Sum");
    else check_cuda(cub::DeviceSegmentedReduce::Sum(temp, bytes, v, out, static_cast<int>(m), doff.data(), doff.data() + 1), "DeviceSegmentedReduce::Sum");
  };
  call(nullptr, nullptr);
  dbuf<unsigned char> temp(std::max<std::size_t>(bytes, 1));
  // CUB writes the sums (it does not add to them): the zeroing in time_compacted is the same for both
  time_compacted(state, m, [&](float* out) { call(temp.data(), out); });
}
#endif

#if defined(CALM_BACKEND_OPENMP)
void compacted_omp(benchmark::State& state, index_t m) {
  index_t const n = static_cast<index_t>(summands().size()), per = (n + m - 1) / m;
  float const* v = summands().data();
  time_compacted(state, m, [&](float* out) {
    if (m == 1) {
      float s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
      for (index_t i = 0; i < n; ++i) s += v[i];
      out[0] += s;
    } else {
#pragma omp parallel for schedule(static)
      for (index_t j = 0; j < m; ++j) {
        float s = 0;
        for (index_t i = j * per; i < std::min(n, (j + 1) * per); ++i) s += v[i];
        out[j] += s;
      }
    }
  });
}
#endif

// ---------------------------------------------------------------- count_duplicates

template <class Run>
void time_count(benchmark::State& state, std::uint32_t bound, dist ds, Run run) {
  auto const& keys = device_keys(bound, ds);
  index_t const n = static_cast<index_t>(keys.size()), room = std::min<index_t>(n, bound);
  dbuf<std::uint32_t> unique(static_cast<std::size_t>(room)), counts(static_cast<std::size_t>(room));
  dbuf<index_t> num(1);
  run(keys.data(), n, unique.data(), counts.data(), num.data());
  backend::synchronize();
  std::vector<std::uint32_t> const hk = keys.download();
  std::vector<std::uint32_t> ref(bound, 0);
  for (auto k : hk) ++ref[k];
  index_t const got = num.download()[0];
  auto const u = unique.download();
  auto const c = counts.download();
  index_t at = 0;
  for (std::uint32_t k = 0; k < bound; ++k)
    if (ref[k]) {
      if (at >= got || u[at] != k || c[at] != ref[k]) return state.SkipWithError(("wrong unique key or count at " + std::to_string(at)).c_str());
      ++at;
    }
  if (at != got) return state.SkipWithError("wrong number of unique keys");
  for (auto _ : state) state.SetIterationTime(time_device([&] { run(keys.data(), n, unique.data(), counts.data(), num.data()); }));
  report_bytes(state, static_cast<double>(n) * 4.0, static_cast<double>(n));
  state.counters["unique"] = static_cast<double>(got);
}

void count_calm(benchmark::State& state, std::uint32_t bound, dist ds, bool checked, calm::strategy s) {
  calm::count_options opt;
  opt.check_indices = checked;
  time_count(state, bound, ds, [&](std::uint32_t const* k, index_t n, std::uint32_t* u, std::uint32_t* c, index_t* num) {
    calm::for_strategy(s, [&](auto S) { calm::count_duplicates<S()>(k, n, bound, u, c, num, opt); });
  });
}

#if defined(CALM_BACKEND_CUDA)
__global__ void widen_count(int const* in, index_t* out) { *out = *in; }

/// CUB's sort-based count: a radix sort of the keys' low `bits` bits, then a run-length encode.
template <class K>
struct cub_sort_rle {
  dbuf<K> sorted;
  dbuf<int> runs;
  dbuf<unsigned char> temp;
  int bits;
  cub_sort_rle(index_t n, int key_bits) : sorted(static_cast<std::size_t>(n)), runs(1), bits(key_bits) {
    std::size_t b1 = 0, b2 = 0;
    check_cuda(cub::DeviceRadixSort::SortKeys(nullptr, b1, static_cast<K const*>(nullptr), sorted.data(), static_cast<int>(n), 0, bits), "SortKeys");
    check_cuda(cub::DeviceRunLengthEncode::Encode(nullptr, b2, sorted.data(), sorted.data(), static_cast<std::uint32_t*>(nullptr), runs.data(), static_cast<int>(n)),
               "Encode");
    temp = dbuf<unsigned char>(std::max({b1, b2, std::size_t(1)}));
  }
  void operator()(K const* k, index_t n, K* u, std::uint32_t* c, index_t* num) {
    std::size_t t = temp.size();
    check_cuda(cub::DeviceRadixSort::SortKeys(temp.data(), t, k, sorted.data(), static_cast<int>(n), 0, bits), "SortKeys");
    t = temp.size();
    check_cuda(cub::DeviceRunLengthEncode::Encode(temp.data(), t, sorted.data(), u, c, runs.data(), static_cast<int>(n)), "Encode");
    widen_count<<<1, 1>>>(runs.data(), num);
    check_cuda(cudaGetLastError(), "widen_count");
  }
};

void count_cub(benchmark::State& state, std::uint32_t bound, dist ds) {
  int const bits = std::max(1, static_cast<int>(std::ceil(std::log2(static_cast<double>(bound)))));
  cub_sort_rle<std::uint32_t> peer(static_cast<index_t>(device_keys(bound, ds).size()), bits);
  time_count(state, bound, ds, [&](std::uint32_t const* k, index_t n, std::uint32_t* u, std::uint32_t* c, index_t* num) { peer(k, n, u, c, num); });
}
#endif

#if defined(CALM_BACKEND_OPENMP)
/// The sort-based peer on the host: std::sort of a copy, then a run-length encode.
template <class K>
void host_sort_rle(K const* k, index_t n, K* u, std::uint32_t* c, index_t* num, std::vector<K>& tmp) {
  tmp.assign(k, k + n);
  std::sort(tmp.begin(), tmp.end());
  index_t at = -1;
  for (index_t i = 0; i < n; ++i) {
    if (i == 0 || tmp[i] != tmp[i - 1]) u[++at] = tmp[i], c[at] = 0;
    ++c[at];
  }
  *num = at + 1;
}

void count_sort(benchmark::State& state, std::uint32_t bound, dist ds) {
  std::vector<std::uint32_t> tmp;
  time_count(state, bound, ds, [&](std::uint32_t const* k, index_t n, std::uint32_t* u, std::uint32_t* c, index_t* num) { host_sort_rle(k, n, u, c, num, tmp); });
}
#endif

// Keys of any value: the same duplicate structure (bound distinct keys, uniform or zipf) with each key
// sent through a bijection onto the whole 64-bit range, for the hashed count_duplicates.
backend::device_buffer<std::uint64_t> const& wide_keys(std::uint32_t bound, dist ds) {
  static std::map<std::pair<std::uint32_t, int>, backend::device_buffer<std::uint64_t>> cache;
  auto const key = std::make_pair(bound, static_cast<int>(ds));
  auto it = cache.find(key);
  if (it == cache.end()) {
    std::vector<std::uint32_t> const small = device_keys(bound, ds).download();
    std::vector<std::uint64_t> wide(small.size());
    for (std::size_t i = 0; i < small.size(); ++i) {
      std::uint64_t x = (static_cast<std::uint64_t>(small[i]) + 1) * 0xD6E8FEB86659FD93ull;  // odd multiplier: a bijection
      wide[i] = x ^ (x >> 29);
    }
    it = cache.emplace(key, backend::device_buffer<std::uint64_t>(wide)).first;
  }
  return it->second;
}

/// The sorted (key, count) pairs of wide_keys(bound, ds): a sort and a run-length encode, once per input.
std::vector<std::pair<std::uint64_t, std::uint32_t>> const& wide_reference(std::uint32_t bound, dist ds) {
  static std::map<std::pair<std::uint32_t, int>, std::vector<std::pair<std::uint64_t, std::uint32_t>>> cache;
  auto& ref = cache[std::make_pair(bound, static_cast<int>(ds))];
  if (ref.empty()) {
    std::vector<std::uint64_t> k = wide_keys(bound, ds).download();
    std::sort(k.begin(), k.end());
    for (std::size_t i = 0; i < k.size(); ++i) {
      if (i == 0 || k[i] != k[i - 1]) ref.emplace_back(k[i], 0u);
      ++ref.back().second;
    }
  }
  return ref;
}

template <class Run>
void time_count_wide(benchmark::State& state, std::uint32_t bound, dist ds, Run run) {
  auto const& keys = wide_keys(bound, ds);
  index_t const n = static_cast<index_t>(keys.size());
  dbuf<std::uint64_t> unique(static_cast<std::size_t>(n));
  dbuf<std::uint32_t> counts(static_cast<std::size_t>(n));
  dbuf<index_t> num(1);
  run(keys.data(), n, unique.data(), counts.data(), num.data());
  backend::synchronize();
  auto const& ref = wide_reference(bound, ds);
  index_t const got = num.download()[0];
  if (got != static_cast<index_t>(ref.size())) return state.SkipWithError("wrong number of unique keys");
  auto const u = unique.download();
  auto const c = counts.download();
  std::vector<std::pair<std::uint64_t, std::uint32_t>> pairs(static_cast<std::size_t>(got));
  for (std::size_t i = 0; i < pairs.size(); ++i) pairs[i] = {u[i], c[i]};
  std::sort(pairs.begin(), pairs.end());
  if (pairs != ref) return state.SkipWithError("wrong unique keys or counts");
  for (auto _ : state) state.SetIterationTime(time_device([&] { run(keys.data(), n, unique.data(), counts.data(), num.data()); }));
  report_bytes(state, static_cast<double>(n) * 8.0, static_cast<double>(n));
  state.counters["unique"] = static_cast<double>(got);
}

void count_wide_calm(benchmark::State& state, std::uint32_t bound, dist ds, calm::strategy s, index_t max_unique = 0) {
  calm::count_options opt;
  opt.max_unique = max_unique;
  time_count_wide(state, bound, ds, [&](std::uint64_t const* k, index_t n, std::uint64_t* u, std::uint32_t* c, index_t* num) {
    calm::for_strategy(s, [&](auto S) { calm::count_duplicates<S()>(k, n, u, c, num, opt); });
  });
}

#if defined(CALM_BACKEND_CUDA)
void count_wide_cub(benchmark::State& state, std::uint32_t bound, dist ds) {  // all 64 key bits sorted, then run-length encoded
  cub_sort_rle<std::uint64_t> peer(static_cast<index_t>(wide_keys(bound, ds).size()), 64);
  time_count_wide(state, bound, ds, [&](std::uint64_t const* k, index_t n, std::uint64_t* u, std::uint32_t* c, index_t* num) { peer(k, n, u, c, num); });
}
#endif

#if defined(CALM_BACKEND_OPENMP)
void count_wide_sort(benchmark::State& state, std::uint32_t bound, dist ds) {
  std::vector<std::uint64_t> tmp;
  time_count_wide(state, bound, ds, [&](std::uint64_t const* k, index_t n, std::uint64_t* u, std::uint32_t* c, index_t* num) { host_sort_rle(k, n, u, c, num, tmp); });
}
#endif

[[maybe_unused]] bool const registered = [] {
  for (std::string kind : {"stencil2d", "stencil3d27", "power_law", "dense_rows", "uniform"}) {
    std::string const base = "spmv/" + kind + "/";
    add(base + "calm_naive", spmv_calm, kind, calm::spmv_method::naive, false);
    add(base + "calm", spmv_calm, kind, calm::spmv_method::merge_rows, false);
    add(base + "calm_checked", spmv_calm, kind, calm::spmv_method::merge_rows, true);
#if defined(CALM_BACKEND_CUDA) || defined(CALM_BACKEND_OPENMP)
    add(base + "calm_scatter_scan_reduce", spmv_scatter, kind, calm::strategy::scan_reduce, false);
    add(base + "calm_scatter_scan_reduce_set_scatter", spmv_scatter, kind, calm::strategy::scan_reduce, true);
    add(base + "calm_scatter_naive_set_scatter", spmv_scatter, kind, calm::strategy::naive, true);
#endif
#if defined(CALM_BACKEND_CUDA)
    add(base + "cusparse_coo", spmv_cusparse, kind, false);
    add(base + "cusparse_csr", spmv_cusparse, kind, true);
#endif
#if defined(CALM_BACKEND_OPENMP)
    add(base + "omp_csr", spmv_omp_csr, kind);
    add(base + "omp_coo", spmv_omp_coo, kind);
#endif
  }
  for (int d : {2, 4, 8})
    for (index_t k : {16, 128, 1024}) {
      std::string const base = "kmeans/d" + std::to_string(d) + "/k" + std::to_string(k) + "/";
      for (auto m : {calm::kmeans_method::automatic, calm::kmeans_method::naive, calm::kmeans_method::peer_reduce, calm::kmeans_method::privatize,
                     calm::kmeans_method::privatize_peer_reduce, calm::kmeans_method::thread_private})
        add(base + (m == calm::kmeans_method::automatic ? std::string("calm") : std::string("calm_") + calm::to_string(m)), kmeans_calm, d, k, m);
#if defined(CALM_BACKEND_CUDA)
      add(base + "cub_sort_reduce", kmeans_cub, d, k);
#endif
#if defined(CALM_BACKEND_OPENMP)
      add(base + "omp_reduction", kmeans_omp, d, k);
#endif
    }
  for (index_t m : {index_t(1), index_t(32), index_t(1024), index_t(1) << 15, index_t(1) << 20}) {
    std::string const base = "sum_compacted/m" + std::to_string(m) + "/";
    add(base + "calm", compacted_calm, m, calm::compact_method::merge_runs);
    if (m >= 1024) add(base + "calm_naive", compacted_calm, m, calm::compact_method::naive);
#if defined(CALM_BACKEND_CUDA)
    add(base + "cub", compacted_cub, m);
#endif
#if defined(CALM_BACKEND_OPENMP)
    add(base + "omp", compacted_omp, m);
#endif
  }
  for (dist ds : {dist::uniform, dist::zipf})
    for (std::uint32_t bound : {1u << 10, 1u << 16, 1u << 20, 1u << 24}) {
      std::string const base = std::string("count_duplicates/") + to_string(ds) + "/" + std::to_string(bound) + "/";
      add(base + "calm", count_calm, bound, ds, false, calm::strategy::automatic);
      add(base + "calm_checked", count_calm, bound, ds, true, calm::strategy::automatic);
      for (auto s : {calm::strategy::naive, calm::strategy::peer_reduce, calm::strategy::privatize, calm::strategy::hot_key, calm::strategy::cluster_privatize})
        if ((s != calm::strategy::privatize || bound <= 8192) && (s != calm::strategy::cluster_privatize || bound <= 65536))
          add(base + "calm_" + calm::to_string(s), count_calm, bound, ds, false, s);
#if defined(CALM_BACKEND_CUDA)
      add(base + "cub_sort_rle", count_cub, bound, ds);
#endif
#if defined(CALM_BACKEND_OPENMP)
      add(base + "std_sort_rle", count_sort, bound, ds);
#endif
    }
  for (dist ds : {dist::uniform, dist::zipf})
    for (std::uint32_t bound : {1u << 10, 1u << 20, 1u << 24}) {
      std::string const base = std::string("count_duplicates_any/") + to_string(ds) + "/" + std::to_string(bound) + "/";
      add(base + "calm", count_wide_calm, bound, ds, calm::strategy::automatic, index_t(0));
      add(base + "calm_naive", count_wide_calm, bound, ds, calm::strategy::naive, index_t(0));
      add(base + "calm_peer_reduce", count_wide_calm, bound, ds, calm::strategy::peer_reduce, index_t(0));
      add(base + "calm_max_unique", count_wide_calm, bound, ds, calm::strategy::automatic, static_cast<index_t>(bound));  // the table sized to the keys
#if defined(CALM_BACKEND_CUDA)
      add(base + "cub_sort_rle", count_wide_cub, bound, ds);
#endif
#if defined(CALM_BACKEND_OPENMP)
      add(base + "std_sort_rle", count_wide_sort, bound, ds);
#endif
    }
  return true;
}();

}  // namespace
}  // namespace calm_bench
