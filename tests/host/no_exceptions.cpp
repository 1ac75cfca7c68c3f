// SPDX-License-Identifier: Apache-2.0
// calm in a program built with -fno-exceptions: a histogram and a float scatter against a sequential
// count; with the argument "bad", a call with null keys, which must print calm's message and abort
// (SIGABRT, caught here to say so and exit: the test's PASS_REGULAR_EXPRESSION reads both lines).
#include <calm/calm.hpp>

#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

extern "C" void on_abort(int) {
  char const said[] = "no_exceptions: aborted\n";
  (void)!write(2, said, sizeof(said) - 1);
  std::_Exit(3);
}

int main(int argc, char** argv) {
  std::vector<std::uint32_t> hist(300, 7);
  if (argc > 1 && std::strcmp(argv[1], "bad") == 0) {
    std::signal(SIGABRT, on_abort);
    calm::histogram(static_cast<std::uint32_t const*>(nullptr), 10, hist.data(), 300);
    std::puts("no_exceptions: a call with null keys returned");
    return 1;
  }
  std::mt19937 g(42);
  std::uniform_int_distribution<std::uint32_t> key(0, 309);  // some keys outside the table
  std::vector<std::uint32_t> keys(100003);
  for (auto& k : keys) k = key(g);
  std::vector<float> vals(keys.size(), 0.5f), table(300, 1.0f);
  std::vector<std::uint32_t> want_hist(300, 7);
  std::vector<float> want_table(300, 1.0f);
  for (auto k : keys)
    if (k < 300) ++want_hist[k], want_table[k] += 0.5f;
  calm::histogram(keys.data(), static_cast<calm::index_t>(keys.size()), hist.data(), 300);
  calm::scatter(calm::plus{}, keys.data(), static_cast<float const*>(vals.data()), static_cast<calm::index_t>(keys.size()), table.data(), 300);
  for (std::size_t i = 0; i < 300; ++i)
    if (hist[i] != want_hist[i] || table[i] != want_table[i]) {  // sums of halves below 2^24 are exact
      std::printf("no_exceptions: entry %zu: %u and %g, expected %u and %g\n", i, hist[i], table[i], want_hist[i], want_table[i]);
      return 1;
    }
  std::puts("no_exceptions: histogram and scatter right");
  return 0;
}
