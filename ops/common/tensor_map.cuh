// Tile maps for the bulk tensor copy engine (TMA, sm_90+), made on the host: a CUtensorMap
// describes a dense tensor in global memory and the box one copy takes (tile_copy_3d in
// async_copy.cuh); a kernel takes it as a `const __grid_constant__ CUtensorMap` parameter.
// The encoder lives in the driver; it is looked up through the runtime, so nothing links
// libcuda. Where it cannot be found (or the tensor does not meet the engine's alignment), the
// caller copies another way.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace mt {

namespace tensor_map_detail {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// cuTensorMapEncodeTiled, or null where the driver has none (looked up once; a failed lookup
// leaves no error behind for the next checked call).
inline EncodeTiled encoder() {
  static const EncodeTiled fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                                             cudaEnableDefault, &found);
    if (err != cudaSuccess || found != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      return EncodeTiled(nullptr);
    }
    return reinterpret_cast<EncodeTiled>(p);
  }();
  return fn;
}

}  // namespace tensor_map_detail

// A map of the dense tensor [dims[2]][dims[1]][dims[0]] of `elem_bytes`-byte elements at `base`,
// whose copies take boxes of box[0] x box[1] x box[2] elements (fastest first), landing in shared
// memory as a dense array of that shape; elements outside the tensor land as zeros and cost no
// traffic. On an L2 miss a copy fetches the 256 bytes around it (neighbouring boxes follow).
// False where the engine cannot take it: base or the row pitch not 16-byte aligned, a box wider
// than 256 elements or not a whole number of 16 bytes, or no encoder.
inline bool make_tile_map_3d(CUtensorMap* map, const void* base, int elem_bytes,
                             const uint64_t (&dims)[3], const uint32_t (&box)[3]) {
  const tensor_map_detail::EncodeTiled encode = tensor_map_detail::encoder();
  const uint64_t pitch = dims[0] * uint64_t(elem_bytes);
  if (encode == nullptr || reinterpret_cast<uintptr_t>(base) % 16 != 0 || pitch % 16 != 0 ||
      box[0] * uint64_t(elem_bytes) % 16 != 0)
    return false;
  for (int i = 0; i < 3; ++i)
    if (box[i] == 0 || box[i] > 256 || dims[i] == 0 || dims[i] > (uint64_t(1) << 32)) return false;
  const CUtensorMapDataType type = elem_bytes == 2   ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                                   : elem_bytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32
                                                     : CU_TENSOR_MAP_DATA_TYPE_UINT64;
  const cuuint64_t global_dims[3] = {dims[0], dims[1], dims[2]};
  const cuuint64_t strides[2] = {pitch, pitch * dims[1]};  // bytes between rows, between slabs
  const cuuint32_t box_dims[3] = {box[0], box[1], box[2]};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  return encode(map, type, 3, const_cast<void*>(base), global_dims, strides, box_dims,
                element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) ==
         CUDA_SUCCESS;
}

}  // namespace mt
