// SPDX-License-Identifier: Apache-2.0
// Uses the installed calm with Kokkos: a histogram through calm::kokkos::ScatterView in a parallel_for,
// checked against a sequential count.
#include <calm/kokkos.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  int const n = 100003, bins = 37;
  Kokkos::View<int*> keys("keys", n), hist("hist", bins);
  auto const hkeys = Kokkos::create_mirror_view(keys);
  std::vector<int> expect(bins, 0);
  for (int i = 0; i < n; ++i) expect[hkeys(i) = static_cast<int>((static_cast<unsigned>(i) * 2654435761u) % bins)]++;
  Kokkos::deep_copy(keys, hkeys);
  calm::kokkos::ScatterView<int*> sv(hist);
  Kokkos::parallel_for(n, KOKKOS_LAMBDA(int i) { sv.access()(keys(i)) += 1; });
  calm::kokkos::contribute(hist, sv);
  auto const h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, hist);
  for (int b = 0; b < bins; ++b)
    if (h(b) != expect[b]) {
      std::printf("kokkos_consumer: bin %d holds %d, expected %d\n", b, h(b), expect[b]);
      return 1;
    }
  std::printf("kokkos_consumer: calm::kokkos::ScatterView histogram of %d keys correct\n", n);
  return 0;
}
