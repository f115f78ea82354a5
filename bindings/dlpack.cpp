// Zero-copy exchange with torch, cupy, numpy, jax...: Tensor.__dlpack__ / __dlpack_device__
// (producer) and from_dlpack (consumer), in both the versioned and the legacy capsule formats.
#include <cstring>

#include "bindings/bindings.h"
#include "bindings/dlpack_abi.h"
#include "core/checked_math.h"
#include "core/cuda_runtime.h"
#include "core/errors.h"

#ifdef MINITENSOR_WITH_CUDA
#include "core/cuda_check.h"
#endif

namespace mt::bindings {

namespace {

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kLegacyUsedName = "used_dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kVersionedUsedName = "used_dltensor_versioned";

dlpack::DataType to_dl_dtype(DType d) {
  switch (d) {
    case DType::Float32: return {dlpack::kFloat, 32, 1};
    case DType::Float64: return {dlpack::kFloat, 64, 1};
    case DType::Float16: return {dlpack::kFloat, 16, 1};
    case DType::BFloat16: return {dlpack::kBfloat, 16, 1};
    case DType::Int64: return {dlpack::kInt, 64, 1};
    case DType::Bool: return {dlpack::kBool, 8, 1};
  }
  MT_THROW_TYPE("unknown dtype");
}

DType from_dl_dtype(dlpack::DataType t) {
  MT_CHECK_TYPE(t.lanes == 1, "from_dlpack: vector element types (lanes=", t.lanes, ") are not supported");
  if (t.code == dlpack::kFloat && t.bits == 32) return DType::Float32;
  if (t.code == dlpack::kFloat && t.bits == 64) return DType::Float64;
  if (t.code == dlpack::kFloat && t.bits == 16) return DType::Float16;
  if (t.code == dlpack::kBfloat && t.bits == 16) return DType::BFloat16;
  if (t.code == dlpack::kInt && t.bits == 64) return DType::Int64;
  if (t.code == dlpack::kBool && t.bits == 8) return DType::Bool;
  MT_THROW_TYPE("from_dlpack: unsupported element type (code ", int(t.code), ", ", int(t.bits),
                " bits); supported: float32, float64, float16, bfloat16, int64, bool");
}

// What a producer capsule owns: a reference to our tensor (so the storage lives) and the
// shape/stride arrays the DLTensor points at.
template <typename Managed>
struct Export {
  Managed managed;
  Tensor tensor;
  Shape shape, strides;
};

template <typename Managed>
Managed* make_managed(const Tensor& t) {
  auto* ctx = new Export<Managed>{};
  ctx->tensor = t;
  ctx->shape = t.shape();
  ctx->strides = t.strides();
  Managed& m = ctx->managed;
  dlpack::Tensor& dl = m.dl_tensor;
  dl.data = t.storage()->data();
  dl.byte_offset = static_cast<uint64_t>(t.offset() * t.itemsize());
  if (!dl.data) dl.byte_offset = 0;  // empty tensors have no allocation to offset into
  dl.device = {t.device().is_cuda() ? dlpack::kCUDA : dlpack::kCPU, t.device().index};
  dl.ndim = static_cast<int32_t>(t.dim());
  dl.dtype = to_dl_dtype(t.dtype());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  m.manager_ctx = ctx;
  m.deleter = [](Managed* self) { delete static_cast<Export<Managed>*>(self->manager_ctx); };
  return &m;
}

// Orders the consumer's stream after everything we queued (all our work is on the legacy default
// stream). stream: None/1 = legacy default (nothing to do), 2 = per-thread default, else a handle.
void sync_to_consumer_stream(const Tensor& t, const py::object& stream) {
  if (!t.device().is_cuda() || stream.is_none()) return;
  const auto handle = stream.cast<int64_t>();
  if (handle == -1 || handle == 1) return;  // -1: consumer asked for no synchronization
  MT_CHECK_VALUE(handle != 0, "__dlpack__: stream=0 is ambiguous for CUDA and not allowed by the protocol");
#ifdef MINITENSOR_WITH_CUDA
  cuda::DeviceGuard guard(t.device().index);
  cudaStream_t consumer = handle == 2 ? cudaStreamPerThread : reinterpret_cast<cudaStream_t>(handle);
  cudaEvent_t ready;
  MT_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  MT_CUDA_CHECK(cudaEventRecord(ready, nullptr));
  MT_CUDA_CHECK(cudaStreamWaitEvent(consumer, ready, 0));
  MT_CUDA_CHECK(cudaEventDestroy(ready));
#endif
}

py::capsule export_capsule(const Tensor& t, bool versioned) {
  if (versioned) {
    auto* m = make_managed<dlpack::ManagedTensorVersioned>(t);
    m->version = {1, 0};
    m->flags = t.storage()->writable() ? 0 : dlpack::kFlagReadOnly;  // consumers must not write it
    return py::capsule(m, kVersionedName, [](PyObject* cap) {
      // Only an unconsumed capsule still owns the tensor; a consumer renames it and takes over.
      if (PyCapsule_IsValid(cap, kVersionedName)) {
        auto* p = static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(cap, kVersionedName));
        if (p && p->deleter) p->deleter(p);
      }
    });
  }
  auto* m = make_managed<dlpack::ManagedTensor>(t);
  return py::capsule(m, kLegacyName, [](PyObject* cap) {
    if (PyCapsule_IsValid(cap, kLegacyName)) {
      auto* p = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(cap, kLegacyName));
      if (p && p->deleter) p->deleter(p);
    }
  });
}

// Wraps a consumed DLTensor in a Tensor whose storage calls the producer's deleter at the end.
Tensor import_dl_tensor(const dlpack::Tensor& dl, std::function<void()> release, bool writable = true) {
  Device device;
  if (dl.device.device_type == dlpack::kCPU || dl.device.device_type == dlpack::kCUDAHost) {
    device = Device();
  } else if (dl.device.device_type == dlpack::kCUDA) {
    cuda::check_device(dl.device.device_id);
    device = Device(DeviceType::CUDA, dl.device.device_id);
  } else {
    release();
    MT_THROW_VALUE("from_dlpack: unsupported device type ", dl.device.device_type,
                   " (supported: CPU, CUDA)");
  }
  DType dtype;
  try {
    dtype = from_dl_dtype(dl.dtype);
  } catch (...) {
    release();
    throw;
  }
  Shape shape(dl.shape, dl.shape + dl.ndim);
  Shape strides = dl.strides ? Shape(dl.strides, dl.strides + dl.ndim) : contiguous_strides(shape);
  for (int64_t s : strides) {
    if (s < 0) {
      release();
      MT_THROW_VALUE("from_dlpack: negative strides are not supported; make the array contiguous first");
    }
  }
  const int64_t item = itemsize(dtype);
  char* base = static_cast<char*>(dl.data) + dl.byte_offset;
  // Our Storage addresses whole elements from its base; point it at the first element.
  int64_t nbytes = 0;
  try {  // a producer's sizes are not trusted: overflow is an error, not a wrapped span
    for (int64_t s : shape) MT_CHECK_VALUE(s >= 0, "from_dlpack: negative size in ", shape_str(shape));
    if (!checked_mul(storage_extent(shape, strides, 0), item, &nbytes))
      MT_THROW(RuntimeError, "Storage size calculation overflowed with sizes=", shape_str(shape));
  } catch (...) {
    release();
    throw;
  }
  auto storage = std::make_shared<Storage>(base, static_cast<std::size_t>(nbytes), device, std::move(release),
                                           writable);
  return Tensor(std::move(storage), shape, strides, 0, dtype);
}

Tensor from_dlpack(const py::object& obj) {
  py::object capsule = obj;
  if (!PyCapsule_CheckExact(obj.ptr())) {
    MT_CHECK_TYPE(py::hasattr(obj, "__dlpack__"), "from_dlpack: expected an object with __dlpack__ or a "
                  "DLPack capsule, but got ", py::str(py::type::of(obj).attr("__name__")).cast<std::string>());
    py::object stream = py::none();
    if (py::hasattr(obj, "__dlpack_device__")) {
      py::tuple dev = obj.attr("__dlpack_device__")();
      if (dev[0].cast<int>() == dlpack::kCUDA) stream = py::int_(1);  // we compute on the legacy default stream
    }
    try {
      try {
        capsule = obj.attr("__dlpack__")(py::arg("stream") = stream, py::arg("max_version") = py::make_tuple(1, 0));
      } catch (py::error_already_set& e) {
        if (!e.matches(PyExc_TypeError)) throw;
        capsule = obj.attr("__dlpack__")(py::arg("stream") = stream);  // a producer older than DLPack 1.0
      }
    } catch (py::error_already_set& e) {
      // A producer that cannot export its data (NumPy: object/str/datetime dtypes, non-native byte
      // order) raises BufferError; report it as the element-type problem it is, like torch does
      // for an unsupported dtype, so callers handle one exception type for "can't take this".
      if (!e.matches(PyExc_BufferError)) throw;
      MT_THROW_TYPE("from_dlpack: ", py::str(py::type::of(obj).attr("__name__")).cast<std::string>(),
                    " could not export its data through DLPack: ", py::str(e.value()).cast<std::string>());
    }
  }
  PyObject* cap = capsule.ptr();
  if (PyCapsule_IsValid(cap, kVersionedName)) {
    auto* m = static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(cap, kVersionedName));
    MT_CHECK_VALUE(m->version.major == 1, "from_dlpack: unsupported DLPack version ", m->version.major, ".",
                   m->version.minor);
    PyCapsule_SetName(cap, kVersionedUsedName);
    return import_dl_tensor(m->dl_tensor, [m] { if (m->deleter) m->deleter(m); },
                            (m->flags & dlpack::kFlagReadOnly) == 0);
  }
  if (PyCapsule_IsValid(cap, kLegacyName)) {
    auto* m = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(cap, kLegacyName));
    PyCapsule_SetName(cap, kLegacyUsedName);
    return import_dl_tensor(m->dl_tensor, [m] { if (m->deleter) m->deleter(m); });
  }
  MT_THROW_VALUE("from_dlpack: the capsule is not an unconsumed DLPack tensor (was it used already?)");
}

}  // namespace

void bind_dlpack(py::module_& m) {
  auto tensor = py::type::of<Tensor>();
  tensor.attr("__dlpack__") = py::cpp_function(
      [](const Tensor& t, const py::object& stream, const py::object& max_version, const py::object& dl_device,
         const py::object& copy) {
        MT_CHECK_VALUE(copy.is_none() || !copy.cast<bool>(), "__dlpack__: copy=True is not supported; "
                       "minitensor only exports its memory without copying");
        if (!dl_device.is_none()) {
          py::tuple dev = dl_device;
          const bool same = dev[0].cast<int>() == (t.device().is_cuda() ? dlpack::kCUDA : dlpack::kCPU) &&
                            dev[1].cast<int>() == t.device().index;
          MT_CHECK_VALUE(same, "__dlpack__: exporting to another device is not supported");
        }
        sync_to_consumer_stream(t, stream);
        const bool versioned = !max_version.is_none() && py::tuple(max_version)[0].cast<int>() >= 1;
        return export_capsule(t, versioned);
      },
      py::is_method(tensor), py::kw_only(), py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
      py::arg("dl_device") = py::none(), py::arg("copy") = py::none());
  tensor.attr("__dlpack_device__") = py::cpp_function(
      [](const Tensor& t) {
        return py::make_tuple(t.device().is_cuda() ? int(dlpack::kCUDA) : int(dlpack::kCPU), t.device().index);
      },
      py::is_method(tensor));
  m.def("from_dlpack", &from_dlpack, py::arg("obj"),
        "A tensor sharing memory with any DLPack producer (torch, cupy, numpy, jax) or capsule");
}

}  // namespace mt::bindings
