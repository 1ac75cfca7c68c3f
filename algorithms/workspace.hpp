// calm/algorithms/workspace.hpp: the scratch device memory of one bulk call, released when the call
// returns or throws, and the check that every index of an array lies inside its table.
#pragma once

#include <cstdint>
#include <string>

#include "../core/error.hpp"
#include "../core/exec.hpp"
#include "key_map.hpp"
#include "privatize.hpp"

namespace calm {
namespace detail {

/// Device memory from ex.allocate, released (stream-ordered) when it goes out of scope.
template <class Exec>
class workspace {
 public:
  workspace(Exec const& ex, std::size_t bytes) : ex_(ex), mem_(static_cast<unsigned char*>(ex.allocate(bytes))) {}
  workspace(workspace const&) = delete;
  workspace& operator=(workspace const&) = delete;
  ~workspace() { ex_.release(mem_); }
  /// The bytes at `offset` as an array of T (offset a multiple of alignof(T)).
  template <class T>
  T* at(std::size_t offset) const {
    return reinterpret_cast<T*>(mem_ + offset);
  }

 private:
  Exec ex_;
  unsigned char* mem_;
};

/// Adds the number of keys[0, n) that key_map sends outside [0, bins) to *outside.
template <class K, class KeyMap>
struct count_outside_program {
  K const* keys;
  index_t n, bins;
  KeyMap key_map;
  std::uint64_t* outside;
  template <class Block>
  CALM_HD void operator()(Block const& blk) const {
    std::uint64_t* const out = outside;
    stream_items<1>(blk, keys, same_value<int>{0}, n, [&](auto const& w, auto const&, auto const& k, auto const&) {
      auto const key = map_keys(w, key_map, k);
      int const count = popc(w, ballot(w, map([b = bins](index_t x) { return x < 0 || x >= b; }, key)));
      if (count > 0)
        when(w, elect_leader(w), [&](auto const& l) { atomic_update(l, plus{}, scope::device{}, out, static_cast<std::uint64_t>(count)); });
    });
  }
};

/// Launches count_outside_program over keys[0, n) (n > 0), adding to the device counter *outside.
template <class K, class KeyMap, class Exec>
void launch_count_outside(K const* keys, index_t n, index_t bins, KeyMap const& key_map, std::uint64_t* outside, Exec const& ex) {
  index_t const tiles = (n + tile_items<1>(512) - 1) / tile_items<1>(512);
  ex.for_each_resident_block(tiles, 512, 0, count_outside_program<K, KeyMap>{keys, n, bins, key_map, outside});
}

/// Throws errc::out_of_range, naming who and what, if any of keys[0, n) lies outside [0, bins): one
/// pass over the keys on the device, then a wait for its count. Nothing else is launched.
template <class K, class Exec>
void require_inside(char const* who, char const* what, K const* keys, index_t n, index_t bins, Exec const& ex) {
  if (n == 0) return;
  workspace<Exec> ws(ex, sizeof(std::uint64_t));
  std::uint64_t* const counter = ws.template at<std::uint64_t>(0);
  ex.fill(counter, 0, sizeof(std::uint64_t));
  launch_count_outside(keys, n, bins, identity_key{}, counter, ex);
  std::uint64_t outside = 0;
  ex.to_host(&outside, counter, sizeof outside);
  require(outside == 0, errc::out_of_range,
          std::string(who) + ": " + std::to_string(outside) + " of " + std::to_string(n) + " " + what + " lie outside [0, " +
              std::to_string(bins) + "); nothing was written");
}

}  // namespace detail
}  // namespace calm
