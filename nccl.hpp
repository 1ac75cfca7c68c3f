// SPDX-License-Identifier: Apache-2.0
// calm/nccl.hpp: calm's bulk scatters over keys sharded among the ranks of an NCCL communicator, one GPU a
// rank (the CUDA backend; link calm::nccl, which CMake defines where it finds NCCL):
//   calm::nccl::scatter_replicated: every rank holds the whole table in device memory; each scatters its
//     keys, one ncclAllReduce (or ncclReduce to a root) combines the ranks' tables;
//   calm::nccl::scatter_split: each rank holds one block of the table (calm::nccl::block_split); one
//     ncclReduceScatter of the ranks' whole tables hands each its block;
//   calm::nccl::scatter_partitioned: each rank holds its entries of the table (block_split or cyclic_split);
//     each rank's updates go to their owners (ncclSend/ncclRecv of pairs, or one ncclReduceScatter where the
//     whole table costs no more than the updates).
// All run on the exec's stream (the caller's), after one wait for the collective check of the ranks'
// arguments: an error on one rank is an error on all. Ops: plus, max, min (NCCL has no bit operations).
//
//   #include <calm/nccl.hpp>
//   calm::nccl::scatter_replicated(comm, calm::plus{}, keys, weights, n, table, bins, {}, calm::nccl::all_ranks, calm::cuda::exec{stream});
#pragma once

#include "calm.hpp"
#include "backends/nccl/partitioned.hpp"
#include "backends/nccl/tables.hpp"
