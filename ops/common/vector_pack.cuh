// 16-byte packs: the widest load/store a thread can issue in one instruction. Kernels work on
// packs of N = 16 / sizeof(T) consecutive elements; a pack that is misaligned (a view with an
// offset, a row length that is not a multiple of N) or that crosses the end of the data falls
// back to element-wise access, so one kernel serves every pointer.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/half.h"
#include "ops/common/reduce.cuh"

namespace mt {

template <typename T>
constexpr int pack_size() {
  return 16 / static_cast<int>(sizeof(T));
}

template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

inline bool is_aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Whole-pack moves. Copying a Pack of 16-bit elements by value moves it as N 2-byte pieces
// (nvcc does not merge them: eight loads where one would do); these move it as one access of
// the pack's size. Every load or store of a pack from memory goes through them.
template <int Bytes> struct PackWord;
template <> struct PackWord<16> { using type = uint4; };
template <> struct PackWord<8> { using type = uint2; };
template <> struct PackWord<4> { using type = uint32_t; };
template <> struct PackWord<2> { using type = uint16_t; };

// A pack held in registers as its word (PackWords): a Pack of 16-bit values assigned whole
// under a condition (`inside ? load : fill`) moves as N 2-byte pieces, one PRMT each; the word
// moves as 4-byte registers. as_words / from_words reinterpret registers, no memory traffic.
template <typename T, int N>
using PackWords = typename PackWord<sizeof(Pack<T, N>)>::type;

template <typename T, int N>
__device__ __forceinline__ PackWords<T, N> as_words(const Pack<T, N>& p) {
  PackWords<T, N> w;
  memcpy(&w, &p, sizeof(p));
  return w;
}

template <typename T, int N, typename W>
__device__ __forceinline__ Pack<T, N> from_words(const W& w) {
  static_assert(sizeof(W) == sizeof(Pack<T, N>), "a pack's word");
  Pack<T, N> p;
  memcpy(&p, &w, sizeof(p));
  return p;
}

// The word of a pack whose N elements are all `value`, built from 32-bit words (a Pack filled
// element by element and reinterpreted came out as 2-byte pieces again).
template <typename T, int N>
__device__ __forceinline__ PackWords<T, N> splat_words(T value) {
  PackWords<T, N> words;
  if constexpr (sizeof(Pack<T, N>) < 4) {  // one 16-bit element
    memcpy(&words, &value, sizeof(words));
  } else {
    uint32_t w[sizeof(Pack<T, N>) / 4];
    if constexpr (sizeof(T) == 2) {
      uint16_t bits;
      memcpy(&bits, &value, 2);
#pragma unroll
      for (int i = 0; i < int(sizeof(w) / 4); ++i) w[i] = bits * 0x10001u;
    } else {
#pragma unroll
      for (int i = 0; i < int(sizeof(w) / 4); i += sizeof(T) / 4) memcpy(&w[i], &value, sizeof(T));
    }
    memcpy(&words, w, sizeof(w));
  }
  return words;
}

template <typename T, int N>
__device__ __forceinline__ Pack<T, N> load_whole(const Pack<T, N>* src) {
  using W = PackWords<T, N>;
  const W w = *reinterpret_cast<const W*>(src);
  Pack<T, N> p;
  memcpy(&p, &w, sizeof(p));  // a reinterpretation of registers, no memory traffic
  return p;
}

template <typename T, int N>
__device__ __forceinline__ void store_whole(Pack<T, N>* dst, const Pack<T, N>& p) {
  using W = PackWords<T, N>;
  W w;
  memcpy(&w, &p, sizeof(p));
  *reinterpret_cast<W*>(dst) = w;
}

// A pack stored to global memory in one access. For 16-byte packs the vector store is spelled
// out (st.global.v4, a weak store): through store_whole, nvcc split it into four 4-byte stores in
// several kernels (the 16-bit output of the split-row, block and inner tiers; ncu counted 8 of
// each 32-byte sector's bytes used a store). Not __stwb: its st.global.wb became a strong store
// (STG.E.128.STRONG.SM) in the SASS. `EvictFirst` (st.global.cs): L2 drops
// the stored lines first, for a kernel that still reads other lines from L2 after its stores.
template <bool EvictFirst = false, typename T, int N>
__device__ __forceinline__ void store_global_whole(Pack<T, N>* dst, const Pack<T, N>& p) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(Pack<T, N>) == 16) {
    uint4 w;
    memcpy(&w, &p, sizeof(p));
    if constexpr (EvictFirst)
      __stcs(reinterpret_cast<uint4*>(dst), w);
    else
      asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "r"(w.x), "r"(w.y),
                   "r"(w.z), "r"(w.w)
                   : "memory");
    return;
  }
#endif
  store_whole(dst, p);
}

// store_global_whole of a 16-byte pack under an L2 policy from l2_policy (one store instruction
// whatever the policy).
template <typename T, int N>
__device__ __forceinline__ void store_global_hinted(Pack<T, N>* dst, const Pack<T, N>& p,
                                                    uint64_t policy) {
  static_assert(sizeof(Pack<T, N>) == 16, "16-byte packs only");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint4 w;
  memcpy(&w, &p, sizeof(p));
  asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(dst),
               "r"(w.x), "r"(w.y), "r"(w.z), "r"(w.w), "l"(policy)
               : "memory");
#else
  (void)policy;
  store_global_whole(dst, p);
#endif
}

// store_global_whole of a 16-byte pack where `store` holds: a predicated store, with no branch
// around it and its address computed either way (under a branch the compiler rebuilt each
// pack's 64-bit address from the kernel's parameters).
template <typename T, int N>
__device__ __forceinline__ void store_global_whole_if(bool store, Pack<T, N>* dst,
                                                      const Pack<T, N>& p) {
  static_assert(sizeof(Pack<T, N>) == 16, "16-byte packs only");
#if defined(__CUDA_ARCH__)
  const uint4 w = as_words(p);
  asm volatile(
      "{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %5, 0;\n\t"
      "@q st.global.v4.u32 [%0], {%1, %2, %3, %4};\n\t}" ::"l"(dst),
      "r"(w.x), "r"(w.y), "r"(w.z), "r"(w.w), "r"(int(store))
      : "memory");
#else
  if (store) store_whole(dst, p);
#endif
}

// A whole 16-byte pack loaded under an L2 cache policy (l2_policy in async_copy.cuh); other
// pack sizes load plainly.
template <typename T, int N>
__device__ __forceinline__ Pack<T, N> load_whole_hinted(const Pack<T, N>* src, uint64_t policy) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (sizeof(Pack<T, N>) == 16) {
    uint4 w;
    asm("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
        : "l"(src), "l"(policy));
    return from_words<T, N>(w);
  }
#endif
  (void)policy;
  return load_whole(src);
}

// A whole 16-byte pack loaded as its words under an L2 cache policy (as load_whole_hinted) and
// an L1 eviction priority: kept (L1EvictLast) or dropped first.
template <bool L1EvictLast, typename T, int N>
__device__ __forceinline__ PackWords<T, N> load_words_hinted(const Pack<T, N>* src,
                                                             uint64_t policy) {
  static_assert(sizeof(Pack<T, N>) == 16, "16-byte packs only");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint4 w;
  if constexpr (L1EvictLast)
    asm("ld.global.L1::evict_last.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
        : "l"(src), "l"(policy));
  else
    asm("ld.global.L1::evict_first.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
        : "l"(src), "l"(policy));
  return w;
#else
  (void)policy;
  return as_words(*src);
#endif
}

// A pack loaded from global memory in one 16-byte access, as its words (PackWords) or as a Pack.
// `Prefetch`: L2 is asked to fetch the 256 bytes around it on a miss (the L2::256B hint; see
// cp_async), for kernels that read the rest of those bytes soon and not at once themselves.
template <bool Prefetch, typename T, int N>
__device__ __forceinline__ PackWords<T, N> load_global_words(const Pack<T, N>* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (sizeof(Pack<T, N>) == 16) {
    uint4 w;
    if constexpr (Prefetch)
      asm("ld.global.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
          : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
          : "l"(src));
    else
      asm("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
          : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
          : "l"(src));
    return w;
  }
#endif
  return *reinterpret_cast<const PackWords<T, N>*>(src);
}

template <typename T, int N>
__device__ __forceinline__ Pack<T, N> load_prefetching(const Pack<T, N>* src) {
  return from_words<T, N>(load_global_words<true>(src));
}

// A 16-byte pack read from shared memory afresh each time (volatile): for kernels that re-read a
// row from shared memory on every pass instead of holding it in registers, where the compiler
// would otherwise keep the first pass's values live (and spill them). From a generic pointer
// into shared memory, or from its shared_address: a kernel that computes its slots' addresses
// once saves converting each pointer, which on sm_90 rebuilds the shared window's base (an S2UR
// of the CTA's id and four more instructions) every time.
template <typename T, int N>
__device__ __forceinline__ Pack<T, N> reload_shared(unsigned addr) {
  static_assert(sizeof(Pack<T, N>) == 16, "16-byte packs only");
  uint4 w;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
               : "r"(addr)
               : "memory");
  return from_words<T, N>(w);
}

template <typename T, int N>
__device__ __forceinline__ Pack<T, N> reload_shared(const Pack<T, N>* src) {
  return reload_shared<T, N>(static_cast<unsigned>(__cvta_generic_to_shared(src)));
}

// A 16-byte pack written to shared memory at `addr` (a shared_address), the counterpart of
// reload_shared.
template <typename T, int N>
__device__ __forceinline__ void store_shared(unsigned addr, const Pack<T, N>& p) {
  static_assert(sizeof(Pack<T, N>) == 16, "16-byte packs only");
  const uint4 w = as_words(p);
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(w.x), "r"(w.y),
               "r"(w.z), "r"(w.w)
               : "memory");
}

// Makes the compiler forget what it knows of a pack held in registers as its word (an empty asm
// that may have changed it), so that values converted from it in one pass are converted again in
// the next instead of being kept live between them: a 16-bit pack costs 4 registers, its float
// copies 8.
template <typename W>
__device__ __forceinline__ void forget_words(W& pack_words) {
  if constexpr (sizeof(W) == 2) {  // one 16-bit element
    asm volatile("" : "+h"(pack_words));
  } else {
    static_assert(sizeof(W) % 4 == 0, "whole 32-bit words");
    uint32_t w[sizeof(W) / 4];
    memcpy(w, &pack_words, sizeof(w));
#pragma unroll
    for (int i = 0; i < int(sizeof(w) / 4); ++i) asm volatile("" : "+r"(w[i]));
    memcpy(&pack_words, w, sizeof(w));
  }
}

// A pointer the compiler holds in registers from here on, instead of recomputing it from its
// parts (say, out + row * cols) at each use: an empty asm that may have changed it. nvcc redid a
// row's 64-bit offset (seven instructions) for every pack a ring-reading kernel stored.
template <typename T>
__device__ __forceinline__ T* held_pointer(T* p) {
  asm("" : "+l"(p));
  return p;
}

template <typename T>
constexpr bool is_16bit_float() {
  return std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
}

// Element-wise NaN-propagating max of two packs, in the storage type: for 16-bit types two
// elements an instruction (max of two halves is exact, so nothing is lost by not converting).
// On words (PackWords), the 16-bit pairs go to max.NaN.f16x2 / .bf16x2 as 32-bit registers, so
// that nvcc never sees 16-bit pieces (see PackWords).
template <typename T, int N>
__device__ __forceinline__ PackWords<T, N> pack_max_words(const PackWords<T, N>& a,
                                                          const PackWords<T, N>& b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (N % 2 == 0 && is_16bit_float<T>()) {
    uint32_t x[N / 2], y[N / 2];
    memcpy(x, &a, sizeof(x));
    memcpy(y, &b, sizeof(y));
#pragma unroll
    for (int i = 0; i < N / 2; ++i) {
      if constexpr (std::is_same_v<T, Half>)
        asm("max.NaN.f16x2 %0, %1, %2;" : "=r"(x[i]) : "r"(x[i]), "r"(y[i]));
      else
        asm("max.NaN.bf16x2 %0, %1, %2;" : "=r"(x[i]) : "r"(x[i]), "r"(y[i]));
    }
    PackWords<T, N> r;
    memcpy(&r, x, sizeof(x));
    return r;
  }
#endif
  const Pack<T, N> pa = from_words<T, N>(a), pb = from_words<T, N>(b);
  Pack<T, N> r;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    if constexpr (std::is_floating_point_v<T>) {
      r.v[j] = nan_max(pa.v[j], pb.v[j]);
    } else {
      const float x = float(pa.v[j]), y = float(pb.v[j]);
      r.v[j] = (x > y || x != x) ? pa.v[j] : pb.v[j];
    }
  }
  return as_words(r);
}

template <typename T, int N>
__device__ __forceinline__ Pack<T, N> pack_max(const Pack<T, N>& a, const Pack<T, N>& b) {
  return from_words<T, N>(pack_max_words<T, N>(as_words(a), as_words(b)));
}

// 16-bit -> float two at a time from 32-bit words: one instruction per value, no extraction of
// the halves first. From a pack's word (PackWords) or a Pack. The float16 halves are taken apart
// inside the asm, so that nvcc never holds the word as 16-bit pieces (see PackWords).
template <typename T, int N, typename A>
__device__ __forceinline__ void unpack_words(const PackWords<T, N>& pw, A (&out)[N]) {
  if constexpr (N % 2 == 0 && std::is_same_v<A, float> && is_16bit_float<T>()) {
    uint32_t w[N / 2];
    memcpy(w, &pw, sizeof(w));
#pragma unroll
    for (int i = 0; i < N / 2; ++i) {
      if constexpr (std::is_same_v<T, Half>) {
#if defined(__CUDA_ARCH__)
        asm("{.reg .f16 lo, hi;\n\tmov.b32 {lo, hi}, %2;\n\t"
            "cvt.f32.f16 %0, lo;\n\tcvt.f32.f16 %1, hi;}"
            : "=f"(out[2 * i]), "=f"(out[2 * i + 1])
            : "r"(w[i]));
#else
        __half2 h;
        memcpy(&h, &w[i], 4);
        const float2 f = __half22float2(h);
        out[2 * i] = f.x;
        out[2 * i + 1] = f.y;
#endif
      } else {
#if defined(__CUDA_ARCH__)
        // Byte permutes (the ALU pipe), where nvcc's shift came out as an IMAD on the pipe the
        // exps' arithmetic shares.
        uint32_t lo, hi;
        asm("prmt.b32 %0, %2, 0, 0x1044;\n\tprmt.b32 %1, %2, 0, 0x3244;"
            : "=r"(lo), "=r"(hi)
            : "r"(w[i]));
        out[2 * i] = __uint_as_float(lo);
        out[2 * i + 1] = __uint_as_float(hi);
#else
        out[2 * i] = __uint_as_float(w[i] << 16);
        out[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
#endif
      }
    }
  } else {
    const Pack<T, N> p = from_words<T, N>(pw);
#pragma unroll
    for (int j = 0; j < N; ++j) out[j] = static_cast<A>(p.v[j]);
  }
}

template <int N, typename T, typename A>
__device__ __forceinline__ void unpack(const Pack<T, N>& p, A (&out)[N]) {
  unpack_words<T, N>(as_words(p), out);
}

// The max of a 16-bit pack's values held as words: folded two values an instruction in their own
// type (pack_max_words: exact, NaN-propagating), then one pair converted, one float max (for
// eight values: four instructions, not eight conversions and seven maxima).
template <typename T, int N>
__device__ __forceinline__ float words_max(const PackWords<T, N>& pw) {
  static_assert(is_16bit_float<T>() && N % 2 == 0, "16-bit packs of pairs");
  uint32_t u[N / 2];
  memcpy(u, &pw, sizeof(u));
#pragma unroll
  for (int k = N / 4; k > 0; k /= 2)
#pragma unroll
    for (int i = 0; i < k; ++i) u[i] = pack_max_words<T, 2>(u[i], u[i + k]);
  float x[2];
  unpack_words<T, 2>(u[0], x);
  return nan_max(x[0], x[1]);
}

// float -> 16-bit converts two values per instruction (cvt.rn.f16x2.f32 / .bf16x2, sm_80+):
// half the conversions of one-by-one rounding, same results.
template <typename T, int N, typename A>
__device__ __forceinline__ Pack<T, N> pack_of(const A (&in)[N]) {
  Pack<T, N> p;
  constexpr bool kPairs = N % 2 == 0 && std::is_same_v<A, float> && is_16bit_float<T>();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (kPairs) {
    uint32_t w[N / 2];
#pragma unroll
    for (int j = 0; j < N; j += 2) {
      if constexpr (std::is_same_v<T, Half>) {
        const __half2 h = __floats2half2_rn(in[j], in[j + 1]);
        memcpy(&w[j / 2], &h, 4);
      } else {
        const __nv_bfloat162 h = __floats2bfloat162_rn(in[j], in[j + 1]);
        memcpy(&w[j / 2], &h, 4);
      }
    }
    memcpy(&p, w, sizeof(w));
  } else
#endif
  {
#pragma unroll
    for (int j = 0; j < N; ++j) p.v[j] = T(in[j]);
  }
  return p;
}

// Loads elements [col, col + N) of `row` into `out` (as the accumulation type A); elements at or
// past `end` read as `fill`. `vec` promises that row + col is 16-byte aligned whenever col is a
// multiple of N.
template <int N, typename T, typename A, typename I>
__device__ __forceinline__ void load_pack(const T* row, I col, I end, bool vec, A (&out)[N], A fill) {
  if (vec && col + N <= end) {
    unpack<N>(load_whole(reinterpret_cast<const Pack<T, N>*>(row + col)), out);
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j)
      out[j] = col + j < end ? static_cast<A>(row[col + j]) : fill;
  }
}

template <int N, bool EvictFirst = false, typename T, typename A, typename I>
__device__ __forceinline__ void store_pack(T* row, I col, I end, bool vec, const A (&in)[N]) {
  if (vec && col + N <= end) {
    store_global_whole<EvictFirst>(reinterpret_cast<Pack<T, N>*>(row + col), pack_of<T>(in));
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j)
      if (col + j < end) row[col + j] = T(in[j]);
  }
}

// store_pack for rows whose length is a multiple of N wherever `vec` holds, so that every pack
// there is whole: the vector path stores without a bounds test.
template <int N, bool EvictFirst = false, typename T, typename A, typename I>
__device__ __forceinline__ void store_row_pack(T* row, I col, I end, bool vec, const A (&in)[N]) {
  if (vec)
    store_global_whole<EvictFirst>(reinterpret_cast<Pack<T, N>*>(row + col), pack_of<T>(in));
  else
    store_pack<N>(row, col, end, false, in);
}

// Raw (unconverted) pack copies, for caching rows in shared memory in their storage type;
// elements at or past `end` read as `fill`; `Prefetch` as in load_prefetching.
template <int N, bool Prefetch = false, typename T, typename I>
__device__ __forceinline__ Pack<T, N> load_raw(const T* row, I col, I end, bool vec,
                                               T fill = T(0.0f)) {
  Pack<T, N> p;
  if (vec && col + N <= end) {
    const auto* src = reinterpret_cast<const Pack<T, N>*>(row + col);
    if constexpr (Prefetch)
      p = load_prefetching(src);
    else
      p = load_whole(src);
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) p.v[j] = col + j < end ? row[col + j] : fill;
  }
  return p;
}

}  // namespace mt
