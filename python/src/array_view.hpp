// SPDX-License-Identifier: Apache-2.0
// calm/python/src/array_view.hpp: a one-dimensional array handed over by DLPack (numpy, torch, cupy),
// read in place: its data pointer, length, element type and device, checked for what calm can take.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace calm_python {

// The DLPack ABI (dlpack.h, version 0.x: the layout every producer exports through __dlpack__()).
struct dl_device {
  std::int32_t type;  ///< 1 CPU, 2 CUDA, 3 CUDA host, 10 ROCm, 13 CUDA managed
  std::int32_t id;
};
struct dl_dtype {
  std::uint8_t code;  ///< 0 int, 1 uint, 2 float
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct dl_tensor {
  void* data;
  dl_device device;
  std::int32_t ndim;
  dl_dtype dtype;
  std::int64_t* shape;
  std::int64_t* strides;  ///< in elements; null: compact and row-major
  std::uint64_t byte_offset;
};
struct dl_managed_tensor {
  dl_tensor tensor;
  void* manager;
  void (*deleter)(dl_managed_tensor*);
};

/// Element types calm's Python module takes (keys: the integers; values and tables: all four).
enum class dtype { int32, int64, float32, float64 };

inline char const* name(dtype t) {
  switch (t) {
    case dtype::int32: return "int32";
    case dtype::int64: return "int64";
    case dtype::float32: return "float32";
    default: return "float64";
  }
}

/// Where an array lives, as DLPack names it.
enum class place { host, cuda, rocm };

inline char const* place_name(place p) { return p == place::host ? "the host (CPU)" : p == place::cuda ? "a CUDA device" : "a ROCm device"; }

/// A compact one- or two-dimensional array seen through a DLPack capsule, which the caller keeps
/// alive (the producer's capsule frees the tensor: it is read, never consumed).
struct array_view {
  void* data = nullptr;
  std::int64_t rows = 0;  ///< the length of dimension 0
  std::int64_t cols = 1;  ///< the length of dimension 1 (1 for a vector)
  dtype type = dtype::int32;
  place where = place::host;
  int device = 0;
};

/// Reads a capsule from __dlpack__(); throws TypeError (pybind11::type_error) or ValueError
/// (pybind11::value_error) where the array is not one calm can read in place: `what` names it.
inline array_view view_of(pybind11::capsule const& capsule, char const* what) {
  if (std::string(capsule.name() ? capsule.name() : "") != "dltensor")
    throw pybind11::type_error(std::string(what) + ": not an unused DLPack capsule");
  auto const* m = static_cast<dl_managed_tensor const*>(capsule.get_pointer());
  dl_tensor const& t = m->tensor;
  array_view v;
  if (t.ndim < 1 || t.ndim > 2) throw pybind11::value_error(std::string(what) + ": must have one or two dimensions, has " + std::to_string(t.ndim));
  if (t.dtype.lanes != 1) throw pybind11::type_error(std::string(what) + ": vector element types are not supported");
  if (t.dtype.code == 0 && t.dtype.bits == 32) v.type = dtype::int32;
  else if (t.dtype.code == 0 && t.dtype.bits == 64) v.type = dtype::int64;
  else if (t.dtype.code == 2 && t.dtype.bits == 32) v.type = dtype::float32;
  else if (t.dtype.code == 2 && t.dtype.bits == 64) v.type = dtype::float64;
  else
    throw pybind11::type_error(std::string(what) + ": dtype (code " + std::to_string(t.dtype.code) + ", " + std::to_string(t.dtype.bits) +
                               " bits) is not one of int32, int64, float32, float64");
  v.rows = t.shape[0];
  v.cols = t.ndim == 2 ? t.shape[1] : 1;
  if (t.strides != nullptr && v.rows * v.cols > 1) {  // compact row-major, or a length-1 dimension with any stride
    bool const row_ok = v.rows == 1 || t.strides[0] == v.cols;
    bool const col_ok = t.ndim == 1 || v.cols == 1 || t.strides[1] == 1;
    if (!row_ok || !col_ok) throw pybind11::value_error(std::string(what) + ": must be contiguous (call .contiguous() or numpy.ascontiguousarray first)");
  }
  switch (t.device.type) {
    case 1: case 3: v.where = place::host; break;
    case 2: case 13: v.where = place::cuda; break;
    case 10: v.where = place::rocm; break;
    default: throw pybind11::type_error(std::string(what) + ": DLPack device type " + std::to_string(t.device.type) + " is not supported");
  }
  v.device = t.device.id;
  v.data = static_cast<char*>(t.data) + t.byte_offset;
  return v;
}

}  // namespace calm_python
