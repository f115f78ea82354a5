// Shared pieces of the pybind11 layer. core/ and ops/ know nothing of Python; everything that
// turns Python objects into C++ ones (and back) lives in bindings/.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core/tensor.h"

namespace mt::bindings {

namespace py = pybind11;

// The parts of the module, one bind_<part>(py::module_&) each (defined in a file of bindings/),
// listed once: declared here and called in this order by module.cpp. The order matters: errors
// and types are registered before the functions whose signatures use them. `testing` holds
// test-only hooks (bindings/testing.cpp).
#define MT_BINDING_PARTS(X) \
  X(errors)                 \
  X(types)                  \
  X(tensor)                 \
  X(creation)               \
  X(ops)                    \
  X(cuda)                   \
  X(dlpack)                 \
  X(elementwise)            \
  X(reduce)                 \
  X(matmul)                 \
  X(creation_ops)           \
  X(indexing)               \
  X(ladder)                 \
  X(testing)

#define MT_DECLARE_BINDING(part) void bind_##part(py::module_& m);
MT_BINDING_PARTS(MT_DECLARE_BINDING)
#undef MT_DECLARE_BINDING

// Accepts "cuda:1", a minitensor.device, or None (-> `fallback`).
Device to_device(const py::handle& obj, Device fallback = Device());
// The CUDA device index an optional `device` argument names: None is the current device.
int cuda_index(const py::object& device);
// Accepts a minitensor dtype or None (-> `fallback`).
DType to_dtype(const py::handle& obj, DType fallback);
// (2, 3), [2, 3] or the varargs of reshape(2, 3) -> {2, 3}; entries as to_int64.
Shape to_shape(const py::args& args);
// Whether obj is an integer as torch takes one: int, bool or an __index__ object (NumPy integers),
// never a float.
bool is_integer_like(const py::handle& obj);
// obj (is_integer_like) as int64. Anything else is a TypeError naming `what`; an int beyond int64
// is an OverflowError with Python's own words ("int too big to convert"), as torch raises.
int64_t to_int64(const py::handle& obj, const char* what);

// full / full_like: integer fill values go through int64 (exact above 2^53), others through double.
Tensor full_from_python(const Shape& shape, const py::object& value, DType dtype, Device device);
// Tensor from nested lists, scalars, NumPy arrays or other tensors (a copy, like torch.tensor).
Tensor tensor_from_data(const py::handle& data, const py::handle& dtype, const py::handle& device);
// Zero-copy view of a NumPy array's memory; the array stays alive while the tensor does.
Tensor tensor_from_numpy(const py::array& array);
// Zero-copy NumPy view of a CPU tensor (which the array keeps alive).
py::array tensor_to_numpy(const Tensor& tensor, const py::object& owner);

}  // namespace mt::bindings
