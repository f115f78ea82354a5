// minitensor._C._testing_*: hooks for the test suite only (leading underscore: not public API).
#include "bindings/bindings.h"
#include "core/cuda_runtime.h"
#include "core/errors.h"
#include "core/testing_cuda.h"
#include "ops/softmax/softmax.h"

namespace mt::bindings {

void bind_testing(py::module_& m) {
  m.def("_testing_cuda_error", [](const std::string& kind, const py::object& device) {
#ifdef MINITENSOR_WITH_CUDA
    MT_CHECK_VALUE(kind == "invalid_configuration" || kind == "illegal_address",
                   "_testing_cuda_error: unknown kind '", kind,
                   "'; expected 'invalid_configuration' or 'illegal_address'");
    const int index = cuda_index(device);
    py::gil_scoped_release release;
    if (kind == "invalid_configuration")
      cuda::testing::launch_invalid_configuration(index);
    else
      cuda::testing::launch_illegal_address(index);
#else
    (void)kind;
    (void)device;
    MT_THROW(CudaError, "CUDA is not available: minitensor was built without CUDA support, so no "
                        "CUDA error can be provoked");
#endif
  }, py::arg("kind"), py::arg("device") = py::none(),
     "Test hook: makes the CUDA runtime fail on purpose ('invalid_configuration': a launch with "
     "too many threads per block, not sticky; 'illegal_address': a kernel storing through an "
     "invalid pointer, sticky). Raises minitensor.CudaError.");

  // The C++ API's one kernel that writes into an output its caller supplies: tests check that it
  // refuses what every other write refuses (read-only memory, an expanded output).
  m.def("_testing_softmax_into", [](const Tensor& input, Tensor output, int64_t dim, bool log) {
    py::gil_scoped_release release;
    MT_DISPATCH_FLOATING_TYPES(input.dtype(), "_testing_softmax_into", [&] {
      log ? LogSoftmax<scalar_t>::Forward(input, output, dim) : Softmax<scalar_t>::Forward(input, output, dim);
    });
    return output;
  }, py::arg("input"), py::arg("output"), py::arg("dim"), py::arg("log") = false,
     "Test hook: mt::Softmax<T>::Forward(input, output, dim) (LogSoftmax with log) into `output`; returns it.");
}

}  // namespace mt::bindings
