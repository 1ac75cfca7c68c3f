// SPDX-License-Identifier: Apache-2.0
// calm/algorithms/bulk/workspace.hpp: the scratch device memory of one bulk call, released when the call
// returns or throws, and the check that every index of an array lies inside its table.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "../../core/error.hpp"
#include "../../core/exec.hpp"
#include "key_map.hpp"
#include "privatize.hpp"
#include "thread_slices.hpp"

namespace calm {
namespace detail {

/// Device memory from ex.allocate, released (stream-ordered) when it goes out of scope.
template <class Exec>
class workspace {
 public:
  workspace(Exec const& ex, std::size_t bytes) : ex_(ex), bytes_(bytes), mem_(static_cast<unsigned char*>(ex.allocate(bytes))) {}
  workspace(workspace const&) = delete;
  workspace& operator=(workspace const&) = delete;
  ~workspace() { ex_.release(mem_, bytes_); }
  /// The bytes at `offset` as an array of T (offset a multiple of alignof(T)).
  template <class T>
  T* at(std::size_t offset) const {
    return reinterpret_cast<T*>(mem_ + offset);
  }

 private:
  Exec ex_;
  std::size_t bytes_;
  unsigned char* mem_;
};

/// Adds the number of keys[0, n) that key_map sends outside [0, bins) to *outside. PerThread: a block
/// is a CPU thread (Exec::thread_tables) and counts its slice of the keys in a scalar loop.
template <class K, class KeyMap, bool PerThread = false>
struct count_outside_program {
  K const* keys;
  index_t n, bins;
  KeyMap key_map;
  std::uint64_t* outside;
  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    std::uint64_t* const out = outside;
    if constexpr (PerThread) {
      index_t begin, end;
      slice_range(n, blk.count(), blk.index(), begin, end);
      std::uint64_t count = 0;
      for (index_t i = begin; i < end; ++i) {
        index_t const k = key_map(keys[i]);
        count += (k < 0) | (k >= bins);
      }
      if (count > 0)
        blk.for_each_warp([&](auto const& w, auto) {
          when(w, elect_leader(w), [&](auto const& l) { atomic_update(l, plus{}, scope::device{}, out, count); });
        });
    } else {
      stream_items<1>(blk, keys, same_value<int>{0}, n, [&](auto const& w, auto const&, auto const& k, auto const&) {
        auto const key = map_keys(w, key_map, k);
        int const count = popc(w, ballot(w, map([b = bins](index_t x) { return x < 0 || x >= b; }, key)));
        if (count > 0)
          when(w, elect_leader(w), [&](auto const& l) { atomic_update(l, plus{}, scope::device{}, out, static_cast<std::uint64_t>(count)); });
      });
    }
  }
};

/// Launches count_outside_program over keys[0, n) (n > 0), adding to the device counter *outside.
template <class K, class KeyMap, class Exec>
void launch_count_outside(K const* keys, index_t n, index_t bins, KeyMap const& key_map, std::uint64_t* outside, Exec const& ex) {
  if constexpr (Exec::thread_tables) {
    index_t const blocks = std::max<index_t>(1, std::min<index_t>(ex.resident_blocks_hint(), n / thread_min_items));
    ex.for_each_block(blocks, 1, 0, count_outside_program<K, KeyMap, true>{keys, n, bins, key_map, outside});
  } else {
    index_t const tiles = (n + tile_items<1>(512) - 1) / tile_items<1>(512);
    ex.for_each_resident_block(tiles, 512, 0, count_outside_program<K, KeyMap>{keys, n, bins, key_map, outside});
  }
}

/// One array of n indices that must lie in [0, bins), named `what` in the error.
template <class K>
struct index_array {
  char const* what;
  K const* keys;
  index_t bins;
};

/// Throws errc::out_of_range, naming who and the first array at fault, if any index of the arrays
/// (n each, at most 4) lies outside its [0, bins): one pass over each array on the device, then a
/// single wait for all the counts. Nothing else is launched.
template <class K, class Exec>
void require_inside(char const* who, std::initializer_list<index_array<K>> arrays, index_t n, Exec const& ex) {
  if (n == 0 || arrays.size() == 0) return;
  constexpr std::size_t most = 4;
  require(arrays.size() <= most, errc::invalid_argument, [&] { return std::string(who) + ": at most 4 index arrays per check"; });
  workspace<Exec> ws(ex, most * sizeof(std::uint64_t));
  std::uint64_t* const counters = ws.template at<std::uint64_t>(0);
  ex.fill(counters, 0, arrays.size() * sizeof(std::uint64_t));
  std::size_t i = 0;
  for (auto const& a : arrays) launch_count_outside(a.keys, n, a.bins, identity_key{}, counters + i++, ex);
  std::uint64_t outside[most] = {};
  ex.to_host(outside, counters, arrays.size() * sizeof(std::uint64_t));
  i = 0;
  for (auto const& a : arrays) {
    require(outside[i] == 0, errc::out_of_range,
            [&] { return std::string(who) + ": " + std::to_string(outside[i]) + " of " + std::to_string(n) + " " + a.what + " lie outside [0, " +
                std::to_string(a.bins) + "); nothing was written"; });
    ++i;
  }
}

/// The check of one array: throws errc::out_of_range if any of keys[0, n) lies outside [0, bins).
template <class K, class Exec>
void require_inside(char const* who, char const* what, K const* keys, index_t n, index_t bins, Exec const& ex) {
  require_inside(who, {index_array<K>{what, keys, bins}}, n, ex);
}

}  // namespace detail
}  // namespace calm
