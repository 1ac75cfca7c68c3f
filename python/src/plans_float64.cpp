// SPDX-License-Identifier: Apache-2.0
// calm/python/src/plans_float64.cpp: the module's plans into tables of float64 (one unit per table type, so
// that a parallel build compiles them side by side).
#include "plans.hpp"

namespace calm_python {
std::unique_ptr<erased_plan> make_plan_float64(plan_spec const& s) { return make_plan_for<double>(s); }
}  // namespace calm_python
