// minitensor.Tensor: metadata, views, conversions, NumPy interop. Python-side sugar (repr,
// indexing, tolist) is in minitensor/_tensor.py.
#include "bindings/bindings.h"
#include "core/cuda_runtime.h"
#include "core/errors.h"
#include "ops/softmax/softmax.h"

namespace mt::bindings {

namespace {

using release_gil = py::call_guard<py::gil_scoped_release>;

py::tuple as_tuple(const Shape& v) {
  py::tuple t(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) t[i] = py::int_(v[i]);
  return t;
}

// t.to("cuda"), t.to(mt.float64), t.to("cuda", mt.float16), t.to(device=..., dtype=...)
Tensor tensor_to(const Tensor& self, const py::args& args, const py::kwargs& kwargs) {
  py::object device = py::none(), dtype = py::none();
  for (const auto& a : args) {
    if (py::isinstance<DType>(a)) dtype = py::reinterpret_borrow<py::object>(a);
    else device = py::reinterpret_borrow<py::object>(a);
  }
  if (kwargs.contains("device")) device = kwargs["device"];
  if (kwargs.contains("dtype")) dtype = kwargs["dtype"];
  const Device target = to_device(device, self.device());
  const DType type = to_dtype(dtype, self.dtype());
  py::gil_scoped_release release;
  // Convert on the smaller side of a transfer: narrowing before a copy moves fewer bytes.
  if (itemsize(type) <= self.itemsize()) return self.to(type).to(target);
  return self.to(target).to(type);
}

}  // namespace

void bind_tensor(py::module_& m) {
  py::class_<Tensor>(m, "Tensor", py::dynamic_attr(), py::buffer_protocol(),
                     "An n-dimensional array on the CPU or a CUDA device")
      .def(py::init(&tensor_from_data), py::arg("data"), py::arg("dtype") = py::none(),
           py::arg("device") = py::none())
      .def_property_readonly("shape", [](const Tensor& t) { return as_tuple(t.shape()); })
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("device", &Tensor::device)
      .def_property_readonly("ndim", &Tensor::dim)
      .def_property_readonly("is_cuda", [](const Tensor& t) { return t.device().is_cuda(); })
      .def_property_readonly("itemsize", &Tensor::itemsize)
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("__len__", [](const Tensor& t) {
        MT_CHECK_TYPE(t.dim() > 0, "len() of a 0-d tensor");
        return t.shape()[0];
      })
      .def("size", [](const Tensor& t, const py::object& d) -> py::object {
        if (d.is_none()) return as_tuple(t.shape());
        return py::int_(t.size(d.cast<int64_t>()));
      }, py::arg("dim") = py::none())
      .def("stride", [](const Tensor& t, const py::object& d) -> py::object {
        if (d.is_none()) return as_tuple(t.strides());
        return py::int_(t.stride(d.cast<int64_t>()));
      }, py::arg("dim") = py::none())
      .def("storage_offset", &Tensor::offset)
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); })
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("contiguous", &Tensor::contiguous, release_gil())
      .def("clone", &Tensor::clone, release_gil())
      .def("reshape", [](const Tensor& t, const py::args& shape) { return t.reshape(to_shape(shape)); })
      .def("view", [](const Tensor& t, const py::args& shape) { return t.view(to_shape(shape)); })
      .def("transpose", &Tensor::transpose, py::arg("dim0"), py::arg("dim1"))
      .def("permute", [](const Tensor& t, const py::args& dims) { return t.permute(to_shape(dims)); })
      .def("select", &Tensor::select, py::arg("dim"), py::arg("index"))
      .def("_slice", &Tensor::slice)
      .def("unsqueeze", &Tensor::unsqueeze, py::arg("dim"))
      .def("squeeze", [](const Tensor& t, const py::object& d) {
        return d.is_none() ? t.squeeze() : t.squeeze(d.cast<int64_t>());
      }, py::arg("dim") = py::none())
      .def("to", &tensor_to)
      .def("cpu", [](const Tensor& t) { return t.to(Device()); }, release_gil())
      .def("cuda", [](const Tensor& t, const py::object& index) {
        const int i = index.is_none() ? (cuda::is_available() ? cuda::current_device() : 0) : index.cast<int>();
        py::gil_scoped_release release;
        return t.to(Device(DeviceType::CUDA, i));
      }, py::arg("device") = py::none())
      .def("float", [](const Tensor& t) { return t.to(DType::Float32); }, release_gil())
      .def("double", [](const Tensor& t) { return t.to(DType::Float64); }, release_gil())
      .def("half", [](const Tensor& t) { return t.to(DType::Float16); }, release_gil())
      .def("bfloat16", [](const Tensor& t) { return t.to(DType::BFloat16); }, release_gil())
      .def("long", [](const Tensor& t) { return t.to(DType::Int64); }, release_gil())
      .def("bool", [](const Tensor& t) { return t.to(DType::Bool); }, release_gil())
      .def_property_readonly("_version", [](const Tensor& t) { return t.storage()->version(); },
                             "How many in-place writes this tensor's memory has seen (through any view)")
      // t.data = other: this Python object now shows other's memory, shape, dtype and device
      // (torch's escape hatch for swapping a parameter's values without a new object).
      .def("_is_alias_of", [](const Tensor& t, const Tensor& other) { return t.storage() == other.storage(); },
           py::arg("other"), "Whether both tensors view the same memory")
      // Other Tensor objects (views, aliases, DLPack exports) hold the same memory.
      .def("_shares_memory_with_others", [](const Tensor& t) { return t.storage().use_count() > 1; })
      .def("_set_data", [](Tensor& self, const Tensor& other) { self = other; }, py::arg("other"))
      // t.data: t's bytes under a Storage (so a version counter) of its own, as torch's .data: writes
      // through it do not count as changes to the tensors autograd saved. It keeps t's Storage alive.
      .def("_alias_with_own_version", [](const Tensor& t) {
        std::shared_ptr<Storage> owner = t.storage();
        auto alias = std::make_shared<Storage>(owner->data(), owner->nbytes(), owner->device(), [owner] {});
        return Tensor(std::move(alias), t.shape(), t.strides(), t.offset(), t.dtype());
      })
      .def("softmax", &softmax, py::arg("dim"), release_gil())
      .def("log_softmax", &log_softmax, py::arg("dim"), release_gil())
      .def("numpy", [](const py::object& self) { return tensor_to_numpy(self.cast<const Tensor&>(), self); })
      .def("__array__", [](const py::object& self, const py::object& dtype, const py::object& copy) {
        py::array a = tensor_to_numpy(self.cast<const Tensor&>(), self);
        if (!dtype.is_none()) a = a.attr("astype")(dtype);
        if (!copy.is_none() && copy.cast<bool>()) a = a.attr("copy")();
        return a;
      }, py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def_buffer([](const Tensor& t) {
        MT_CHECK_TYPE(t.device().is_cpu(), "only CPU tensors expose the buffer protocol; call .cpu() first");
        static const char* formats[] = {"f", "d", "e", "", "q", "?"};
        const char* format = formats[static_cast<int>(t.dtype())];
        MT_CHECK_TYPE(format[0] != '\0', "bfloat16 tensors have no buffer format; call .float() first");
        std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end()), strides;
        for (int64_t s : t.strides()) strides.push_back(s * t.itemsize());
        return py::buffer_info(t.data_ptr(), t.itemsize(), format, t.dim(), shape, strides);
      });
}

}  // namespace mt::bindings
