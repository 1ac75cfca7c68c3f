// SPDX-License-Identifier: Apache-2.0
// calm/core/launch_key.hpp: the bytes that identify one bulk call's launches (pointers, sizes, kernel
// parameters and their types), by which a backend that records launches (CUDA graphs) finds them again.
#pragma once

#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>

namespace calm {

/// Everything a recorded launch depends on, appended field by field: two calls with equal keys
/// launch the same kernels with the same parameters. Fields are trivially copyable values; a struct
/// with padding may differ in its padding, which costs a missed reuse, never a wrong one. An empty
/// type (identity_key) holds no value and adds nothing: its one byte is not copied with it, so it
/// differed from call to call, and a call repeated with the same arguments missed its recorded graph.
///
/// The bytes sit in the key itself, not on the heap: a repeated call builds its key before it launches
/// anything, so the key's cost is the call's. A bulk call's key of about 370 bytes (the carried tree walk
/// most of them) took 0.54 us with its hash as a std::string appended field by field, and 0.10 us so
/// (GCC 12 -O3 on this project's 2-core CI machine: perf/probe_launch_key.cpp). A key that outgrows
/// `capacity` is not complete(): it names no call, and the backend then records nothing for it.
class launch_key {
 public:
  static constexpr std::size_t capacity = 1536;  ///< a walk of 47 nodes and every field: about 1,000 bytes

  /// Starts the key with the identity of the types Ts (one per instantiation of the caller).
  template <class... Ts>
  static launch_key of() {
    launch_key k;
    k.add(&tag<Ts...>);
    return k;
  }
  /// value's bytes appended (nothing for an empty type); the key is no longer complete() where they do not fit.
  template <class T>
  launch_key& add(T const& value) {
    static_assert(std::is_trivially_copyable<T>::value, "launch_key: fields must be trivially copyable");
    if constexpr (!std::is_empty<T>::value) {
      if (size_ + sizeof(T) > capacity) {
        complete_ = false;
        return *this;
      }
      std::memcpy(bytes_ + size_, &value, sizeof(T));
      size_ += sizeof(T);
    }
    return *this;
  }
  /// The key's bytes, valid while the key lives.
  std::string_view view() const { return {bytes_, size_}; }
  /// The same, copied.
  std::string bytes() const { return std::string(view()); }
  /// A hash of the bytes.
  std::size_t hash() const { return std::hash<std::string_view>{}(view()); }
  /// False where a field did not fit: the key then names no call.
  bool complete() const { return complete_; }

 private:
  template <class... Ts>
  static constexpr char tag = 0;
  char bytes_[capacity];
  std::size_t size_ = 0;
  bool complete_ = true;
};

}  // namespace calm
