// SPDX-License-Identifier: Apache-2.0
// calm/python/src/plans_int32.cpp: the module's plans into tables of int32 (one unit per table type, so
// that a parallel build compiles them side by side).
#include "plans.hpp"

namespace calm_python {
std::unique_ptr<erased_plan> make_plan_int32(plan_spec const& s) { return make_plan_for<std::int32_t>(s); }
}  // namespace calm_python
