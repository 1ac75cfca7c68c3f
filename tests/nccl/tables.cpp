// SPDX-License-Identifier: Apache-2.0
// calm/nccl.hpp on one GPU, one rank (a communicator of one device): replicated, split and partitioned tables
// against a sequential reference, each op, weighted and counting, keys outside the table, a root, both owner
// maps, and the errors given before anything is exchanged. Several ranks need several GPUs (one process each); see CHANGELOG.
#include <calm/nccl.hpp>

#include <catch2/catch.hpp>

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <random>
#include <vector>

namespace {

using calm::index_t;

/// One device array, copied in and out.
template <class T>
struct device_array {
  T* p = nullptr;
  std::size_t n = 0;
  explicit device_array(std::vector<T> const& h) : n(h.size()) {
    CALM_CUDA_CHECK(cudaMalloc(&p, (n > 0 ? n : 1) * sizeof(T)));
    if (n > 0) CALM_CUDA_CHECK(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~device_array() { cudaFree(p); }
  device_array(device_array const&) = delete;
  std::vector<T> download() const {
    std::vector<T> h(n);
    CALM_CUDA_CHECK(cudaDeviceSynchronize());
    if (n > 0) CALM_CUDA_CHECK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
};

/// A communicator of this process's device 0 alone.
struct one_rank {
  ncclComm_t comm{};
  one_rank() {
    int dev = 0;
    calm::nccl::detail::check(ncclCommInitAll(&comm, 1, &dev), "ncclCommInitAll");
  }
  ~one_rank() { ncclCommDestroy(comm); }
};

template <class Op, class T>
std::vector<T> reference(std::vector<T> table, std::vector<std::int32_t> const& keys, std::vector<T> const& values) {
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (keys[i] >= 0 && keys[i] < static_cast<std::int32_t>(table.size())) table[keys[i]] = Op{}(table[keys[i]], values[i]);
  return table;
}

template <class Op, class T>
void check_both_forms(ncclComm_t comm, index_t n, index_t bins, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<std::int32_t> keys(static_cast<std::size_t>(n));
  for (auto& k : keys) k = static_cast<std::int32_t>(g() % static_cast<std::uint64_t>(bins + 5)) - 2;  // some outside, both sides
  std::vector<T> values(keys.size()), init(static_cast<std::size_t>(bins));
  for (auto& v : values) v = static_cast<T>(g() % 1000);
  for (auto& v : init) v = static_cast<T>(g() % 1000);
  std::vector<T> const want = reference<Op>(init, keys, values);
  device_array<std::int32_t> k(keys);
  device_array<T> v(values), replicated(init), split(init);
  calm::nccl::scatter_replicated(comm, Op{}, k.p, static_cast<T const*>(v.p), n, replicated.p, bins);
  calm::nccl::scatter_split(comm, Op{}, k.p, static_cast<T const*>(v.p), n, split.p, bins);
  CHECK(replicated.download() == want);  // integer-valued terms below 2^24: exact in any order
  CHECK(split.download() == want);
}

/// scatter_partitioned on one rank, both owner maps: pairs where the table is larger than the keys' pairs,
/// the arranged table otherwise.
template <class Op, class T, class Owner>
void check_partitioned(ncclComm_t comm, index_t n, index_t bins, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<std::int32_t> keys(static_cast<std::size_t>(n));
  for (auto& k : keys) k = static_cast<std::int32_t>(g() % static_cast<std::uint64_t>(bins + 5)) - 2;
  std::vector<T> values(keys.size()), init(static_cast<std::size_t>(bins));
  for (auto& v : values) v = static_cast<T>(g() % 1000);
  for (auto& v : init) v = static_cast<T>(g() % 1000);
  std::vector<T> const want = reference<Op>(init, keys, values);  // one rank: local(k) = k for both maps
  device_array<std::int32_t> k(keys);
  device_array<T> v(values), part(init);
  device_array<std::uint64_t> skipped(std::vector<std::uint64_t>{0});
  calm::scatter_options opt;
  opt.skipped = skipped.p;
  calm::nccl::exchange_report const r = calm::nccl::scatter_partitioned<calm::strategy::automatic, Owner>(comm, Op{}, k.p, static_cast<T const*>(v.p), n, part.p, bins, opt);
  CHECK(part.download() == want);
  std::uint64_t outside = 0;
  for (auto key : keys) outside += key < 0 || key >= bins ? 1 : 0;
  CHECK(skipped.download()[0] == outside);
  CHECK(r.keys == n);
  CHECK(r.dense == (static_cast<double>(bins) * sizeof(T) <= static_cast<double>(n) * (8 + sizeof(T))));
  if (!r.dense) {
    CHECK(r.kept == n - static_cast<index_t>(outside));
    CHECK(r.sent == 0);
    CHECK(r.received == 0);
  }
}

}  // namespace

TEST_CASE("nccl: a partitioned table on one rank, block and cyclic owners, pairs and arranged tables", "[nccl]") {
  one_rank r;
  index_t const n = GENERATE(0, 1, 5001);
  index_t const bins = GENERATE(1, 300, 70001);
  CAPTURE(n, bins);
  check_partitioned<calm::plus, float, calm::nccl::block_split>(r.comm, n, bins, 21);
  check_partitioned<calm::plus, std::uint32_t, calm::nccl::cyclic_split>(r.comm, n, bins, 22);
  check_partitioned<calm::max, std::int64_t, calm::nccl::block_split>(r.comm, n, bins, 23);
  check_partitioned<calm::min, double, calm::nccl::cyclic_split>(r.comm, n, bins, 24);
}

TEST_CASE("nccl: replicated and split tables on one rank, every op", "[nccl]") {
  one_rank r;
  index_t const n = GENERATE(0, 1, 5001);
  index_t const bins = GENERATE(1, 300, 70001);
  CAPTURE(n, bins);
  check_both_forms<calm::plus, float>(r.comm, n, bins, 11);
  check_both_forms<calm::plus, std::uint32_t>(r.comm, n, bins, 12);
  check_both_forms<calm::max, std::int64_t>(r.comm, n, bins, 13);
  check_both_forms<calm::min, double>(r.comm, n, bins, 14);
}

TEST_CASE("nccl: a histogram to a root, and errors before anything is exchanged", "[nccl]") {
  one_rank r;
  std::vector<std::int32_t> keys{1, 1, 3, 7, -1};
  device_array<std::int32_t> k(keys);
  device_array<std::uint32_t> hist(std::vector<std::uint32_t>(4, 5));
  calm::nccl::scatter_replicated(r.comm, calm::plus{}, k.p, calm::constant(1u), 5, hist.p, 4, {}, 0);
  CHECK(hist.download() == std::vector<std::uint32_t>{5, 7, 5, 6});
  calm::scatter_options over;
  over.overwrite = true;
  calm::nccl::scatter_split(r.comm, calm::plus{}, k.p, calm::constant(1u), 5, hist.p, 4, over);
  CHECK(hist.download() == std::vector<std::uint32_t>{0, 2, 0, 1});
  REQUIRE_THROWS_AS(calm::nccl::scatter_replicated(r.comm, calm::plus{}, k.p, calm::constant(1u), 5, hist.p, 4, {}, 3), calm::error);
  REQUIRE_THROWS_AS(calm::nccl::scatter_replicated(r.comm, calm::plus{}, k.p, calm::constant(1u), -1, hist.p, 4), calm::error);
  REQUIRE_THROWS_AS(calm::nccl::scatter_split(r.comm, calm::plus{}, k.p, calm::constant(1u), 5, static_cast<std::uint32_t*>(nullptr), 4), calm::error);
  REQUIRE_THROWS_AS(calm::nccl::scatter_partitioned(r.comm, calm::plus{}, k.p, calm::constant(1u), -1, hist.p, 4), calm::error);
  device_array<std::uint64_t> skipped(std::vector<std::uint64_t>{0});
  calm::scatter_options counted;
  counted.skipped = skipped.p;
  calm::nccl::scatter_replicated(r.comm, calm::plus{}, k.p, calm::constant(1u), 5, static_cast<std::uint32_t*>(nullptr), 0, counted);
  calm::nccl::scatter_split(r.comm, calm::plus{}, k.p, calm::constant(1u), 5, static_cast<std::uint32_t*>(nullptr), 0, counted);
  calm::nccl::scatter_partitioned(r.comm, calm::plus{}, k.p, calm::constant(1u), 5, static_cast<std::uint32_t*>(nullptr), 0, counted);
  CHECK(skipped.download()[0] == 15);  // a table of no entries: every key outside it, on each call
  calm::index_t const order[5] = {0, 1, 2, 3, 4};
  calm::scatter_options ordered;
  ordered.order = order;
  REQUIRE_THROWS_AS(calm::nccl::scatter_partitioned(r.comm, calm::plus{}, k.p, calm::constant(1u), 5, hist.p, 4, ordered), calm::error);
  REQUIRE_THROWS_AS((calm::nccl::scatter_partitioned<calm::strategy::privatize>(r.comm, calm::plus{}, k.p, calm::constant(1u), 5, hist.p, 1 << 30)),
                    calm::error);
  CHECK(hist.download() == std::vector<std::uint32_t>{0, 2, 0, 1});
}
