// Operators: one line per op. The GIL is released while kernels run.
#include "bindings/bindings.h"
#include "ops/softmax/softmax.h"

namespace mt::bindings {

void bind_ops(py::module_& m) {
  using release_gil = py::call_guard<py::gil_scoped_release>;
  m.def("softmax", &softmax, py::arg("input"), py::arg("dim"), release_gil(),
        "exp(x - max) / sum(exp(x - max)) along dim");
  m.def("log_softmax", &log_softmax, py::arg("input"), py::arg("dim"), release_gil(),
        "x - max - log(sum(exp(x - max))) along dim");
  m.def("_softmax_backward", &softmax_backward, py::arg("output"), py::arg("grad_output"), py::arg("dim"),
        py::arg("log"), release_gil(), "Gradient of softmax (log=False) or log_softmax (log=True)");
}

}  // namespace mt::bindings
