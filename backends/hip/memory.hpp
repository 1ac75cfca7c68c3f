// calm/backends/hip/memory.hpp: device memory on AMD GPUs (hipMalloc; never managed memory),
// with the same interface as the other backends' device_buffer.
#pragma once

#include <string>
#include <vector>

#include "../../core/error.hpp"
#include "check.hpp"

namespace calm {
namespace hip {

template <class T>
class device_buffer {
  static_assert(std::is_trivially_copyable<T>::value, "device_buffer holds trivially copyable values");

 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t n) : n_(n) {
    if (n_) CALM_HIP_CHECK(hipMalloc(&p_, n_ * sizeof(T)));
  }
  explicit device_buffer(std::vector<T> const& host) : device_buffer(host.size()) { upload(host); }
  device_buffer(device_buffer&& o) noexcept : n_(o.n_), p_(o.p_) { o.n_ = 0; o.p_ = nullptr; }
  device_buffer& operator=(device_buffer&& o) noexcept {
    std::swap(n_, o.n_);
    std::swap(p_, o.p_);
    return *this;
  }
  device_buffer(device_buffer const&) = delete;
  device_buffer& operator=(device_buffer const&) = delete;
  ~device_buffer() {
    if (p_) (void)hipFree(p_);  // no throw from a destructor
  }

  T* data() { return p_; }
  T const* data() const { return p_; }
  std::size_t size() const { return n_; }

  void upload(std::vector<T> const& host) {
    require(host.size() == n_, errc::invalid_argument,
            "device_buffer::upload: " + std::to_string(host.size()) + " values into a buffer of " + std::to_string(n_));
    if (n_) CALM_HIP_CHECK(hipMemcpy(p_, host.data(), n_ * sizeof(T), hipMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    if (n_) CALM_HIP_CHECK(hipMemcpy(host.data(), p_, n_ * sizeof(T), hipMemcpyDeviceToHost));
    return host;
  }
  void fill_bytes(int byte) {
    if (n_) CALM_HIP_CHECK(hipMemset(p_, byte, n_ * sizeof(T)));
  }

 private:
  std::size_t n_ = 0;
  T* p_ = nullptr;
};

/// Wait for the device and surface any error of the kernels launched before.
inline void synchronize() { CALM_HIP_CHECK(hipDeviceSynchronize()); }

inline std::string device_name() {
  int dev = 0;
  hipDeviceProp_t p{};
  CALM_HIP_CHECK(hipGetDevice(&dev));
  CALM_HIP_CHECK(hipGetDeviceProperties(&p, dev));
  return std::string(p.name) + " (" + std::string(p.gcnArchName) + ", " +
         std::to_string(p.multiProcessorCount) + " CUs)";
}

}  // namespace hip
}  // namespace calm
