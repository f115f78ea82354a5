// Python data <-> Tensor. Type inference and the odd cases of Python input (ragged lists, huge
// ints, byte order) are handled in minitensor/_convert.py, which hands back one dense NumPy array;
// this file only moves bytes.
#include <cstring>

#include "bindings/bindings.h"
#include "core/errors.h"

namespace mt::bindings {

namespace {

DType dtype_from_name(const std::string& name) {
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int64, DType::Bool})
    if (name == dtype_name(d)) return d;
  MT_THROW_TYPE("unsupported dtype '", name, "'");
}

// Maps a NumPy dtype to ours, or throws TypeError naming what is supported.
DType dtype_from_numpy(const py::dtype& dt) {
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  if (kind == 'f' && size == 4) return DType::Float32;
  if (kind == 'f' && size == 8) return DType::Float64;
  if (kind == 'f' && size == 2) return DType::Float16;
  if (kind == 'i' && size == 8) return DType::Int64;
  if (kind == 'b') return DType::Bool;
  MT_THROW_TYPE("can't convert np.ndarray of type numpy.", py::str(dt).cast<std::string>(),
                ". The only supported types are: float64, float32, float16, int64 and bool.");
}

py::dtype numpy_dtype(DType dtype) {
  switch (dtype) {
    case DType::Float32: return py::dtype("float32");
    case DType::Float64: return py::dtype("float64");
    case DType::Float16: return py::dtype("float16");
    case DType::Int64: return py::dtype("int64");
    case DType::Bool: return py::dtype("bool");
    case DType::BFloat16: break;
  }
  MT_THROW_TYPE("Got unsupported ScalarType bfloat16: NumPy has no bfloat16; call .float() first");
}

}  // namespace

Tensor tensor_from_data(const py::handle& data, const py::handle& dtype_obj, const py::handle& device_obj) {
  if (py::isinstance<Tensor>(data)) {  // a copy that stays where the source is unless told
    const Tensor& src = data.cast<const Tensor&>();
    return src.to(to_dtype(dtype_obj, src.dtype())).to(to_device(device_obj, src.device())).clone();
  }
  const Device device = to_device(device_obj);
  py::object wanted = dtype_obj.is_none() ? py::object(py::none())
                                          : py::object(py::str(dtype_name(to_dtype(dtype_obj, DType::Float32))));
  py::tuple converted = py::module_::import("minitensor._convert").attr("as_host_array")(data, wanted);
  auto array = converted[0].cast<py::array>();
  const DType dtype = dtype_from_name(converted[1].cast<std::string>());
  Shape shape(array.shape(), array.shape() + array.ndim());
  if (dtype == DType::BFloat16) {  // NumPy has no bfloat16: the helper hands float32 to round here
    Tensor as_float = Tensor::empty(shape, DType::Float32, Device());
    // memcpy with a null pointer is UB even for 0 bytes, and empty tensors have no storage.
    if (array.nbytes() > 0)
      std::memcpy(as_float.data_ptr(), array.data(), static_cast<std::size_t>(array.nbytes()));
    return as_float.to(DType::BFloat16).to(device);
  }
  Tensor host = Tensor::empty(shape, dtype, Device());
  if (array.nbytes() > 0)  // empty: no storage (null data_ptr), and memcpy(nullptr, ..., 0) is UB
    std::memcpy(host.data_ptr(), array.data(), static_cast<std::size_t>(array.nbytes()));
  return host.to(device);
}

Tensor tensor_from_numpy(const py::array& array) {
  const DType dtype = dtype_from_numpy(array.dtype());
  MT_CHECK_VALUE(array.dtype().byteorder() != '>', "from_numpy: arrays in non-native byte order are not "
                 "supported; convert with arr.astype(arr.dtype.newbyteorder('='))");
  Shape shape(array.shape(), array.shape() + array.ndim());
  Shape strides(array.ndim());
  const auto item = static_cast<int64_t>(array.itemsize());
  for (py::ssize_t d = 0; d < array.ndim(); ++d) {
    const int64_t s = array.strides()[d];
    MT_CHECK_VALUE(s >= 0, "from_numpy: at least one stride in the given numpy array is negative; "
                   "copy it with arr.copy() first");
    MT_CHECK_VALUE(s % item == 0, "from_numpy: strides must be multiples of the element size");
    strides[d] = s / item;
  }
  // Keep the array alive while the storage is; dropping the reference needs the GIL.
  auto keep = new py::object(py::reinterpret_borrow<py::object>(array));
  // The bytes the view spans (array.nbytes counts only its elements: less, for a strided array).
  const auto nbytes = static_cast<std::size_t>(storage_extent(shape, strides, 0) * item);
  auto storage = std::make_shared<Storage>(const_cast<void*>(array.data()), nbytes,
                                           Device(), [keep] {
                                             py::gil_scoped_acquire gil;
                                             delete keep;
                                           },
                                           array.writeable());  // np.frombuffer(bytes), read-only mmap
  return Tensor(std::move(storage), shape, strides, 0, dtype);
}

py::array tensor_to_numpy(const Tensor& tensor, const py::object& owner) {
  MT_CHECK_TYPE(tensor.device().is_cpu(), "can't convert ", tensor.device().str(),
                " device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.");
  std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
  if (tensor.numel() == 0) return py::array(numpy_dtype(tensor.dtype()), shape);  // nothing to share
  std::vector<py::ssize_t> strides;
  for (int64_t s : tensor.strides()) strides.push_back(s * tensor.itemsize());
  py::array array(numpy_dtype(tensor.dtype()), shape, strides, tensor.data_ptr(), owner);
  // NumPy makes arrays over a foreign owner writeable; memory we were told is read-only stays so.
  if (!tensor.storage()->writable()) array.attr("flags").attr("writeable") = false;
  return array;
}

}  // namespace mt::bindings
