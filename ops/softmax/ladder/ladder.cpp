// The ladder's front door: the table of variants per device, argument checks, and dispatch.
// CPU variants call the CPU kernels with a fixed algorithm; CUDA variants call the launchers in
// this folder's .cu files (compiled only with MINITENSOR_WITH_CUDA).
#include "ops/softmax/ladder/ladder.h"

#include "core/cuda_runtime.h"
#include "core/errors.h"
#include "ops/softmax/ladder/ladder_cuda.h"
#include "ops/softmax/softmax.h"
#include "ops/softmax/softmax_cpu.h"

namespace mt {

namespace {

// In a build without CUDA the launchers do not exist; the names stay listed (so
// softmax_impls("cuda") is the same everywhere) but nothing can reach them: a CUDA tensor cannot
// be created in such a build.
#ifdef MINITENSOR_WITH_CUDA
#define MT_LADDER_CUDA(fn) &ladder::fn
#else
#define MT_LADDER_CUDA(fn) nullptr
#endif

struct CpuImpl {
  const char* name;
  const char* description;
  SoftmaxCpuAlgo algo;
};

struct CudaImpl {
  const char* name;
  const char* description;
  ladder::CudaLauncher launch;  // nullptr for "auto"
};

const CpuImpl kCpuImpls[] = {
    {"auto", "production dispatcher: picks safe or online per shape, vectorized, multithreaded",
     SoftmaxCpuAlgo::Auto},
    {"safe", "three passes: max, sum of exp(x - max), normalise", SoftmaxCpuAlgo::Safe},
    {"online", "two passes: running max with a rescaled running sum, then normalise", SoftmaxCpuAlgo::Online},
};

const CudaImpl kCudaImpls[] = {
    {"auto", "production dispatcher: warp / block / cluster / split-row / inner tiers chosen per shape", nullptr},
    {"naive", "one thread per row, three passes (uncoalesced for the last dim)",
     MT_LADDER_CUDA(softmax_naive_cuda)},
    {"online", "one thread per row, two passes with the online (max, sum) update",
     MT_LADDER_CUDA(softmax_online_cuda)},
    {"warp", "one warp per row, __shfl_down_sync reductions + lane-0 broadcast",
     MT_LADDER_CUDA(softmax_warp_cuda)},
    {"block", "one block per row, shared-memory tree reduction, three passes over global memory",
     MT_LADDER_CUDA(softmax_block_cuda)},
    {"block_shfl", "block with warp-shuffle reductions, shared memory only between warps",
     MT_LADDER_CUDA(softmax_block_shfl_cuda)},
    {"block_smem", "block_shfl with the row cached in shared memory: one read, one write",
     MT_LADDER_CUDA(softmax_block_smem_cuda)},
    {"vec4", "block_shfl with 16-byte loads/stores (float4/double2), scalar fallback",
     MT_LADDER_CUDA(softmax_vec4_cuda)},
    {"multiblock", "each row split over many blocks: partial max, combine, partial sum, combine, normalise",
     MT_LADDER_CUDA(softmax_multiblock_cuda)},
};

template <typename Impl, std::size_t N>
std::vector<SoftmaxImplInfo> infos(const Impl (&impls)[N]) {
  std::vector<SoftmaxImplInfo> out;
  for (const Impl& impl : impls) out.push_back({impl.name, impl.description});
  return out;
}

template <typename Impl, std::size_t N>
const Impl& find_impl(const Impl (&impls)[N], const std::string& name, Device device) {
  for (const Impl& impl : impls)
    if (name == impl.name) return impl;
  std::string valid;
  for (const Impl& impl : impls) valid += std::string(valid.empty() ? "'" : ", '") + impl.name + "'";
  MT_THROW_VALUE("unknown softmax impl '", name, "' for device ", device.is_cpu() ? "cpu" : "cuda",
                 " (expected one of ", valid, ")");
}

}  // namespace

std::vector<SoftmaxImplInfo> softmax_impls(Device device) {
  return device.is_cpu() ? infos(kCpuImpls) : infos(kCudaImpls);
}

Tensor softmax_with_impl(const Tensor& input, int64_t dim, bool log, const std::string& impl) {
  const char* op = log ? "log_softmax" : "softmax";
  dim = wrap_dim(dim, input.dim());
  const Device device = input.device();

  if (device.is_cpu()) {
    const CpuImpl& cpu = find_impl(kCpuImpls, impl, device);
    if (cpu.algo == SoftmaxCpuAlgo::Auto) return softmax_forward(input, dim, log);
    MT_CHECK_TYPE(is_floating_point(input.dtype()), "\"", op, "\" not implemented for '",
                  dtype_name(input.dtype()), "'");
    Tensor x = input.contiguous();
    Tensor y = Tensor::empty(x.shape(), x.dtype(), device);
    const SoftmaxShape shape = softmax_shape(x.shape(), dim);
    if (shape.numel() == 0) return y;
    MT_DISPATCH_FLOATING_TYPES(x.dtype(), op, [&] {
      softmax_forward_cpu<scalar_t>(x.data<scalar_t>(), y.data<scalar_t>(), shape, log, cpu.algo);
    });
    return y;
  }

  const CudaImpl& gpu = find_impl(kCudaImpls, impl, device);
  // "auto" (and, in a build without CUDA, every name: there the launchers are nullptr and
  // softmax_forward reports the missing CUDA support).
  if (gpu.launch == nullptr) return softmax_forward(input, dim, log);
#ifdef MINITENSOR_WITH_CUDA
  MT_CHECK_TYPE(is_floating_point(input.dtype()), "\"", op, "\" not implemented for '",
                dtype_name(input.dtype()), "'");
  Tensor x = input.contiguous();
  Tensor y = Tensor::empty(x.shape(), x.dtype(), device);
  const SoftmaxShape shape = softmax_shape(x.shape(), dim);
  if (shape.numel() == 0) return y;  // nothing to launch (and no grid of 0 blocks)
  cuda::DeviceGuard guard(device.index);
  gpu.launch(x.data_ptr(), y.data_ptr(), x.dtype(), shape, log);
  return y;
#else
  MT_THROW(CudaError, "softmax impl '", impl, "' needs CUDA, but minitensor was built without it");
#endif
}

}  // namespace mt
