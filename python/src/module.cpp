// SPDX-License-Identifier: Apache-2.0
// calm/python/src/module.cpp: the extension module calm._calm: plans made from run-time names, run over
// arrays handed over by DLPack or the CUDA Array Interface; calm/__init__.py builds the user's functions on it.
#include <pybind11/pybind11.h>

#include <chrono>
#include <memory>
#include <string>

#include "plans.hpp"

namespace py = pybind11;

namespace calm_python {

place build_place() {
#if defined(CALM_BACKEND_CUDA)
  return place::cuda;
#elif defined(CALM_BACKEND_HIP)
  return place::rocm;
#else
  return place::host;
#endif
}

int current_device() {
  int d = 0;
#if defined(CALM_BACKEND_CUDA)
  CALM_CUDA_CHECK(cudaGetDevice(&d));
#elif defined(CALM_BACKEND_HIP)
  CALM_HIP_CHECK(hipGetDevice(&d));
#endif
  return d;
}

int device_of_pointer(void const* p) {
#if defined(CALM_BACKEND_CUDA)
  if (p == nullptr) return current_device();
  cudaPointerAttributes a{};
  CALM_CUDA_CHECK(cudaPointerGetAttributes(&a, p));
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? a.device : -1;
#else
  (void)p;
  return current_device();
#endif
}

void add_scatter_rows(py::module_& m);  // rows.cpp

namespace {

dtype dtype_named(std::string const& s) {
  if (s == "int32") return dtype::int32;
  if (s == "int64") return dtype::int64;
  if (s == "float32") return dtype::float32;
  if (s == "float64") return dtype::float64;
  throw py::type_error("calm: dtype " + s + " is not one of int32, int64, float32, float64");
}

reduction reduction_named(std::string const& s) {
  if (s == "sum") return reduction::sum;
  if (s == "max") return reduction::max;
  if (s == "min") return reduction::min;
  throw py::value_error("calm: reduce must be \"sum\", \"max\" or \"min\", not \"" + s + "\"");
}

/// A plan as Python holds it: its shape, the device it was made on, and the plan.
class python_plan {
 public:
  python_plan(std::string const& op, std::string const& key, std::string const& table, bool counts, std::int64_t n, std::int64_t bins, std::uintptr_t stream,
              bool measure) {
    spec_.op = reduction_named(op);
    spec_.key = dtype_named(key);
    spec_.table = dtype_named(table);
    spec_.counts = counts;
    spec_.n = n;
    spec_.bins = bins;
    spec_.stream = stream;
    spec_.measure = measure;
    if (spec_.key != dtype::int32 && spec_.key != dtype::int64) throw py::type_error("calm: keys must be int32 or int64, not " + key);
    if (counts && spec_.op != reduction::sum) throw py::value_error("calm: a histogram sums its counts");
    device_ = current_device();
    switch (spec_.table) {
      case dtype::int32: plan_ = make_plan_int32(spec_); break;
      case dtype::int64: plan_ = make_plan_int64(spec_); break;
      case dtype::float32: plan_ = make_plan_float32(spec_); break;
      default: plan_ = make_plan_float64(spec_); break;
    }
  }

  std::string run(py::object const& keys, py::object const& values, py::object const& table, bool wait) {
    array_view const k = checked(keys, "keys", spec_.key, spec_.n);
    array_view const t = checked(table, "out", spec_.table, spec_.bins);
    if (t.readonly) throw py::value_error("calm: out is read-only");
    void const* v = nullptr;
    if (!spec_.counts) {
      if (values.is_none()) throw py::value_error("calm: this plan scatters values; none were given");
      v = checked(values, "values", spec_.table, spec_.n).data;
    } else if (!values.is_none()) {
      throw py::value_error("calm: this plan counts keys; values were given");
    }
    py::gil_scoped_release unlocked;
    return plan_->run(k.data, v, t.data, wait);
  }

  /// Seconds per run of `repeats` runs from C++, the last one waited for: what a call costs without Python.
  double seconds_per_run(py::object const& keys, py::object const& values, py::object const& table, int repeats) {
    if (repeats < 1) throw py::value_error("calm: repeats must be positive");
    run(keys, values, table, true);
    void const* v = spec_.counts ? nullptr : view_of(values, "values").data;
    void const* k = view_of(keys, "keys").data;
    void* t = view_of(table, "out").data;
    py::gil_scoped_release unlocked;
    auto const start = std::chrono::steady_clock::now();
    for (int r = 0; r < repeats; ++r) plan_->run(k, v, t, r + 1 == repeats);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / repeats;
  }

  /// The plan's measuring as a dict (chosen, seconds, chosen_seconds, timed: [(strategy, keys, seconds)]), or None.
  py::object measured() const {
    calm::measurement const m = plan_->measured();
    if (m.chosen == calm::strategy::automatic) return py::none();
    py::list timed;
    for (int i = 0; i < m.count; ++i) timed.append(py::make_tuple(calm::to_string(m.timed[i].s), m.timed[i].items, m.timed[i].seconds));
    py::dict d;
    d["chosen"] = calm::to_string(m.chosen);
    d["seconds"] = m.seconds;
    d["chosen_seconds"] = m.chosen_seconds;
    d["timed"] = timed;
    return d;
  }

 private:
  array_view checked(py::handle c, char const* what, dtype type, std::int64_t length) const {
    std::string const who = std::string("calm: ") + what;
    array_view const a = view_of(c, who.c_str());
    if (a.where != build_place()) throw py::type_error(who + " is on " + place_name(a.where) + "; this calm module was built for " + place_name(build_place()));
    if (a.where != place::host && a.device != device_)
      throw py::value_error(who + " is on device " + std::to_string(a.device) + "; the plan was made on device " + std::to_string(device_));
    if (a.type != type) throw py::type_error(who + " has dtype " + std::string(name(a.type)) + "; the plan expects " + name(type));
    if (a.cols != 1 || a.rows != length)
      throw py::value_error(who + " has shape (" + std::to_string(a.rows) + (a.cols != 1 ? ", " + std::to_string(a.cols) : std::string(",")) +
                            "); the plan expects (" + std::to_string(length) + ",)");
    return a;
  }

  plan_spec spec_;
  int device_ = 0;
  std::unique_ptr<erased_plan> plan_;
};

}  // namespace
}  // namespace calm_python

PYBIND11_MODULE(_calm, m) {
  using calm_python::python_plan;
  m.doc() = "calm's compiled core: plans of bulk scatters over DLPack and CUDA Array Interface arrays (use the calm package's functions)";
  m.attr("backend") = calm_python::build_place() == calm_python::place::host ? "openmp" : calm_python::build_place() == calm_python::place::cuda ? "cuda" : "hip";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (calm::error const& e) {
      bool const bad_input = e.code() == calm::errc::invalid_argument || e.code() == calm::errc::out_of_range;
      PyErr_SetString(bad_input ? PyExc_ValueError : PyExc_RuntimeError, e.what());
    }
  });
  py::class_<python_plan>(m, "Plan")
      .def(py::init<std::string const&, std::string const&, std::string const&, bool, std::int64_t, std::int64_t, std::uintptr_t, bool>(), py::arg("op"),
           py::arg("key_dtype"), py::arg("table_dtype"), py::arg("counts"), py::arg("n"), py::arg("bins"), py::arg("stream") = 0,
           py::arg("measure") = false)
      .def("measured", &python_plan::measured, "What the plan's measuring found (a dict), or None before it measured.")
      .def("run", &python_plan::run, py::arg("keys"), py::arg("values"), py::arg("out"), py::arg("wait") = false,
           "Updates out in place from keys (and values) on the plan's stream; returns the strategy that ran "
           "(\"automatic\" where the device chose and wait is False).")
      .def("seconds_per_run", &python_plan::seconds_per_run, py::arg("keys"), py::arg("values"), py::arg("out"), py::arg("repeats"),
           "Runs the plan `repeats` times from C++ (the last run waited for) and returns the seconds per run: a call's cost without Python.");
  m.def("current_device", &calm_python::current_device, "The device a plan made now is made on (0 on the host).");
  calm_python::add_scatter_rows(m);
}
