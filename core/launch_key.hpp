// calm/core/launch_key.hpp: the bytes that identify one bulk call's launches (pointers, sizes, kernel
// parameters and their types), by which a backend that records launches (CUDA graphs) finds them again.
#pragma once

#include <cstring>
#include <string>
#include <type_traits>

namespace calm {

/// Everything a recorded launch depends on, appended field by field: two calls with equal keys
/// launch the same kernels with the same parameters. Fields are trivially copyable values; a struct
/// with padding may differ in its padding, which costs a missed reuse, never a wrong one. An empty
/// type (identity_key) holds no value and adds nothing: its one byte is not copied with it, so it
/// differed from call to call, and a call repeated with the same arguments missed its recorded graph.
class launch_key {
 public:
  /// Starts the key with the identity of the types Ts (one per instantiation of the caller).
  template <class... Ts>
  static launch_key of() {
    launch_key k;
    k.bytes_.reserve(512);  // a bulk call's key: about 400 bytes, the carried tree walk most of them
    k.add(&tag<Ts...>);
    return k;
  }
  template <class T>
  launch_key& add(T const& value) {
    static_assert(std::is_trivially_copyable<T>::value, "launch_key: fields must be trivially copyable");
    if constexpr (!std::is_empty<T>::value) {
      char bytes[sizeof(T)];
      std::memcpy(bytes, &value, sizeof(T));
      bytes_.append(bytes, sizeof(T));
    }
    return *this;
  }
  std::string const& bytes() const { return bytes_; }

 private:
  template <class... Ts>
  static constexpr char tag = 0;
  std::string bytes_;
};

}  // namespace calm
