// SPDX-License-Identifier: Apache-2.0
// Uses the installed calm: a histogram through the warp layer, checked against a sequential count.
#include <calm/calm.hpp>

#include <cstdio>
#include <vector>

int main() {
  std::size_t const n = 100003, bins = 37;
  std::vector<unsigned> keys(n), expect(bins, 0);
  for (std::size_t i = 0; i < n; ++i) expect[keys[i] = static_cast<unsigned>((i * 2654435761u) % bins)]++;
  calm::backend::device_buffer<unsigned> dkeys(keys), hist(bins);
  hist.fill_bytes(0);
  unsigned const* pk = dkeys.data();
  unsigned* ph = hist.data();
  calm::backend::for_each_index(static_cast<calm::index_t>(n), CALM_LAMBDA(auto const& w, auto i) {
    calm::atomic_update(w, calm::plus{}, calm::scope::device{}, ph + calm::load(w, pk, i), 1u);
  });
  calm::backend::synchronize();
  if (hist.download() != expect) {
    std::printf("consumer: wrong histogram\n");
    return 1;
  }
  std::printf("consumer: calm %s backend, histogram of %zu keys correct\n", calm::backend::backend_name, n);
  return 0;
}
