// SPDX-License-Identifier: Apache-2.0
// A plan held by a static object that is made before calm's host workspace cache first serves anything, so that
// at exit the plan is destroyed after the cache's own static storage: the plan's memory must still go back
// cleanly (the test passes where the program exits 0). Also a histogram checked against a sequential count.
#include <calm/calm.hpp>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

namespace {
using plan = calm::histogram_plan<std::uint32_t, std::uint32_t>;
std::unique_ptr<plan> kept;  // made before main, empty
}  // namespace

int main() {
  std::vector<std::uint32_t> keys(1 << 16), hist(1 << 20, 0), want(1 << 20, 0);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<std::uint32_t>(i * 2654435761u % (1u << 20));
  for (auto k : keys) ++want[k];
  kept = std::make_unique<plan>(static_cast<calm::index_t>(keys.size()), calm::index_t(1) << 20);
  kept->run(keys.data(), static_cast<calm::index_t>(keys.size()), hist.data(), calm::index_t(1) << 20);
  if (hist != want) {
    std::puts("exit_order: wrong counts");
    return 1;
  }
  return 0;
}
