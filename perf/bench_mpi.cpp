// SPDX-License-Identifier: Apache-2.0
// calm/mpi.hpp's tables against the plain approach, under mpirun: each rank scatters n float weights by
// uint32 keys; "plain" fills a table with one OpenMP atomic per key and reduces it with one MPI_Allreduce,
// "replicated" is calm::mpi::scatter_replicated, "partitioned" calm::mpi::scatter_partitioned (block owners;
// the bytes it sent per key beside it). Times: the slowest rank's, median of 7 calls after one. Rank 0
// prints a markdown table.
//
//   mpirun -np 2 calm_bench_mpi [log2 keys per rank, default 22]
#include <calm/mpi.hpp>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using calm::index_t;

/// The slowest rank's seconds for call(), median of 7 after one untimed.
double time_call(std::function<void()> const& call) {
  call();
  std::vector<double> t;
  for (int r = 0; r < 7; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    auto const start = std::chrono::steady_clock::now();
    call();
    double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    t.push_back(slowest);
  }
  std::nth_element(t.begin(), t.begin() + 3, t.end());
  return t[3];
}

std::vector<std::uint32_t> keys_of(std::size_t n, std::uint32_t bins, bool hot, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<std::uint32_t> k(n);
  for (auto& x : k) x = hot && (g() & 1) ? bins / 2 : static_cast<std::uint32_t>(g() % bins);
  return k;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int const log2_n = argc > 1 ? std::atoi(argv[1]) : 22;
  std::size_t const n = std::size_t(1) << log2_n;
  std::vector<float> weights(n);
  for (std::size_t i = 0; i < n; ++i) weights[i] = 1.0f + static_cast<float>(i % 7) * 0.25f;
  if (rank == 0) {
    std::printf("%d ranks, 2^%d uint32 keys and float weights per rank; seconds of the slowest rank (median of 7)\n\n", ranks, log2_n);
    std::printf("| keys | bins | plain (atomics + MPI_Allreduce) | replicated | x plain | partitioned | x plain | bytes sent per key |\n");
    std::printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  }
  for (bool hot : {false, true})
    for (std::uint32_t bins : {256u, 65536u, 1u << 20, 1u << 24}) {
      auto const keys = keys_of(n, bins, hot, 1234 + static_cast<std::uint64_t>(rank));
      std::vector<float> table(bins, 0.0f);
      double const plain = time_call([&] {
        std::fill(table.begin(), table.end(), 0.0f);
#pragma omp parallel for
        for (std::size_t i = 0; i < n; ++i) {
#pragma omp atomic
          table[keys[i]] += weights[i];
        }
        MPI_Allreduce(MPI_IN_PLACE, table.data(), static_cast<int>(bins), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      });
      calm::scatter_options overwrite;
      overwrite.overwrite = true;
      double const replicated = time_call([&] {
        calm::mpi::scatter_replicated(MPI_COMM_WORLD, calm::plus{}, keys.data(), weights.data(), static_cast<index_t>(n), table.data(), bins, overwrite);
      });
      calm::mpi::block_owner const owner{bins, ranks};
      std::vector<float> part(static_cast<std::size_t>(owner.size(rank)));
      calm::mpi::exchange_report report;
      double const partitioned = time_call([&] {
        report = calm::mpi::scatter_partitioned(MPI_COMM_WORLD, calm::plus{}, keys.data(), weights.data(), static_cast<index_t>(n), part.data(), bins,
                                                overwrite);
      });
      std::int64_t bytes = report.bytes_sent, all = 0;
      MPI_Allreduce(&bytes, &all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      if (rank == 0)
        std::printf("| %s | %u | %.4f | %.4f | %.2f | %.4f | %.2f | %.2f |\n", hot ? "half on one" : "uniform", bins, plain, replicated, plain / replicated,
                    partitioned, plain / partitioned, static_cast<double>(all) / (static_cast<double>(n) * ranks));
    }
  MPI_Finalize();
  return 0;
}
