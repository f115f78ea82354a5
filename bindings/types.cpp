// minitensor.dtype and minitensor.device.
#include "bindings/bindings.h"
#include "core/errors.h"

namespace mt::bindings {

Device to_device(const py::handle& obj, Device fallback) {
  if (obj.is_none()) return fallback;
  if (py::isinstance<Device>(obj)) return obj.cast<Device>();
  if (py::isinstance<py::str>(obj)) return Device::parse(obj.cast<std::string>());
  MT_THROW_TYPE("expected a device such as 'cpu', 'cuda:0' or minitensor.device, but got ",
                py::str(py::type::of(obj).attr("__name__")).cast<std::string>());
}

DType to_dtype(const py::handle& obj, DType fallback) {
  if (obj.is_none()) return fallback;
  if (py::isinstance<DType>(obj)) return obj.cast<DType>();
  MT_THROW_TYPE("expected a minitensor dtype such as minitensor.float32, but got ",
                py::repr(obj).cast<std::string>());
}

Shape to_shape(const py::args& args) {
  if (args.size() == 1 && py::isinstance<py::sequence>(args[0]) && !py::isinstance<py::str>(args[0]))
    return args[0].cast<Shape>();
  Shape shape;
  for (const auto& a : args) {
    // Python ints and what converts to one exactly (__index__: NumPy integer scalars), as torch.
    MT_CHECK_TYPE(py::isinstance<py::int_>(a) || (PyIndex_Check(a.ptr()) && !PyBool_Check(a.ptr())),
                  "shape entries must be integers, but got ", py::repr(a).cast<std::string>());
    shape.push_back(py::reinterpret_steal<py::int_>(PyNumber_Index(a.ptr())).cast<int64_t>());
  }
  return shape;
}

void bind_types(py::module_& m) {
  py::enum_<DType>(m, "dtype", "Element type of a Tensor")
      .value("float32", DType::Float32)
      .value("float64", DType::Float64)
      .value("float16", DType::Float16)
      .value("bfloat16", DType::BFloat16)
      .value("int64", DType::Int64)
      .value("bool", DType::Bool)
      .def_property_readonly("itemsize", [](DType d) { return itemsize(d); })
      .def_property_readonly("is_floating_point", [](DType d) { return is_floating_point(d); });

  py::class_<Device>(m, "device", "Where a tensor lives: device('cpu'), device('cuda:0'), device('cuda', 1)")
      .def(py::init([](const std::string& text) { return Device::parse(text); }), py::arg("type"))
      .def(py::init([](const std::string& type, int index) {
             MT_CHECK_VALUE(type == "cuda" || (type == "cpu" && index == 0),
                            "Invalid device: type '", type, "' with index ", index);
             return Device(type == "cuda" ? DeviceType::CUDA : DeviceType::CPU, index);
           }),
           py::arg("type"), py::arg("index"))
      .def_property_readonly("type", [](const Device& d) { return d.is_cpu() ? "cpu" : "cuda"; })
      .def_property_readonly("index", [](const Device& d) -> py::object {
        return d.is_cpu() ? py::object(py::none()) : py::object(py::int_(d.index));
      })
      .def("__str__", &Device::str)
      .def("__repr__", [](const Device& d) {
        return d.is_cpu() ? std::string("device(type='cpu')")
                          : "device(type='cuda', index=" + std::to_string(d.index) + ")";
      })
      .def("__eq__", [](const Device& d, const py::object& other) {
        if (py::isinstance<Device>(other)) return d == other.cast<Device>();
        if (py::isinstance<py::str>(other)) return d.str() == other.cast<std::string>() ||
                                                   (d.is_cpu() && other.cast<std::string>() == "cpu");
        return false;
      })
      .def("__hash__", [](const Device& d) { return std::hash<std::string>()(d.str()); });
}

}  // namespace mt::bindings
