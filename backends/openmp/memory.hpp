// SPDX-License-Identifier: Apache-2.0
// calm/backends/openmp/memory.hpp: "device" memory on the host is ordinary 64-byte aligned memory.
// device_buffer has the same interface on every backend, so tests and benchmarks are written once.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "../../core/error.hpp"
#include "launch.hpp"

namespace calm {
namespace openmp {

template <class T>
class device_buffer {
  static_assert(std::is_trivially_copyable<T>::value, "device_buffer holds trivially copyable values");

 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t n) : n_(n), mem_(detail::aligned_buffer(n * sizeof(T))) {}
  explicit device_buffer(std::vector<T> const& host) : device_buffer(host.size()) { upload(host); }

  T* data() { return static_cast<T*>(mem_.get()); }
  T const* data() const { return static_cast<T const*>(mem_.get()); }
  std::size_t size() const { return n_; }

  void upload(std::vector<T> const& host) {
    require(host.size() == n_, errc::invalid_argument,
            [&] { return "device_buffer::upload: " + std::to_string(host.size()) + " values into a buffer of " + std::to_string(n_); });
    if (n_) std::memcpy(data(), host.data(), n_ * sizeof(T));
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    if (n_) std::memcpy(host.data(), data(), n_ * sizeof(T));
    return host;
  }
  /// Every byte set to `byte` (0 for zero, 0xff to poison).
  void fill_bytes(int byte) {
    if (n_) std::memset(data(), byte, n_ * sizeof(T));
  }

 private:
  std::size_t n_ = 0;
  std::unique_ptr<void, detail::free_deleter> mem_;
};

/// Wait for the device: host launches are synchronous.
inline void synchronize() {}

/// A short description of the device, for benchmark and test logs.
inline std::string device_name() {
  return "host (OpenMP, warp of " + std::to_string(CALM_HOST_WARP_SIZE) + " lanes)";
}

}  // namespace openmp
}  // namespace calm
