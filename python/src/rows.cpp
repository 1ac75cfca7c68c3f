// SPDX-License-Identifier: Apache-2.0
// calm/python/src/rows.cpp: calm._calm.scatter_rows, calm::scatter_rows over DLPack or CUDA Array Interface
// arrays: keys (n,), values (n, d) and a table (rows, d) of one dtype, checked for place, device, dtype and
// shape before anything runs.
#include <pybind11/pybind11.h>

#include <string>

#include "plans.hpp"

namespace py = pybind11;

namespace calm_python {
namespace {

/// calm::scatter_rows for the run-time names: T the table's type, then the key type and the op.
template <class T>
void rows_into(std::string const& op, dtype key, array_view const& k, array_view const& v, array_view const& t, std::uintptr_t stream) {
  auto with_key = [&](auto key_type) {
    using K = decltype(key_type);
    auto const* keys = static_cast<K const*>(k.data);
    auto const* values = static_cast<T const*>(v.data);
    T* table = static_cast<T*>(t.data);
    int const d = static_cast<int>(t.cols);
    py::gil_scoped_release unlocked;
    calm::rows_options const opt;
    if (op == "sum") calm::scatter_rows(calm::plus{}, keys, values, k.rows, d, table, t.rows, opt, exec_on(stream));
    else if (op == "max") calm::scatter_rows(calm::max{}, keys, values, k.rows, d, table, t.rows, opt, exec_on(stream));
    else calm::scatter_rows(calm::min{}, keys, values, k.rows, d, table, t.rows, opt, exec_on(stream));
  };
  if (key == dtype::int32) with_key(std::int32_t{});
  else with_key(std::int64_t{});
}

/// The view of one argument, on this build's place and on `device` (-1: any).
array_view argument(py::handle c, char const* what, int device) {
  array_view const a = view_of(c, what);
  if (a.where != build_place()) throw py::type_error(std::string(what) + " is on " + place_name(a.where) + "; this calm module was built for " + place_name(build_place()));
  if (device >= 0 && a.where != place::host && a.device != device)
    throw py::value_error(std::string(what) + " is on device " + std::to_string(a.device) + ", the keys on device " + std::to_string(device));
  return a;
}

/// out[keys[i], :] = op(out[keys[i], :], values[i, :]): keys (n,) int32 or int64, values (n, d), out (rows, d) of
/// values' dtype. Keys outside [0, rows) are skipped. On `stream` (CUDA/HIP), without a wait.
void scatter_rows(std::string const& op, py::object const& keys, py::object const& values, py::object const& out, std::uintptr_t stream) {
  if (op != "sum" && op != "max" && op != "min") throw py::value_error("calm: reduce must be \"sum\", \"max\" or \"min\", not \"" + op + "\"");
  array_view const k = argument(keys, "calm: index", -1);
  array_view const v = argument(values, "calm: src", k.device);
  array_view const t = argument(out, "calm: out", k.device);
  if (t.readonly) throw py::value_error("calm: out is read-only");
  if (k.type != dtype::int32 && k.type != dtype::int64) throw py::type_error(std::string("calm: index must be int32 or int64, not ") + name(k.type));
  if (k.cols != 1) throw py::value_error("calm: index must be one-dimensional");
  if (v.type != t.type) throw py::type_error(std::string("calm: src has dtype ") + name(v.type) + ", out " + name(t.type));
  if (v.rows != k.rows || v.cols != t.cols)
    throw py::value_error("calm: src has shape (" + std::to_string(v.rows) + ", " + std::to_string(v.cols) + "); index has " + std::to_string(k.rows) +
                          " entries and out " + std::to_string(t.cols) + " columns");
  switch (t.type) {
    case dtype::int32: rows_into<std::int32_t>(op, k.type, k, v, t, stream); break;
    case dtype::int64: rows_into<std::int64_t>(op, k.type, k, v, t, stream); break;
    case dtype::float32: rows_into<float>(op, k.type, k, v, t, stream); break;
    default: rows_into<double>(op, k.type, k, v, t, stream); break;
  }
}

}  // namespace

void add_scatter_rows(py::module_& m) {
  m.def("scatter_rows", &scatter_rows, py::arg("op"), py::arg("keys"), py::arg("values"), py::arg("out"), py::arg("stream") = 0,
        "out[keys[i], :] = op(out[keys[i], :], values[i, :]) in place (keys outside out's rows skipped), on `stream`.");
}

}  // namespace calm_python
