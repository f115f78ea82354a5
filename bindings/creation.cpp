// Factory functions: zeros, ones, full, empty, randn, rand, manual_seed, from_numpy.
#include "bindings/bindings.h"

namespace mt::bindings {

Tensor full_from_python(const Shape& shape, const py::object& value, DType dtype, Device device) {
  if (is_integer_like(value) && !py::isinstance<py::bool_>(value))
    return full_int(shape, to_int64(value, "fill_value"), dtype, device);
  return full(shape, value.cast<double>(), dtype, device);
}

void bind_creation(py::module_& m) {
  // zeros(2, 3), zeros((2, 3)), zeros([2, 3], dtype=..., device=...)
  auto factory = [&m](const char* name, Tensor (*make)(const Shape&, DType, Device), const char* doc) {
    m.def(name, [make](const py::args& size, const py::object& dtype, const py::object& device) {
      return make(to_shape(size), to_dtype(dtype, DType::Float32), to_device(device));
    }, py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(), doc);
  };
  factory("zeros", &zeros, "A tensor of zeros");
  factory("ones", &ones, "A tensor of ones");
  factory("randn", &randn, "Samples of the standard normal distribution (seed with manual_seed)");
  factory("rand", &rand, "Samples of the uniform distribution on [0, 1) (seed with manual_seed)");
  factory("empty", [](const Shape& s, DType d, Device dev) { return Tensor::empty(s, d, dev); },
          "An uninitialized tensor");
  m.def("full", [](const py::object& size, const py::object& value, const py::object& dtype,
                   const py::object& device) {
    return full_from_python(to_shape(py::make_tuple(size)), value, to_dtype(dtype, DType::Float32), to_device(device));
  }, py::arg("size"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none(),
        py::arg("device") = py::none(), "A tensor filled with fill_value");
  m.def("manual_seed", &manual_seed, py::arg("seed"), "Seeds the generator behind randn and rand");
  m.def("from_numpy", &tensor_from_numpy, py::arg("array"),
        "A CPU tensor sharing memory with a NumPy array (kept alive by the tensor)");
}

}  // namespace mt::bindings
