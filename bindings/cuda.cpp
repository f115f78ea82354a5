// minitensor._C.cuda: device queries and synchronization.
#include "bindings/bindings.h"
#include "core/cuda_runtime.h"

namespace mt::bindings {

int cuda_index(const py::object& device) {
  return device.is_none() ? cuda::current_device() : to_device(device, Device(DeviceType::CUDA)).index;
}

void bind_cuda(py::module_& m) {
  py::module_ c = m.def_submodule("cuda", "CUDA device queries");
  c.def("is_built", &cuda::is_built, "Whether minitensor was compiled with CUDA kernels");
  c.def("is_available", &cuda::is_available, "Whether CUDA tensors can be made here (built + a GPU)");
  c.def("device_count", &cuda::device_count);
  c.def("current_device", &cuda::current_device);
  c.def("synchronize", [](const py::object& device) {
    const int index = cuda_index(device);
    py::gil_scoped_release release;
    cuda::synchronize(index);
  }, py::arg("device") = py::none(), "Waits for all work on the device");
  c.def("memory_reserved", [](const py::object& device) {
    const int index = cuda_index(device);
    return cuda::pool_reserved_bytes(index);
  }, py::arg("device") = py::none(), "Bytes the library's memory pool holds on the device");
  c.def("empty_cache", [](const py::object& device) {
    const int index = cuda_index(device);
    py::gil_scoped_release release;
    cuda::empty_cache(index);
  }, py::arg("device") = py::none(),
     "Hands the memory pool's unused blocks back to the driver (after waiting for the device)");
}

}  // namespace mt::bindings
