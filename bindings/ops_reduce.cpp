// Reductions. `dim` arguments take None (all dims), an int, or a list/tuple of ints.
#include "bindings/bindings.h"
#include "ops/reduce/reduce.h"

namespace mt::bindings {

namespace {

DimList to_dims(const py::object& dims) {
  if (dims.is_none()) return std::nullopt;
  if (py::isinstance<py::int_>(dims)) return std::vector<int64_t>{dims.cast<int64_t>()};
  return dims.cast<std::vector<int64_t>>();
}

template <Tensor (*Op)(const Tensor&, const DimList&, bool)>
void def_reduction(py::module_& m, const char* name, const char* doc) {
  m.def(name, [](const Tensor& x, const py::object& dims, bool keepdim) {
    const DimList d = to_dims(dims);
    py::gil_scoped_release release;
    return Op(x, d, keepdim);
  }, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, doc);
}

}  // namespace

void bind_reduce(py::module_& m) {
  using release_gil = py::call_guard<py::gil_scoped_release>;
  def_reduction<&sum>(m, "sum", "Sum over dim(s) (all when None); bool/int64 sum to int64");
  def_reduction<&mean>(m, "mean", "Mean over dim(s) (all when None); floating inputs only");
  def_reduction<&amax>(m, "amax", "Max over dim(s) (all when None), NaN-propagating");
  m.def("max", [](const Tensor& x, int64_t dim, bool keepdim) { return max(x, dim, keepdim); },
        py::arg("input"), py::arg("dim"), py::arg("keepdim") = false, release_gil(),
        "(values, int64 indices) of the max along dim");
  m.def("argmax", &argmax, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, release_gil(),
        "int64 index of the max along dim (of the flattened input when None)");
  m.def("sum_to_shape", [](const Tensor& x, const py::args& shape) { return sum_to_shape(x, to_shape(shape)); },
        py::arg("input"), "Sums broadcast dims away so the result has `shape` (the gradient of a broadcast)");
}

}  // namespace mt::bindings
