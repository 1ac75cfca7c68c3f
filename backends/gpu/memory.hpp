// SPDX-License-Identifier: Apache-2.0
// calm/backends/gpu/memory.hpp: device memory of the CUDA and HIP backends, written once against the
// backend's Runtime (allocate, copy, fill); the same interface as the host backend's device_buffer.
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../core/error.hpp"

namespace calm {
namespace gpu {

template <class T, class Runtime>
class device_buffer {
  static_assert(std::is_trivially_copyable<T>::value, "device_buffer holds trivially copyable values");

 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t n) : n_(n), p_(n ? static_cast<T*>(Runtime::allocate(n * sizeof(T))) : nullptr) {}
  explicit device_buffer(std::vector<T> const& host) : device_buffer(host.size()) { upload(host); }
  device_buffer(device_buffer&& o) noexcept : n_(o.n_), p_(o.p_) { o.n_ = 0, o.p_ = nullptr; }
  device_buffer& operator=(device_buffer&& o) noexcept {
    std::swap(n_, o.n_);
    std::swap(p_, o.p_);
    return *this;
  }
  device_buffer(device_buffer const&) = delete;
  device_buffer& operator=(device_buffer const&) = delete;
  ~device_buffer() { Runtime::release(p_); }  // never throws

  T* data() { return p_; }
  T const* data() const { return p_; }
  std::size_t size() const { return n_; }

  void upload(std::vector<T> const& host) {
    require(host.size() == n_, errc::invalid_argument,
            [&] { return "device_buffer::upload: " + std::to_string(host.size()) + " values into a buffer of " + std::to_string(n_); });
    if (n_) Runtime::to_device(p_, host.data(), n_ * sizeof(T));
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    if (n_) Runtime::to_host(host.data(), p_, n_ * sizeof(T));
    return host;
  }
  /// Every byte set to `byte` (0 for zero, 0xff to poison).
  void fill_bytes(int byte) {
    if (n_) Runtime::fill(p_, byte, n_ * sizeof(T));
  }

 private:
  std::size_t n_ = 0;
  T* p_ = nullptr;
};

}  // namespace gpu
}  // namespace calm
