// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_choice_launches.cu: a stand-alone probe (not part of the library or its build) of three ways
// to run one of five launches chosen on the device, in a CUDA graph: each launch behind a guard that ends
// at once where it is not chosen (serially, with and without programmatic launches), the five launches on
// parallel branches of the graph (fork and join), and a conditional switch node (as
// probe_graph_branches.cu did on 2026-11-24). Results: perf/results/cuda-h100-2026-11-26-merge-program-registers.md.
//
//   nvcc -O2 -arch=sm_90 perf/probe_choice_launches.cu -o probe && ./probe
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <chrono>
#include "probe_graph_timing.hpp"

__global__ void choose_k(int* decided, int k, cudaGraphConditionalHandle h, int use_h) {
  if (threadIdx.x == 0 && blockIdx.x == 0) { *decided = k; if (use_h) cudaGraphSetConditional(h, k); }
}
__global__ void work_k(int const* decided, int id, unsigned* sink, int iters) {
  if (decided && *decided != id) return;
  unsigned a = threadIdx.x;
  for (int i = 0; i < iters; ++i) a = a * 1664525u + 1013904223u;
  if (a == 0x12345) sink[0] = a;
}
static void launch_work(cudaStream_t s, int const* decided, int id, unsigned* sink, int iters, bool pdl) {
  cudaLaunchConfig_t c = {}; c.gridDim = dim3(528); c.blockDim = dim3(512); c.stream = s;
  cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; at[0].val.programmaticStreamSerializationAllowed = 1;
  c.attrs = at; c.numAttrs = pdl ? 1 : 0;
  CK(cudaLaunchKernelEx(&c, work_k, decided, id, sink, iters));
}
int main() {
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* decided; unsigned* sink; CK(cudaMalloc(&decided, 4)); CK(cudaMalloc(&sink, 4));
  int const branches = 5, chosen = 3;
  for (int iters : {0, 2000}) {
    // empty: just the chooser
    cudaGraph_t g; cudaGraphExec_t ex;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    choose_k<<<1, 32, 0, s>>>(decided, chosen, 0, 0);
    CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ex, g, 0));
    double t_choose = time_graph(ex, s, 2000);
    // best: chooser + chosen only
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    choose_k<<<1, 32, 0, s>>>(decided, chosen, 0, 0);
    launch_work(s, nullptr, chosen, sink, iters, false);
    CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ex, g, 0));
    double t_best = time_graph(ex, s, 2000);
    double t_exit[2];
    for (int pdl = 0; pdl < 2; ++pdl) {
      CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
      choose_k<<<1, 32, 0, s>>>(decided, chosen, 0, 0);
      for (int b = 0; b < branches; ++b) launch_work(s, decided, b, sink, iters, pdl);
      CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ex, g, 0));
      t_exit[pdl] = time_graph(ex, s, 2000);
    }
    double t_par[2];
    for (int nb : {2, 5}) {
      cudaStream_t side[5]; cudaEvent_t fork, join[5];
      CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
      for (int b = 0; b < 5; ++b) { CK(cudaStreamCreateWithFlags(&side[b], cudaStreamNonBlocking)); CK(cudaEventCreateWithFlags(&join[b], cudaEventDisableTiming)); }
      CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
      choose_k<<<1, 32, 0, s>>>(decided, nb == 2 ? 1 : chosen, 0, 0);
      CK(cudaEventRecord(fork, s));
      for (int b = 0; b < nb; ++b) {
        CK(cudaStreamWaitEvent(side[b], fork, 0));
        launch_work(side[b], decided, b, sink, iters, false);
        CK(cudaEventRecord(join[b], side[b]));
      }
      for (int b = 0; b < nb; ++b) CK(cudaStreamWaitEvent(s, join[b], 0));
      CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ex, g, 0));
      t_par[nb == 5] = time_graph(ex, s, 2000);
    }
    // serial 2 (pdl): chosen first, one early exit after
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    choose_k<<<1, 32, 0, s>>>(decided, 0, 0, 0);
    launch_work(s, decided, 0, sink, iters, true);
    launch_work(s, decided, 1, sink, iters, true);
    CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ex, g, 0));
    double t_ser2 = time_graph(ex, s, 2000);
    printf("iters %d: parallel branches: 2 %.2f us, 5 %.2f; serial 2 pdl %.2f\n", iters, t_par[0], t_par[1], t_ser2);
    // switch conditional
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    cudaStreamCaptureStatus st; cudaGraph_t cg; const cudaGraphNode_t* deps; size_t nd;
    CK(cudaStreamGetCaptureInfo(s, &st, nullptr, &cg, nullptr, nullptr, nullptr));
    cudaGraphConditionalHandle h;
    CK(cudaGraphConditionalHandleCreate(&h, cg, branches, cudaGraphCondAssignDefault));
    choose_k<<<1, 32, 0, s>>>(decided, chosen, h, 1);
    CK(cudaStreamGetCaptureInfo(s, &st, nullptr, &cg, &deps, nullptr, &nd));
    cudaGraphNodeParams p = {}; p.type = cudaGraphNodeTypeConditional;
    p.conditional.handle = h; p.conditional.type = cudaGraphCondTypeSwitch; p.conditional.size = branches;
    cudaGraphNode_t node;
    CK(cudaGraphAddNode(&node, cg, deps, nullptr, nd, &p));
    CK(cudaStreamUpdateCaptureDependencies(s, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
    cudaStream_t s2; CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    for (int b = 0; b < branches; ++b) {
      CK(cudaStreamBeginCaptureToGraph(s2, p.conditional.phGraph_out[b], nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed));
      launch_work(s2, nullptr, b, sink, iters, false);
      cudaGraph_t body; CK(cudaStreamEndCapture(s2, &body));
    }
    CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ex, g, 0));
    double t_switch = time_graph(ex, s, 2000);
    printf("iters %d: chooser %.2f us, chooser+chosen %.2f, chooser+5 early-exit %.2f (pdl %.2f), chooser+switch %.2f\n", iters, t_choose, t_best,
           t_exit[0], t_exit[1], t_switch);
  }
  return 0;
}
