// Matrix products.
#include "bindings/bindings.h"
#include "ops/matmul/matmul.h"

namespace mt::bindings {

void bind_matmul(py::module_& m) {
  m.def("matmul", &matmul, py::arg("input"), py::arg("other"), py::call_guard<py::gil_scoped_release>(),
        "torch.matmul: dot, matrix-vector, matrix and batched products with broadcast batch dims");
}

}  // namespace mt::bindings
