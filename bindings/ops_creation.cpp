// arange, *_like factories, one_hot, cat, and the Tensor.expand view.
#include <cmath>

#include "bindings/bindings.h"
#include "core/broadcast.h"
#include "ops/creation/creation_ops.h"

namespace mt::bindings {

void bind_creation_ops(py::module_& m) {
  // arange(end) or arange(start, end[, step]); ints give int64, any float gives float32.
  m.def("arange", [](const py::object& a, const py::object& b, const py::object& step, const py::object& dtype,
                     const py::object& device) {
    const bool one = b.is_none();
    const py::object start = one ? py::int_(0) : a, end = one ? a : b;
    const bool ints = is_integer_like(start) && is_integer_like(end) && is_integer_like(step);
    const DType d = to_dtype(dtype, ints ? DType::Int64 : DType::Float32);
    const Device dev = to_device(device);
    if (ints) {  // exact in int64, whatever the output dtype (torch computes integer ranges in integers)
      const int64_t s = to_int64(start, "arange start"), e = to_int64(end, "arange end"),
                    st = to_int64(step, "arange step");
      py::gil_scoped_release release;
      return arange_int(s, e, st, d, dev);
    }
    const double s = start.cast<double>(), e = end.cast<double>(), st = step.cast<double>();
    py::gil_scoped_release release;
    return arange(s, e, st, d, dev);
  }, py::arg("start"), py::arg("end") = py::none(), py::arg("step") = 1, py::kw_only(),
     py::arg("dtype") = py::none(), py::arg("device") = py::none(), "Values from start to end (exclusive) by step");

  auto like = [&m](const char* name, double value, const char* doc) {
    m.def(name, [value](const Tensor& x, const py::object& dtype, const py::object& device) {
      return full(x.shape(), value, to_dtype(dtype, x.dtype()), to_device(device, x.device()));
    }, py::arg("input"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(), doc);
  };
  like("zeros_like", 0.0, "Zeros of input's shape, dtype and device");
  like("ones_like", 1.0, "Ones of input's shape, dtype and device");
  m.def("full_like", [](const Tensor& x, const py::object& value, const py::object& dtype, const py::object& device) {
    return full_from_python(x.shape(), value, to_dtype(dtype, x.dtype()), to_device(device, x.device()));
  }, py::arg("input"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none(),
     py::arg("device") = py::none(), "fill_value everywhere, of input's shape, dtype and device");

  m.def("one_hot", &one_hot, py::arg("labels"), py::arg("num_classes") = -1,
        py::call_guard<py::gil_scoped_release>(), "int64 one-hot encoding along a new last dim");
  m.def("cat", &cat, py::arg("tensors"), py::arg("dim") = 0, py::call_guard<py::gil_scoped_release>(),
        "Concatenates tensors along dim");

  auto tensor = py::type::of<Tensor>();
  tensor.attr("expand") = py::cpp_function(
      [](const Tensor& self, const py::args& sizes) { return expand(self, to_shape(sizes)); },
      py::is_method(tensor), "A view repeating size-1 dims with stride 0 (-1 keeps a size)");
}

}  // namespace mt::bindings
