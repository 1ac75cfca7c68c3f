// SPDX-License-Identifier: Apache-2.0
// calm/perf/experiments/probe_launch_key.cpp: a stand-alone host probe (not part of the library or its build) of what a
// repeated automatic call spends on the host before it launches its recorded graph: the walk carried to the
// device (walk_known, make_walk, reachable) and the launch key with its hash, for hist_u32 into 300,000
// entries at 2^24 keys on the hopper tree. The key is timed two ways in one process: calm::launch_key (its
// bytes in the key) and the std::string appended field by field that it replaced. Medians of 5 rounds.
// Results: perf/results/host-2026-12-02-launch-key.md.
//
//   g++ -std=c++17 -O3 -fopenmp -I. perf/probe_launch_key.cpp -o probe && ./probe
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "calm.hpp"

using namespace calm;          // tree_walk, scatter_shape, family_tree, walk_known, make_walk
using namespace calm::detail;  // sample_plan

/// The key as it was before: a std::string, 512 bytes reserved, each field appended.
struct string_key {
  std::string bytes;
  string_key() { bytes.reserve(512); }
  template <class T>
  string_key& add(T const& v) {
    if constexpr (!std::is_empty<T>::value) {
      char b[sizeof(T)];
      std::memcpy(b, &v, sizeof(T));
      bytes.append(b, sizeof(T));
    }
    return *this;
  }
};

/// The fields bulk_scatter's make_key adds, and launch_recorded's three, in that order.
template <class Key>
void fill(Key& key, std::vector<std::uint32_t> const& keys, tree_walk const& walk, unsigned reach) {
  key.add(keys.data()).add(static_cast<std::uint32_t const*>(nullptr)).add(static_cast<calm::index_t const*>(nullptr));
  key.add(calm::index_t(1) << 24).add(keys.data()).add(calm::index_t(300000)).add(static_cast<calm::strategy*>(nullptr));
  key.add(sample_plan{64, 262144, 256}).add(reach).add(walk.size);
  key.add(-1.0f).add(4).add(calm::index_t(32));
  for (int i = 0; i < walk.size; ++i)
    key.add(walk.nodes[i].threshold).add(walk.nodes[i].test).add(walk.nodes[i].left).add(walk.nodes[i].right).add(walk.nodes[i].leaf);
  key.add(0).add(static_cast<void*>(nullptr)).add(std::size_t(64));
}

template <class F>
double ns_per_call(F&& f) {
  constexpr int calls = 200000;
  std::vector<double> rounds;
  for (int r = 0; r < 5; ++r) {
    auto const t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    rounds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / calls * 1e9);
  }
  std::nth_element(rounds.begin(), rounds.begin() + 2, rounds.end());
  return rounds[2];
}

int main() {
  scatter_shape shape;
  shape.bins = 300000, shape.items = calm::index_t(1) << 24, shape.value_bytes = 4, shape.counting = true, shape.fits_block = false;
  tree_view const tree = family_tree(calm::device_family::nvidia_gpu);
  std::vector<std::uint32_t> keys(16);
  volatile std::size_t sink = 0;
  tree_walk walk;
  unsigned reach = 0, reads = 0;
  double const walk_ns = ns_per_call([&] {
    int const start = walk_known(tree, shape);
    make_walk(tree, shape, start, [](calm::strategy s) { return s; }, walk);
    reach = walk.reachable(&reads);
    sink = sink + reach + reads;
  });
  std::size_t size = 0;
  double const key_ns = ns_per_call([&] {
    calm::launch_key k = calm::launch_key::of<calm::plus, std::uint32_t, float, std::uint32_t>();
    fill(k, keys, walk, reach);
    size = k.view().size();
    sink = sink + k.hash();
  });
  double const string_ns = ns_per_call([&] {
    string_key k;
    k.add(&sink);
    fill(k, keys, walk, reach);
    sink = sink + std::hash<std::string>{}(k.bytes);
  });
  std::printf("walk carried to the device (%d nodes): %.0f ns; key of %zu bytes and its hash: launch_key %.0f ns, std::string %.0f ns\n",
              walk.size, walk_ns, size, key_ns, string_ns);
  return 0;
}
