// CPU softmax / log_softmax, forward and backward, over a contiguous (outer, axis, inner) buffer.
//
// Two layouts:
//  * inner == 1 ("rows"): each reduction group is a contiguous row; reductions run in SIMD packs
//    along the row (ops/common/span_reduce_cpu.h). Rows are split over threads; a few very long
//    rows are themselves split into chunks whose (max, sum) partials are combined.
//  * inner > 1 ("columns"): the group is axis strided slices of inner contiguous elements. We never
//    transpose: a tile of up to kMaxTile inner positions keeps its running max/sum in small stack
//    arrays while we sweep the axis, so the innermost loop runs over contiguous memory. Items
//    (outer index, tile) are split over threads, which also covers outer == 1 with a large inner.
//
// Forward algorithms (SoftmaxCpuAlgo):
//  * Safe: max pass, sum-of-exp pass (softmax stores exp(x - max) on the way), normalize pass.
//  * Online: one pass computing (max, sum) together, rescaling the sum whenever the max grows
//    (per chunk of a row / per block of axis rows, not per element), then the normalize pass.
//
// IEEE semantics follow torch: a NaN anywhere in a group makes the whole group NaN (the max
// propagates NaN, and exp(NaN) poisons the sum); a group of all -inf gives NaN (-inf - -inf);
// +inf gives NaN too (exp(inf - inf) poisons the sum).
#include "ops/softmax/softmax_cpu.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/dtype.h"
#include "core/parallel.h"
#include "ops/common/span_reduce_cpu.h"

namespace mt {
namespace {

// ---------------------------------------------------------------------------------------------
// Group statistics: the max m and s = sum exp(x - m). Partial stats of disjoint pieces combine.

template <typename A>
struct MaxSum {
  A max = kNegInf<A>;
  wide_sum_t<A> sum = 0;
};

// Merges two partials. A piece of all -inf has (max -inf, sum 0) and must contribute nothing,
// so its rescale factor is skipped instead of computing exp(-inf - -inf) = NaN.
template <typename A>
MaxSum<A> combine(MaxSum<A> a, MaxSum<A> b) {
  using W = wide_sum_t<A>;
  MaxSum<A> out;
  out.max = max_propagate_nan(a.max, b.max);
  const W ta = a.max == kNegInf<A> ? W(0) : a.sum * std::exp(W(a.max) - W(out.max));
  const W tb = b.max == kNegInf<A> ? W(0) : b.sum * std::exp(W(b.max) - W(out.max));
  out.sum = ta + tb;
  return out;
}

// Online statistics of a contiguous span: per chunk (which stays in L1) a max and a sum relative
// to it, merged into the running pair. One sweep of memory, one exp per element.
template <typename A, typename T>
MaxSum<A> span_stats_online(const T* x, int64_t n) {
  constexpr int64_t kChunk = 2048;
  MaxSum<A> running;
  for (int64_t c = 0; c < n; c += kChunk) {
    const int64_t len = std::min(kChunk, n - c);
    MaxSum<A> piece;
    piece.max = span_max<A>(x + c, len);
    if (piece.max == kNegInf<A>) continue;  // all -inf: contributes 0
    piece.sum = span_sum_of<A>(len, [m = piece.max](auto v) { return vec_exp(v - m); }, x + c);
    running = combine(running, piece);
  }
  return running;
}

// Writes the normalized output of a span given its group's stats. For softmax, `y_holds_exp`
// means y already holds exp(x - max) (safe algorithm) and only needs scaling.
template <typename A, typename T>
void span_normalize(const T* x, T* y, int64_t n, MaxSum<A> st, bool log, bool y_holds_exp) {
  const A m = st.max;
  if (log) {
    // (x - max) - log(sum): x - max is exact near the max (Sterbenz), where accuracy matters.
    const A log_sum = static_cast<A>(std::log(st.sum));
    span_map<A>(n, y, [=](auto v) { return (v - m) - log_sum; }, x);
  } else if (y_holds_exp) {
    const A inv = static_cast<A>(1 / st.sum);
    span_map<A>(n, y, [=](auto v) { return v * inv; }, y);
  } else {
    const A inv = static_cast<A>(1 / st.sum);
    span_map<A>(n, y, [=](auto v) { return vec_exp(v - m) * inv; }, x);
  }
}

// ---------------------------------------------------------------------------------------------
// Rows (inner == 1).

// Storing exp(x - max) during the sum pass saves recomputing it, but for 16-bit outputs it would
// round twice (exp, then the scaled value); those recompute from x instead.
template <typename T>
constexpr bool kStoreExp = sizeof(T) >= 4;

template <typename T>
void row_forward(const T* x, T* y, int64_t n, bool log, bool online) {
  using A = acc_t<T>;
  MaxSum<A> st;
  bool y_holds_exp = false;
  if (online) {
    st = span_stats_online<A>(x, n);
  } else {
    st.max = span_max<A>(x, n);
    if (!log && kStoreExp<T>) {
      st.sum = span_exp_store_sum<A>(x, y, n, st.max);
      y_holds_exp = true;
    } else {
      st.sum = span_sum_of<A>(n, [m = st.max](auto v) { return vec_exp(v - m); }, x);
    }
  }
  span_normalize<A>(x, y, n, st, log, y_holds_exp);
}

// Few rows, each long: split every row into pieces over the threads, combine the pieces' stats,
// then normalize the pieces in parallel.
template <typename T>
void long_rows_forward(const T* x, T* y, int64_t rows, int64_t n, bool log) {
  using A = acc_t<T>;
  constexpr int64_t kPiece = 1 << 15;
  const int64_t pieces = (n + kPiece - 1) / kPiece;
  std::vector<MaxSum<A>> partial(rows * pieces);
  parallel_for(rows * pieces, kPiece, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int64_t r = k / pieces, start = (k % pieces) * kPiece;
      partial[k] = span_stats_online<A>(x + r * n + start, std::min(kPiece, n - start));
    }
  });
  std::vector<MaxSum<A>> stats(rows);
  for (int64_t k = 0; k < rows * pieces; ++k) stats[k / pieces] = combine(stats[k / pieces], partial[k]);
  parallel_for(rows * pieces, kPiece, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int64_t r = k / pieces, start = r * n + (k % pieces) * kPiece;
      span_normalize<A>(x + start, y + start, std::min(kPiece, n - (k % pieces) * kPiece),
                        stats[r], log, false);
    }
  });
}

template <typename T>
void row_backward(const T* y, const T* dy, T* dx, int64_t n, bool log) {
  using A = acc_t<T>;
  if (log) {
    const A s = static_cast<A>(span_sum_of<A>(n, [](auto g) { return g; }, dy));
    span_map<A>(n, dx, [=](auto yv, auto g) { return g - vec_exp(yv) * s; }, y, dy);
  } else {
    const A dot = static_cast<A>(span_sum_of<A>(n, [](auto yv, auto g) { return yv * g; }, y, dy));
    span_map<A>(n, dx, [=](auto yv, auto g) { return yv * (g - dot); }, y, dy);
  }
}

// ---------------------------------------------------------------------------------------------
// Columns (inner > 1). A tile is `len` contiguous inner positions; row a of the tile starts at
// base + a * inner. Statistics per position live in stack arrays of kMaxTile entries.

constexpr int64_t kMaxTile = 512;
constexpr int64_t kRowBlock = 16;  // axis rows summed in A before spilling into the wide sums

// Column tiles: the safe algorithm sweeps a tile three times, so its tile (axis x width) should
// stay in cache; the online algorithm sweeps memory only twice, so it takes the widest tile: long
// contiguous runs per axis row keep the prefetchers and the TLB effective when the axis stride
// (inner) is large. The budget is a core's L2 (2 MB here): measured on [1024, 1024] over dim 0,
// 2 MB tiles (512 columns) beat 512 KB ones (128 columns) by 1.3-1.6x even though the tile's
// output then spills to L3: the longer runs per row matter more. Below kMinSafeTile columns the
// runs get short and the online algorithm wins ([4096, 4096] over dim 0: 2x).
constexpr int64_t kTileL2Budget = 2048 * 1024;
constexpr int64_t kMinSafeTile = 256;

template <typename T>
int64_t safe_tile_width(SoftmaxShape s) {
  const int64_t w = kTileL2Budget / std::max<int64_t>(1, s.axis * static_cast<int64_t>(sizeof(T)));
  return std::clamp<int64_t>(w / 16 * 16, 16, kMaxTile);
}

template <typename T>
int64_t tile_width(SoftmaxShape s, bool online) {
  return std::min(s.inner, online ? kMaxTile : safe_tile_width<T>(s));
}

// Per-position arrays for one tile.
template <typename A>
struct TileStats {
  A max[kMaxTile];       // true running max (NaN and -inf included)
  A eff_max[kMaxTile];   // max used as the exp offset: 0 while everything seen is -inf, so -inf
                         // entries add exp(-inf) = 0 rather than exp(-inf - -inf) = NaN (online)
  A block[kMaxTile];     // per block of rows: a max, then a sum in A
  A factor[kMaxTile];    // rescale factor of the running sums (online); the final normalizer
  wide_sum_t<A> sum[kMaxTile];
};

// The axis row a of a tile.
template <typename T>
inline T* tile_row(T* base, int64_t inner, int64_t a) {
  return base + a * inner;
}

// Column blocks of kColumnPacks packs: their accumulators stay in registers all the way down the
// axis instead of being reloaded and stored for every row.
constexpr int kColumnPacks = 4;

// block[i] = sum over rows [a0, a1) of exp(x[a][i] - offset[i]); with `y` also stores each exp.
template <typename A, typename T>
void tile_block_sum_exp(const T* x, T* y, int64_t inner, int64_t a0, int64_t a1, int64_t len,
                        const A* offset, A* block) {
  constexpr int P = kPackSize<A>, B = kColumnPacks;
  int64_t c = 0;
  for (; c + B * P <= len; c += B * P) {
    pack_t<A> acc[B], off[B];
    for (int b = 0; b < B; ++b) {
      acc[b] = pack_t<A>{};
      off[b] = pack_load<A>(offset + c + b * P);
    }
    for (int64_t a = a0; a < a1; ++a) {
      const T* xr = tile_row(x, inner, a) + c;
      for (int b = 0; b < B; ++b) {
        const pack_t<A> e = vec_exp(pack_load<A>(xr + b * P) - off[b]);
        if (y) pack_store<T, A>(tile_row(y, inner, a) + c + b * P, e);
        acc[b] += e;
      }
    }
    for (int b = 0; b < B; ++b) pack_store<A, A>(block + c + b * P, acc[b]);
  }
  if (c == len) return;
  // The remaining columns, row by row.
  std::fill(block + c, block + len, A(0));
  for (int64_t a = a0; a < a1; ++a) {
    const T* xr = tile_row(x, inner, a) + c;
    if (y) {
      T* yr = tile_row(y, inner, a) + c;
      span_map<A>(len - c, yr, [](auto v, auto m) { return vec_exp(v - m); }, xr, offset + c);
      span_map<A>(len - c, block + c, [](auto s, auto e) { return s + e; }, block + c, yr);
    } else {
      span_map<A>(len - c, block + c, [](auto s, auto v, auto m) { return s + vec_exp(v - m); },
                  block + c, xr, offset + c);
    }
  }
}

// m[i] = max(m[i], x[a][i]) over rows [a0, a1), NaN propagating.
template <typename A, typename T>
void tile_max(const T* x, int64_t inner, int64_t a0, int64_t a1, int64_t len, A* m) {
  constexpr int P = kPackSize<A>, B = kColumnPacks;
  int64_t c = 0;
  for (; c + B * P <= len; c += B * P) {
    pack_t<A> acc[B];
    for (int b = 0; b < B; ++b) acc[b] = pack_load<A>(m + c + b * P);
    for (int64_t a = a0; a < a1; ++a) {
      const T* xr = tile_row(x, inner, a) + c;
      for (int b = 0; b < B; ++b) acc[b] = max_propagate_nan(acc[b], pack_load<A>(xr + b * P));
    }
    for (int b = 0; b < B; ++b) pack_store<A, A>(m + c + b * P, acc[b]);
  }
  for (int64_t a = a0; c < len && a < a1; ++a)
    span_map<A>(len - c, m + c, [](auto mv, auto v) { return max_propagate_nan(mv, v); }, m + c,
                tile_row(x, inner, a) + c);
}

template <typename T>
void tile_forward(const T* x, T* y, int64_t axis, int64_t inner, int64_t len, bool log,
                  bool online) {
  using A = acc_t<T>;
  using W = wide_sum_t<A>;
  TileStats<A> t;
  std::fill(t.sum, t.sum + len, W(0));
  bool y_holds_exp = false;
  if (online) {
    std::fill(t.max, t.max + len, kNegInf<A>);
    std::fill(t.eff_max, t.eff_max + len, A(0));
    for (int64_t a0 = 0; a0 < axis; a0 += kRowBlock) {
      const int64_t a1 = std::min(axis, a0 + kRowBlock);
      std::copy(t.max, t.max + len, t.block);
      tile_max<A>(x, inner, a0, a1, len, t.block);
      for (int64_t i = 0; i < len; ++i) {
        const A new_eff = t.block[i] == kNegInf<A> ? A(0) : t.block[i];
        // Nothing summed yet (max still -inf): the sum is 0 and must stay 0, so use factor
        // exp(-inf) = 0 rather than exp(0 - new_eff), which overflows for very negative maxima.
        t.factor[i] = t.max[i] == kNegInf<A> ? kNegInf<A> : t.eff_max[i] - new_eff;
        t.eff_max[i] = new_eff;
        t.max[i] = t.block[i];
      }
      span_map<A>(len, t.factor, [](auto d) { return vec_exp(d); }, t.factor);
      tile_block_sum_exp<A, T>(x, nullptr, inner, a0, a1, len, t.eff_max, t.block);
      for (int64_t i = 0; i < len; ++i) t.sum[i] = t.sum[i] * t.factor[i] + t.block[i];
    }
  } else {
    std::fill(t.max, t.max + len, kNegInf<A>);
    // In blocks of rows, like the sums: each row of the block is swept across the whole tile
    // width, so memory is read in long contiguous runs rather than a column block at a time.
    for (int64_t a0 = 0; a0 < axis; a0 += kRowBlock)
      tile_max<A>(x, inner, a0, std::min(axis, a0 + kRowBlock), len, t.max);
    y_holds_exp = !log && kStoreExp<T>;
    for (int64_t a0 = 0; a0 < axis; a0 += kRowBlock) {
      const int64_t a1 = std::min(axis, a0 + kRowBlock);
      tile_block_sum_exp<A, T>(x, y_holds_exp ? y : nullptr, inner, a0, a1, len, t.max, t.block);
      for (int64_t i = 0; i < len; ++i) t.sum[i] += t.block[i];
    }
  }
  // Normalize: y = (x - max) - log(sum), or y = exp(x - max) / sum.
  A* c = t.factor;
  for (int64_t i = 0; i < len; ++i)
    c[i] = log ? static_cast<A>(std::log(t.sum[i])) : static_cast<A>(1 / t.sum[i]);
  for (int64_t a = 0; a < axis; ++a) {
    const T* xr = tile_row(x, inner, a);
    T* yr = tile_row(y, inner, a);
    if (log)
      span_map<A>(len, yr, [](auto v, auto m, auto s) { return (v - m) - s; }, xr, t.max, c);
    else if (y_holds_exp)
      span_map<A>(len, yr, [](auto e, auto s) { return e * s; }, yr, c);
    else
      span_map<A>(len, yr, [](auto v, auto m, auto s) { return vec_exp(v - m) * s; }, xr, t.max, c);
  }
}

template <typename T>
void tile_backward(const T* y, const T* dy, T* dx, int64_t axis, int64_t inner, int64_t len,
                   bool log) {
  using A = acc_t<T>;
  using W = wide_sum_t<A>;
  TileStats<A> t;
  std::fill(t.sum, t.sum + len, W(0));
  // sum over the axis of dy (log_softmax) or of y * dy (softmax), in blocks of rows.
  for (int64_t a0 = 0; a0 < axis; a0 += kRowBlock) {
    const int64_t a1 = std::min(axis, a0 + kRowBlock);
    std::fill(t.block, t.block + len, A(0));
    for (int64_t a = a0; a < a1; ++a) {
      const T* yr = tile_row(y, inner, a);
      const T* gr = tile_row(dy, inner, a);
      if (log)
        span_map<A>(len, t.block, [](auto s, auto g) { return s + g; }, t.block, gr);
      else
        span_map<A>(len, t.block, [](auto s, auto yv, auto g) { return s + yv * g; }, t.block, yr,
                    gr);
    }
    for (int64_t i = 0; i < len; ++i) t.sum[i] += t.block[i];
  }
  A* s = t.factor;
  for (int64_t i = 0; i < len; ++i) s[i] = static_cast<A>(t.sum[i]);
  for (int64_t a = 0; a < axis; ++a) {
    const T* yr = tile_row(y, inner, a);
    const T* gr = tile_row(dy, inner, a);
    T* dr = tile_row(dx, inner, a);
    if (log)
      span_map<A>(len, dr, [](auto yv, auto g, auto sv) { return g - vec_exp(yv) * sv; }, yr, gr, s);
    else
      span_map<A>(len, dr, [](auto yv, auto g, auto sv) { return yv * (g - sv); }, yr, gr, s);
  }
}

// ---------------------------------------------------------------------------------------------
// Dispatch.

// Auto: which forward algorithm is faster (measured with tools/cpu_softmax_bench on AVX-512).
// The safe algorithm does one exp per element but sweeps the group three times; the online one
// sweeps twice but (softmax only) does two exps per element. While a group fits in cache the
// extra sweep is cheap and safe wins; log_softmax does one exp either way, so online wins.
template <typename T>
bool prefer_online(SoftmaxShape s, bool log) {
  if (log) return true;
  const int64_t bytes = s.axis * static_cast<int64_t>(sizeof(T));
  if (s.inner == 1) return bytes > (1 << 20);  // rows: online once a row outgrows L2
  // Columns: safe while a tile of useful width still fits the L2 budget.
  return safe_tile_width<T>(s) < std::min(s.inner, kMinSafeTile);
}

// Work items for inner > 1: (outer index, tile of inner).
struct TileGrid {
  int64_t width, tiles_per_outer, items;
  TileGrid(SoftmaxShape s, int64_t w) : width(w), tiles_per_outer((s.inner + w - 1) / w),
                                        items(s.outer * ((s.inner + w - 1) / w)) {}
  int64_t offset(SoftmaxShape s, int64_t item) const {  // element offset of the tile's row 0
    return (item / tiles_per_outer) * s.axis * s.inner + (item % tiles_per_outer) * width;
  }
  int64_t len(SoftmaxShape s, int64_t item) const {
    return std::min(width, s.inner - (item % tiles_per_outer) * width);
  }
};

}  // namespace

template <typename T>
void softmax_forward_cpu(const T* x, T* y, SoftmaxShape s, bool log, SoftmaxCpuAlgo algo) {
  if (s.outer <= 0 || s.axis <= 0 || s.inner <= 0) return;
  const bool online =
      algo == SoftmaxCpuAlgo::Online || (algo == SoftmaxCpuAlgo::Auto && prefer_online<T>(s, log));
  if (s.inner == 1) {
    if (s.outer < num_threads() && s.axis >= (1 << 17)) {
      long_rows_forward(x, y, s.outer, s.axis, log);
      return;
    }
    parallel_for(s.outer, s.axis, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) row_forward(x + r * s.axis, y + r * s.axis, s.axis, log, online);
    });
    return;
  }
  const TileGrid grid(s, tile_width<T>(s, online));
  parallel_for(grid.items, s.axis * grid.width, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int64_t off = grid.offset(s, k);
      tile_forward(x + off, y + off, s.axis, s.inner, grid.len(s, k), log, online);
    }
  });
}

template <typename T>
void softmax_forward_cpu(const T* x, T* y, SoftmaxShape shape, bool log) {
  softmax_forward_cpu(x, y, shape, log, SoftmaxCpuAlgo::Auto);
}

template <typename T>
void softmax_backward_cpu(const T* y, const T* dy, T* dx, SoftmaxShape s, bool log) {
  if (s.outer <= 0 || s.axis <= 0 || s.inner <= 0) return;
  if (s.inner == 1) {
    parallel_for(s.outer, s.axis, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r)
        row_backward(y + r * s.axis, dy + r * s.axis, dx + r * s.axis, s.axis, log);
    });
    return;
  }
  // Backward sweeps twice (sum, then dx), like the online forward: widest tiles.
  const TileGrid grid(s, tile_width<T>(s, true));
  parallel_for(grid.items, s.axis * grid.width, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int64_t off = grid.offset(s, k);
      tile_backward(y + off, dy + off, dx + off, s.axis, s.inner, grid.len(s, k), log);
    }
  });
}

#define MT_INSTANTIATE_SOFTMAX_CPU(T)                                                      \
  template void softmax_forward_cpu<T>(const T*, T*, SoftmaxShape, bool);                 \
  template void softmax_forward_cpu<T>(const T*, T*, SoftmaxShape, bool, SoftmaxCpuAlgo); \
  template void softmax_backward_cpu<T>(const T*, const T*, T*, SoftmaxShape, bool);
MT_INSTANTIATE_SOFTMAX_CPU(float)
MT_INSTANTIATE_SOFTMAX_CPU(double)
MT_INSTANTIATE_SOFTMAX_CPU(Half)
MT_INSTANTIATE_SOFTMAX_CPU(BFloat16)
#undef MT_INSTANTIATE_SOFTMAX_CPU

}  // namespace mt
