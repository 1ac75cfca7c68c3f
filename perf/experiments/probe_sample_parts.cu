// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_sample_parts.cu: a stand-alone probe (not part of the library or its build) of what each part of
// automatic's sampling costs, on hist_u32 sorted, 300,000 entries, 2^24 keys: each part a CUDA graph of calm's own
// launch_sample, host launch to wait, medians of 3,800 launches in rounds. Parts: empty (one block that does nothing),
// sample (groups' totals to their own slots), sample_lines (and the line repeats of merge_lines), meet_lines (the
// groups meeting: device atomics and a ticket), choice_lines (the library's choice_program as its finish), choice
// (the same without the line count), leaf_walk_lines (choice_program with a walk of one leaf: loads and ratios, no
// tests), fixed_lines (a finish that writes a constant), and other finishes tried: cross (the walk's tests as
// products, the nodes read from kernel parameters, as the library now does), cross_staged (the nodes first copied
// to block-local memory, one warp a node), flat (every test first, unrolled, then the walk over the outcome bits),
// select (the feature picked by selects, not a switch). Results: perf/results/cuda-h100-2026-11-26-sampling-parts.md.
//
//   nvcc -std=c++17 -O3 -DNDEBUG --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -DCALM_BACKEND_CUDA=1 \
//        -I <a folder holding calm/, a link to this repository> perf/probe_sample_parts.cu -o probe && ./probe
#include <calm/calm.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "probe_graph_timing.hpp"
namespace d = calm::detail;
// The finishes tried: one lane loads the sum, a Decide picks the strategy, the line rule applies as in the
// library's choice_program. Decide::stage runs on the whole block first (most do nothing).
template <class Decide>
struct probe_finish {
  calm::detail::collision_totals const* sum;
  calm::tree_walk walk;
  calm::strategy* decided;
  calm::line_merge_rule rule;
  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    Decide const decide{};
    decide.stage(blk, walk);
    blk.for_each_warp([&](auto const& w, auto t) {
      calm::when(w, t == 0, [&](auto const&) {
        calm::detail::collision_totals const tt = *sum;
        calm::strategy s = decide(blk, walk, tt);
        if (s == calm::strategy::peer_reduce && !rule.merges(calm::detail::line_repeats_of(tt))) s = calm::strategy::naive;
        *decided = s;
      });
    });
  }
};
struct no_stage {
  template <class Block>
  CALM_HD void stage(Block const&, calm::tree_walk const&) const {}
};
// a test as a product (no division), the feature picked by a switch
CALM_HD inline bool passes(calm::feature f, double thr, calm::detail::collision_totals const& t) {
  double num = 0.0, den = 0.0;
  double const one = double(calm::detail::collision_fixed_one);
  switch (f) {
    case calm::feature::warp_level: num = double(t.warp_sum), den = one * double(t.warps); break;
    case calm::feature::block_level: num = double(t.block_sum), den = one * double(t.blocks); break;
    case calm::feature::all_thread_level: num = double(t.sampled - t.out_of_range), den = double(t.distinct); break;
    case calm::feature::clustering: num = double(t.adjacent), den = double(t.repeats); break;
    case calm::feature::line_share: num = double(t.lines), den = double(t.sampled - t.out_of_range - t.repeats); break;
    case calm::feature::line_repeats: num = double(t.line_repeats), den = double(t.line_warps); break;
    default: break;
  }
  return den > 0.0 ? num <= thr * den : 0.0 <= thr;
}
// cross: the walk over the nodes in kernel parameters, each test a product
struct by_products : no_stage {
  template <class Block>
  CALM_HD calm::strategy operator()(Block const&, calm::tree_walk const& walk, calm::detail::collision_totals const& tt) const {
    int i = 0;
    while (walk.nodes[i].left >= 0) i = passes(walk.nodes[i].test, walk.nodes[i].threshold, tt) ? walk.nodes[i].left : walk.nodes[i].right;
    return walk.nodes[i].leaf;
  }
};
// cross_staged: the nodes first copied to block-local memory (the block's key scratch, free by then), one warp a node
struct staged_node { double threshold; int test, left, right, leaf; };
struct by_products_staged {
  template <class Block>
  CALM_HD void stage(Block const& blk, calm::tree_walk const& walk) const {
    staged_node* const sn = blk.template scratch<staged_node>();
    blk.for_each_warp([&](auto const& w, auto t) {
      int const warp = t / 32, warps = blk.threads() / 32;
      for (int i = warp; i < walk.size; i += warps) {
        calm::tree_walk::node const nd = walk.nodes[i];
        calm::when(w, t % 32 == 0, [&](auto const&) { sn[i] = staged_node{nd.threshold, int(nd.test), nd.left, nd.right, int(nd.leaf)}; });
      }
    });
    blk.sync();
  }
  template <class Block>
  CALM_HD calm::strategy operator()(Block const& blk, calm::tree_walk const&, calm::detail::collision_totals const& tt) const {
    staged_node const* const sn = blk.template scratch<staged_node>();
    int i = 0;
    while (sn[i].left >= 0) i = passes(calm::feature(sn[i].test), sn[i].threshold, tt) ? sn[i].left : sn[i].right;
    return calm::strategy(sn[i].leaf);
  }
};
// the ratio of feature f picked by selects (no switch)
CALM_HD inline calm::detail::statistic_ratio selected(calm::feature f, calm::detail::collision_ratios const& r) {
  calm::detail::statistic_ratio x = r.line_share;
  x = f == calm::feature::line_repeats ? r.line_repeats : x;
  x = f == calm::feature::clustering ? r.clustering : x;
  x = f == calm::feature::all_thread_level ? r.all_thread_level : x;
  x = f == calm::feature::block_level ? r.block_level : x;
  x = f == calm::feature::warp_level ? r.warp_level : x;
  return x;
}
// flat: every test first, unrolled over fixed node indices; then the walk over the outcome bits
struct by_outcome_bits : no_stage {
  template <class Block>
  CALM_HD calm::strategy operator()(Block const&, calm::tree_walk const& walk, calm::detail::collision_totals const& tt) const {
    calm::detail::collision_ratios const r = calm::detail::ratios_of(tt);
    unsigned bits = 0;
#pragma unroll
    for (int k = 0; k < calm::tree_walk::most_nodes; ++k) bits |= unsigned(selected(walk.nodes[k].test, r).at_most(walk.nodes[k].threshold)) << k;
    int i = 0;
    while (walk.nodes[i].left >= 0) i = (bits >> i) & 1u ? walk.nodes[i].left : walk.nodes[i].right;
    return walk.nodes[i].leaf;
  }
};
// select: the library's walk with the feature picked by selects
struct by_selects : no_stage {
  template <class Block>
  CALM_HD calm::strategy operator()(Block const&, calm::tree_walk const& walk, calm::detail::collision_totals const& tt) const {
    calm::detail::collision_ratios const r = calm::detail::ratios_of(tt);
    int i = 0;
    while (walk.nodes[i].left >= 0) i = selected(walk.nodes[i].test, r).at_most(walk.nodes[i].threshold) ? walk.nodes[i].left : walk.nodes[i].right;
    return walk.nodes[i].leaf;
  }
};
// a finish that writes a fixed choice (no loads, no walk; small parameters)
struct fixed_finish {
  calm::strategy* decided;
  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    blk.for_each_warp([&](auto const& w, auto t) { calm::when(w, t == 0, [&](auto const&) { *decided = calm::strategy::peer_reduce; }); });
  }
};
using calm::index_t;
int main(int argc, char** argv) {
  std::uint32_t const bins = 300000;
  index_t const n = index_t(1) << 24;
  calm::backend::device_buffer<std::uint32_t> keys(sorted_keys(static_cast<std::size_t>(n), bins));
  std::uint32_t const* pk = keys.data();
  using T = std::uint32_t;
  calm::default_exec const ex{};
  auto const vals = d::as_value_source<T>(calm::constant(T(1)));
  calm::tree_view const tree = calm::family_tree(calm::default_exec::family);
  calm::scatter_shape const shape = d::shape_of<calm::plus, T>(n, bins, true, ex);
  calm::scatter_options const opt{};
  auto const fit = [&](calm::strategy s) { return d::fitting_strategy<calm::plus, T, d::identity_key>(s, opt, shape, ex); };
  int const start = calm::walk_known(tree, shape);
  calm::tree_walk walk;
  if (tree[start].left < 0 || !calm::make_walk(tree, shape, start, fit, walk)) { printf("no walk\n"); return 1; }
  unsigned reads = 0;
  unsigned const reach = walk.reachable(&reads);
  bool const block_level = calm::tree_walk::reads_feature(reads, calm::feature::block_level);
  d::sample_plan const plan = d::plan_sample(pk, n, bins, opt.sample);
  calm::line_merge_rule const rule = calm::line_merge_rule::resolved(-1.0f, calm::default_exec::family, 4, 4, std::uint64_t(bins) * 4);
  d::merge_lines const rule_lines = d::merge_lines_of<calm::default_exec, std::uint32_t, decltype(vals), T>(rule, reach, pk, vals, nullptr);
  d::merge_lines const lines = d::sampled_lines_of<calm::default_exec, std::uint32_t, decltype(vals), T>(rule_lines, reads, pk, vals);
  printf("walk size %d reach %#x reads %#x block_level %d groups %d lines vec %d entries %d\n", walk.size, reach, reads, int(block_level), int(plan.groups), lines.vec, int(lines.line_entries));
  std::size_t const meet_bytes = sizeof(d::sample_meeting);
  calm::backend::device_buffer<unsigned char> ws(meet_bytes + 8 + plan.groups * sizeof(d::collision_totals));
  ws.fill_bytes(0);
  char const* names[] = {"empty", "sample", "sample_lines", "meet_lines", "choice_lines", "choice", "leaf_walk_lines", "fixed_lines", "cross_lines", "cross_staged_lines", "flat", "select"};
  int const parts = 12;
  calm::tree_walk leaf;
  leaf.size = 1;
  leaf.nodes[0].left = leaf.nodes[0].right = -1;
  leaf.nodes[0].leaf = calm::strategy::peer_reduce;
  std::vector<cudaGraphExec_t> graphs;
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (int tag = 0; tag < parts; ++tag) {
    cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
    calm::default_exec e = calm::on_stream(s);
    unsigned char* w = ws.data();
    auto* const meet = reinterpret_cast<d::sample_meeting*>(w);
    auto* const made = reinterpret_cast<calm::strategy*>(w + meet_bytes);
    auto* const totals = reinterpret_cast<d::collision_totals*>(w + meet_bytes + 8);
    d::merge_lines const none{};
    if (tag == 0) e.for_each_block(1, 32, 0, d::no_finish{});
    if (tag == 1) d::launch_sample(pk, n, bins, plan, d::identity_key{}, totals, nullptr, 0, e, nullptr, d::no_finish{}, block_level, none);
    if (tag == 2) d::launch_sample(pk, n, bins, plan, d::identity_key{}, totals, nullptr, 0, e, nullptr, d::no_finish{}, block_level, lines);
    if (tag == 3) d::launch_sample(pk, n, bins, plan, d::identity_key{}, totals, nullptr, 0, e, meet, d::no_finish{}, block_level, lines);
    if (tag == 4) d::launch_sample(pk, n, bins, plan, d::identity_key{}, totals, nullptr, 0, e, meet, d::choice_program{&meet->sum, walk, made, nullptr, rule}, block_level, lines);
    if (tag == 5) d::launch_sample(pk, n, bins, plan, d::identity_key{}, totals, nullptr, 0, e, meet, d::choice_program{&meet->sum, walk, made, nullptr, {}}, block_level, none);
    if (tag == 6) d::launch_sample(pk, n, bins, plan, d::identity_key{}, totals, nullptr, 0, e, meet, d::choice_program{&meet->sum, leaf, made, nullptr, rule}, block_level, lines);
    if (tag == 7) d::launch_sample(pk, n, bins, plan, d::identity_key{}, totals, nullptr, 0, e, meet, fixed_finish{made}, block_level, lines);
    if (tag == 8) d::launch_sample(pk, n, bins, plan, d::identity_key{}, totals, nullptr, 0, e, meet, probe_finish<by_products>{&meet->sum, walk, made, rule}, block_level, lines);
    if (tag == 9) d::launch_sample(pk, n, bins, plan, d::identity_key{}, totals, nullptr, 0, e, meet, probe_finish<by_products_staged>{&meet->sum, walk, made, rule}, block_level, lines);
    if (tag == 10) d::launch_sample(pk, n, bins, plan, d::identity_key{}, totals, nullptr, 0, e, meet, probe_finish<by_outcome_bits>{&meet->sum, walk, made, rule}, block_level, lines);
    if (tag == 11) d::launch_sample(pk, n, bins, plan, d::identity_key{}, totals, nullptr, 0, e, meet, probe_finish<by_selects>{&meet->sum, walk, made, rule}, block_level, lines);
    cudaGraph_t gr;
    cudaStreamEndCapture(s, &gr);
    cudaGraphExec_t x;
    if (cudaGraphInstantiate(&x, gr, 0) != cudaSuccess) { printf("instantiate failed\n"); return 1; }
    graphs.push_back(x);
  }
  std::vector<std::vector<double>> t(parts);
  for (int round = 0; round < 20; ++round)
    for (int p = 0; p < parts; ++p)
      for (int i = 0; i < 200; ++i) {
        auto a = std::chrono::steady_clock::now();
        cudaGraphLaunch(graphs[p], s);
        cudaStreamSynchronize(s);
        if (round > 0) t[p].push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
      }
  if (cudaGetLastError() != cudaSuccess) { printf("cuda error\n"); return 1; }
  for (int p : {4, 8, 9, 10, 11}) {
    cudaGraphLaunch(graphs[p], s);
    cudaStreamSynchronize(s);
    calm::strategy c;
    cudaMemcpy(&c, ws.data() + meet_bytes, sizeof c, cudaMemcpyDeviceToHost);
    printf("choice of %s: %s\n", names[p], calm::to_string(c));
  }
  for (int p = 0; p < parts; ++p) {
    std::sort(t[p].begin(), t[p].end());
    printf("%-14s median %.2f us  p10 %.2f  p90 %.2f\n", names[p], t[p][t[p].size() / 2], t[p][t[p].size() / 10], t[p][t[p].size() * 9 / 10]);
  }
  return 0;
}
