// SPDX-License-Identifier: Apache-2.0
// calm/python/src/array_view.hpp: an array handed over by DLPack (numpy, torch, cupy) or by the CUDA Array
// Interface (__cuda_array_interface__: numba, pycuda, ...), read in place: its data pointer, shape, element
// type and device, checked for what calm can take.
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
  bool readonly = false;  ///< the producer marks it read-only (the CUDA Array Interface's data[1])
};

/// The CUDA device that holds p, -1 where p is not device memory, the current device for null (this
/// build's runtime; 0 on a host build, which takes no such array).
int device_of_pointer(void const* p);

/// Reads a capsule from __dlpack__(); throws TypeError (pybind11::type_error) or ValueError
/// (pybind11::value_error) where the array is not one calm can read in place: `what` names it.
inline array_view view_of_dlpack(pybind11::capsule const& capsule, char const* what) {
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

/// Whether strides (in bytes, or None) describe a compact row-major array of rows x cols of `item` bytes.
inline bool compact_strides(pybind11::handle strides, std::int64_t rows, std::int64_t cols, std::int64_t item, int ndim) {
  if (strides.is_none() || rows * cols <= 1) return true;
  auto const s = strides.cast<pybind11::tuple>();
  if (static_cast<int>(s.size()) != ndim) return false;
  bool const row_ok = rows == 1 || s[0].cast<std::int64_t>() == cols * item;
  bool const col_ok = ndim == 1 || cols == 1 || s[1].cast<std::int64_t>() == item;
  return row_ok && col_ok;
}

/// Reads a __cuda_array_interface__ dict (versions 0 to 3: shape, typestr, data, strides, mask): an array
/// in CUDA device memory. Throws as view_of_dlpack does; a mask is not supported.
inline array_view view_of_interface(pybind11::dict const& d, char const* what) {
  std::string const who(what);
  for (char const* key : {"shape", "typestr", "data"})
    if (!d.contains(key)) throw pybind11::type_error(who + ": __cuda_array_interface__ has no \"" + key + "\"");
  auto const shape = d["shape"].cast<pybind11::tuple>();
  int const ndim = static_cast<int>(shape.size());
  if (ndim < 1 || ndim > 2) throw pybind11::value_error(who + ": must have one or two dimensions, has " + std::to_string(ndim));
  std::string const type = d["typestr"].cast<std::string>();
  array_view v;
  if (type.size() < 3 || type[0] == '>') throw pybind11::type_error(who + ": typestr \"" + type + "\" is not a little-endian number");
  std::string const code = type.substr(1);
  if (code == "i4") v.type = dtype::int32;
  else if (code == "i8") v.type = dtype::int64;
  else if (code == "f4") v.type = dtype::float32;
  else if (code == "f8") v.type = dtype::float64;
  else throw pybind11::type_error(who + ": typestr \"" + type + "\" is not one of int32, int64, float32, float64");
  v.rows = shape[0].cast<std::int64_t>();
  v.cols = ndim == 2 ? shape[1].cast<std::int64_t>() : 1;
  std::int64_t const item = v.type == dtype::int32 || v.type == dtype::float32 ? 4 : 8;
  if (!compact_strides(d.contains("strides") ? pybind11::handle(d["strides"]) : pybind11::handle(pybind11::none()), v.rows, v.cols, item, ndim))
    throw pybind11::value_error(who + ": must be contiguous (row-major, without gaps)");
  if (d.contains("mask") && !d["mask"].is_none()) throw pybind11::value_error(who + ": masked arrays are not supported");
  auto const data = d["data"].cast<pybind11::tuple>();
  v.data = reinterpret_cast<void*>(data[0].cast<std::uintptr_t>());
  v.readonly = data.size() > 1 && data[1].cast<bool>();
  v.where = place::cuda;
  v.device = device_of_pointer(v.data);
  return v;
}

/// A DLPack capsule or a __cuda_array_interface__ dict, as calm/__init__.py hands arrays over.
inline array_view view_of(pybind11::handle array, char const* what) {
  if (pybind11::isinstance<pybind11::capsule>(array)) return view_of_dlpack(pybind11::reinterpret_borrow<pybind11::capsule>(array), what);
  if (pybind11::isinstance<pybind11::dict>(array)) return view_of_interface(pybind11::reinterpret_borrow<pybind11::dict>(array), what);
  throw pybind11::type_error(std::string(what) + ": expected a DLPack capsule or a __cuda_array_interface__ dict");
}

}  // namespace calm_python
