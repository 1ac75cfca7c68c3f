// SPDX-License-Identifier: Apache-2.0
// calm/core/error.hpp: the errors calm reports. Bulk calls check arguments before launching and throw
// calm::error; where exceptions are off (-fno-exceptions) they print its message and abort, still before
// anything is launched. Device failures name the call that failed.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace calm {

enum class errc {
  ok = 0,
  invalid_argument,  // null pointer, mismatched extents, bad configuration
  out_of_range,      // a key or size outside what the call accepts
  unsupported,       // the backend or device cannot do what was asked
  backend_failure,   // a CUDA/HIP/OpenMP call failed
};

inline char const* to_string(errc e) {
  switch (e) {
    case errc::ok: return "ok";
    case errc::invalid_argument: return "invalid argument";
    case errc::out_of_range: return "out of range";
    case errc::unsupported: return "unsupported";
    case errc::backend_failure: return "backend failure";
  }
  return "unknown";
}

/// The exception every host-side calm call throws.
class error : public std::runtime_error {
 public:
  /// An error of kind `code`; what() is "calm: " and `what`.
  error(errc code, std::string const& what) : std::runtime_error(std::string("calm: ") + what), code_(code) {}
  /// The kind of error.
  errc code() const noexcept { return code_; }

 private:
  errc code_;
};

/// 1 where the compiler has exceptions on, 0 under -fno-exceptions (see raise_error).
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define CALM_EXCEPTIONS 1
#else
#define CALM_EXCEPTIONS 0
#endif

/// Report e: throw it, or where exceptions are off print what() to stderr and abort.
[[noreturn]] inline void raise_error(error const& e) {
#if CALM_EXCEPTIONS
  throw e;
#else
  std::fprintf(stderr, "%s\n", e.what());
  std::abort();
#endif
}

/// Raise calm::error(code, message) (raise_error) unless cond holds. Host code only. message: a string, or a
/// callable that returns one, called only on failure (checks on every launch then build no strings).
///
///   require(n >= 0, errc::invalid_argument, [&] { return "n = " + std::to_string(n) + " is negative"; });
template <class Message>
void require(bool cond, errc code, Message&& message) {
  if (cond) return;
  if constexpr (std::is_invocable<Message>::value) raise_error(error(code, std::string(message())));
  else raise_error(error(code, std::string(message)));
}

}  // namespace calm
