// SPDX-License-Identifier: Apache-2.0
// calm/python/src/plans.hpp: calm's plans behind one interface for the Python module: a plan for each
// (op, key type, table type, counts or values) the module compiles, made from run-time names.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <calm/calm.hpp>
#include "array_view.hpp"

namespace calm_python {

/// What a table entry becomes: sum (a count where no values are given), max or min.
enum class reduction { sum, max, min };

/// The shape a plan is made for; `stream`: the CUDA/HIP stream its work goes to (0: the default).
struct plan_spec {
  reduction op = reduction::sum;
  dtype key = dtype::int64;
  dtype table = dtype::int64;
  bool counts = false;  ///< a histogram (+1 per key, no values)
  std::int64_t n = 0, bins = 0;
  std::uintptr_t stream = 0;
  bool measure = false;  ///< calm::plan_mode::measure: the first run times the candidates
};

/// A plan of any compiled shape: run reads keys (and values) and updates the table in place.
class erased_plan {
 public:
  virtual ~erased_plan() = default;
  /// Runs on the plan's stream; wait: until the table is final. Returns the strategy's name
  /// ("automatic" where the device chose and the run did not wait).
  virtual std::string run(void const* keys, void const* values, void* table, bool wait) = 0;
  /// What the plan's measuring found (chosen automatic: nothing measured).
  virtual calm::measurement measured() const = 0;
};

/// The build's execution policy on `stream` (ignored on the host).
inline calm::default_exec exec_on(std::uintptr_t stream) {
#if defined(CALM_BACKEND_CUDA)
  return calm::on_stream(reinterpret_cast<cudaStream_t>(stream));
#elif defined(CALM_BACKEND_HIP)
  return calm::on_stream(reinterpret_cast<hipStream_t>(stream));
#else
  (void)stream;
  return calm::default_exec{};
#endif
}

/// The place arrays must have for this build's plans, and the device they must be on.
place build_place();
int current_device();

template <class Op, class K, class T, class Values>
class typed_plan final : public erased_plan {
 public:
  typed_plan(plan_spec const& s) : plan_(made(s)) {}
  std::string run(void const* keys, void const* values, void* table, bool wait) override {
    auto const* k = static_cast<K const*>(keys);
    T* t = static_cast<T*>(table);
    Values v = make_values(values);
    index_t const n = plan_.items(), bins = plan_.bins();
    return calm::to_string(wait ? plan_.run(k, v, n, t, bins) : plan_.run_async(k, v, n, t, bins));
  }
  calm::measurement measured() const override { return plan_.measured(); }

 private:
  using index_t = calm::index_t;
  using plan = calm::scatter_plan<Op, K, T, Values>;
  static plan made(plan_spec const& s) {
    if (s.measure) return plan(Op{}, s.n, s.bins, calm::plan_mode::measure, calm::scatter_options{}, exec_on(s.stream));
    return plan(Op{}, s.n, s.bins, calm::scatter_options{}, exec_on(s.stream));
  }
  static Values make_values(void const* values) {
    if constexpr (std::is_same<Values, T const*>::value) return static_cast<T const*>(values);
    else return calm::constant(T(1));
  }
  plan plan_;
};

/// The plans whose table holds T (one translation unit each: plans_<T>.cpp).
template <class T>
std::unique_ptr<erased_plan> make_plan_for(plan_spec const& s) {
  auto with_key = [&](auto key) -> std::unique_ptr<erased_plan> {
    using K = decltype(key);
    if (s.counts) return std::make_unique<typed_plan<calm::plus, K, T, calm::same_value<T>>>(s);
    switch (s.op) {
      case reduction::sum: return std::make_unique<typed_plan<calm::plus, K, T, T const*>>(s);
      case reduction::max: return std::make_unique<typed_plan<calm::max, K, T, T const*>>(s);
      default: return std::make_unique<typed_plan<calm::min, K, T, T const*>>(s);
    }
  };
  if (s.key == dtype::int32) return with_key(std::int32_t{});
  return with_key(std::int64_t{});
}

std::unique_ptr<erased_plan> make_plan_int32(plan_spec const& s);
std::unique_ptr<erased_plan> make_plan_int64(plan_spec const& s);
std::unique_ptr<erased_plan> make_plan_float32(plan_spec const& s);
std::unique_ptr<erased_plan> make_plan_float64(plan_spec const& s);

}  // namespace calm_python
