// The softmax kernel ladder (ops/softmax/ladder): list the variants, run one by name.
#include "bindings/bindings.h"
#include "ops/softmax/ladder/ladder.h"

namespace mt::bindings {

void bind_ladder(py::module_& m) {
  m.def("softmax_impls", [](const py::object& device) {
    py::dict out;  // insertion-ordered: "auto" first, then the ladder from slowest idea up
    for (const SoftmaxImplInfo& info : softmax_impls(to_device(device)))
      out[py::str(info.name)] = py::str(info.description);
    return out;
  }, py::arg("device"), "{name: description} of the softmax variants for a device ('auto' first)");
  m.def("_softmax_impl", &softmax_with_impl, py::arg("input"), py::arg("dim"), py::arg("log"), py::arg("impl"),
        py::call_guard<py::gil_scoped_release>(),
        "softmax (log=False) or log_softmax (log=True) by the named ladder variant");
}

}  // namespace mt::bindings
