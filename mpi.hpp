// SPDX-License-Identifier: Apache-2.0
// calm/mpi.hpp: calm's bulk scatters over keys sharded among the ranks of an MPI communicator (the host
// backend; link calm::mpi, which CMake defines where it finds MPI):
//   calm::mpi::scatter_replicated: every rank holds the whole table; each scatters its keys, one
//     reduction (MPI_Allreduce, or MPI_Reduce to a root) combines the ranks' tables;
//   calm::mpi::scatter_partitioned: each rank holds its part of the table (calm::mpi::block_owner or
//     cyclic_owner, or a map of your own); updates are combined on their rank, sent to their owners
//     (MPI_Alltoallv) and scattered there.
// Both take raw arrays or Kokkos views (any contiguous one-dimensional view) of host memory. The ranks'
// arguments and shapes are compared collectively first: an error on one rank is an error on all.
//
//   #include <calm/mpi.hpp>
//   calm::mpi::scatter_replicated(MPI_COMM_WORLD, calm::plus{}, keys, weights, n, table, bins);
#pragma once

#include "calm.hpp"
#include "backends/mpi/partitioned.hpp"
#include "backends/mpi/tables.hpp"
#include "backends/mpi/views.hpp"
