// Asynchronous global -> shared memory copies (cp.async, sm_80+): a thread issues a 16- or
// 8-byte copy and carries on; the data lands in shared memory while the thread computes on
// something else, and `cp_async_wait` later blocks until all but the newest `pending` batches have
// landed. No register holds the data in flight, so a kernel can keep several rows in flight per
// thread. Below sm_80 the copy is an ordinary load and store (correct, not overlapped).
#pragma once

#include <cstdint>
#include <type_traits>

namespace mt {

// Shared memory that cp.async fills starts on a 128-byte line (`extern __shared__
// __align__(kCopyLineBytes)`): the copies of a warp land in whole lines, not straddling two. The
// dynamic shared memory follows a kernel's static shared memory, aligned only to 16 bytes unless
// asked: tier 4b's lay 16 bytes into a line once its 1-2 KB of static slots gave way to two
// mbarriers, and its backward lost 8% ([8, 150, 128, 128] float32 59 -> 64 us). H200 kernel
// times, line-aligned against that: [8, 150, 128, 128] backward 35.6 -> 32.9 us in float16,
// [8, 4096, 4096] over dim 1 256 -> 238, forward 194 -> 182.5; the cluster rows' ring (its static
// scratch is not a whole number of lines): backward [4096, 32000] float16 202 -> 184, float32
// 399 -> 362; forward rows alike.
constexpr int kCopyLineBytes = 128;

// The 32-bit shared-memory address of `smem`, for cp_async_to: a kernel issuing many copies into
// one buffer converts its base once and steps it by byte offsets (converting each slot's generic
// pointer anew cost an S2R and four more instructions a copy).
__device__ __forceinline__ unsigned shared_address(const void* smem) {
  return static_cast<unsigned>(__cvta_generic_to_shared(smem));
}

// Copies Bytes (16 or 8) from global to shared memory at `dst` (a shared_address; cp_async takes
// the generic pointer); both must be aligned to Bytes. 16-byte copies bypass L1 (.cg); 8-byte ones
// cannot (.ca: .cg takes only 16). `Prefetch`: the kernel reads the bytes around this copy soon
// (the rest of a row, a neighbouring tile), so a miss asks L2 to fetch the 256 bytes around it
// (the L2::256B hint) instead of its sector alone.
template <int Bytes, bool Prefetch = false>
__device__ __forceinline__ void cp_async_to(unsigned dst, const void* gmem) {
  static_assert(Bytes == 16 || Bytes == 8, "cp.async copies of 16 or 8 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (Bytes == 16 && Prefetch)
    asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem) : "memory");
  else if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem) : "memory");
  else if constexpr (Prefetch)
    asm volatile("cp.async.ca.shared.global.L2::256B [%0], [%1], 8;\n" ::"r"(dst), "l"(gmem) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(dst), "l"(gmem) : "memory");
#else
  using Word = std::conditional_t<Bytes == 16, uint4, uint2>;
  *static_cast<Word*>(__cvta_shared_to_generic(dst)) = *static_cast<const Word*>(gmem);
#endif
}
template <int Bytes, bool Prefetch = false>
__device__ __forceinline__ void cp_async(void* smem, const void* gmem) {
  cp_async_to<Bytes, Prefetch>(shared_address(smem), gmem);
}

// cp_async_to<16, true> where `copy` holds: a predicated copy, with no branch around it and its
// addresses computed either way.
__device__ __forceinline__ void cp_async_if(bool copy, unsigned dst, const void* gmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %2, 0;\n\t"
      "@q cp.async.cg.shared.global.L2::256B [%0], [%1], 16;\n\t}" ::"r"(dst),
      "l"(gmem), "r"(int(copy))
      : "memory");
#else
  if (copy) cp_async_to<16, true>(dst, gmem);
#endif
}

// An L2 eviction priority for the lines a load or copy brings in: kFirst marks them as the first
// to evict (bytes read once, so that L2 keeps what the kernel reads again instead), kLast as the
// last (lines the kernel reads again soon: tier 2r's first pass), kNormal leaves the default.
enum class L2Evict { kNormal, kFirst, kLast };

// The cache policy of `evict`, for the hinted loads and copies (cp_async_hinted,
// load_whole_hinted, load_words_hinted).
__device__ __forceinline__ uint64_t l2_policy(L2Evict evict) {
  uint64_t policy = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if (evict == L2Evict::kFirst)
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  else if (evict == L2Evict::kLast)
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
  else
    asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;\n" : "=l"(policy));
#endif
  (void)evict;
  return policy;
}

// cp_async<16> under an L2 policy from l2_policy (one copy instruction either way, so a
// copy loop needs no branch on the policy).
__device__ __forceinline__ void cp_async_hinted(void* smem, const void* gmem, uint64_t policy) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(gmem), "l"(policy)
               : "memory");
#else
  (void)policy;
  cp_async<16>(smem, gmem);
#endif
}

// Closes the batch of copies issued since the last commit (an empty batch is fine).
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most `pending` of this thread's batches are still in flight (0..7; more counts
// as 7). Only the issuing thread's copies are waited for: a thread may read what it copied
// itself, others need a barrier too.
__device__ __forceinline__ void cp_async_wait(int pending) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  switch (pending <= 0 ? 0 : pending >= 7 ? 7 : pending) {
    case 0: asm volatile("cp.async.wait_group 0;\n" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;\n" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;\n" ::: "memory"); break;
    case 3: asm volatile("cp.async.wait_group 3;\n" ::: "memory"); break;
    case 4: asm volatile("cp.async.wait_group 4;\n" ::: "memory"); break;
    case 5: asm volatile("cp.async.wait_group 5;\n" ::: "memory"); break;
    case 6: asm volatile("cp.async.wait_group 6;\n" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 7;\n" ::: "memory"); break;
  }
#endif
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define MT_HAVE_BULK_COPY 1
// mbarriers (sm_90+) that count the bytes landing in a block's shared memory, from the bulk copy
// engine (tile_copy_3d) or a cluster peer's st.async (cluster_reduce.cuh). Each phase takes one
// arrival, the expect of its bytes (mbarrier_expect_bytes, which bytes may beat), and completes
// once they have all landed; readers wait for it (mbarrier_wait). All addresses are
// shared_address values.
// By one thread: a new mbarrier; then mbarrier_init_fence, and a barrier before its first use.
__device__ __forceinline__ void mbarrier_init(unsigned bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
}
// Makes the mbarriers this thread initialised visible to the copy engine and the cluster.
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void mbarrier_expect_bytes(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}
// Waits until the mbarrier's phase `phase` (0 or 1: its parity) has completed.
__device__ __forceinline__ void mbarrier_wait(unsigned bar, unsigned phase) {
  unsigned done = 0;
  while (!done) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
        "selp.b32 %0, 1, 0, p;\n\t}"
        : "=r"(done)
        : "r"(bar), "r"(phase)
        : "memory");
  }
}

// The bulk tensor copy engine (TMA): one instruction, by one thread, copies the box at
// coordinates (c0, c1, c2) (elements, fastest first) of the 3-D tile map at `map`
// (tensor_map.cuh; the address of a __grid_constant__ kernel parameter) into this block's shared
// memory at `dst` (128-byte aligned), counting its bytes on the mbarrier at `bar`. No copy loop,
// address arithmetic or registers in the threads.
__device__ __forceinline__ void tile_copy_3d(unsigned dst, const void* map, int c0, int c1, int c2,
                                             unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, "
      "{%2, %3, %4}], [%5];" ::"r"(dst),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}
#endif

}  // namespace mt
