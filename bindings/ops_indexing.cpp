// index_select and index_put_: the gather / scatter behind advanced indexing (minitensor/_indexing.py).
#include "bindings/bindings.h"
#include "ops/indexing/indexing.h"

namespace mt::bindings {

void bind_indexing(py::module_& m) {
  using release_gil = py::call_guard<py::gil_scoped_release>;
  m.def("index_select", &index_select, py::arg("input"), py::arg("dim"), py::arg("index"), release_gil(),
        "The slices of input at `index` (int64, 1-D) along dim");
  m.def("_index_put_", [](const py::object& self, int64_t dim, const Tensor& index, const Tensor& src, bool accumulate) {
    {
      py::gil_scoped_release release;
      index_put_(self.cast<const Tensor&>(), dim, index, src, accumulate);
    }
    return self;
  }, py::arg("self"), py::arg("dim"), py::arg("index"), py::arg("source"), py::arg("accumulate") = false,
     "self[.., index[k], ..] = source[.., k, ..] along dim (+= with accumulate) in place; returns self");
}

}  // namespace mt::bindings
