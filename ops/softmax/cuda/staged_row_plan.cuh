// Tiers 1, 2 and 3a's plan (staged_row_tier.cuh): the row groups, which kernels each op has
// (held rows and blocks, direct loads, packs as words, Shifted rows), the packs a thread owns,
// the ring's bytes and the registers a thread may take. The kernel, its launches
// (staged_row_launch.cuh) and the ladder (softmax_cuda.cu) read these compile-time choices; each
// says where it was measured.
#pragma once

#include <cstdint>

#include "ops/common/vector_pack.cuh"

namespace mt {

enum class RowGroup { kLanes, kBlock, kCluster };

constexpr int kLanesTierThreads = 256;
constexpr int kRowTierMaxThreads = 1024;

// Held rows: a 16-bit forward cluster whose threads hold kHeldPacks packs (64 values) in
// registers as floats, exps taken once and in place, in blocks of at most kHeldThreads, for few
// long rows that one round of such clusters holds (launch_row_tiers says which). The ring's wide
// clusters read a thread's 64 values from shared memory in each pass and take a second exp in
// the output pass: ncu on [16, 262144] float16 counted 24 thread instructions an element there,
// 12 held, QuACK's kernel 10. Rows whose clusters' threads own every pack take the Full kernel,
// the rest one that tests them; both at 80 registers, three blocks of 256 an SM
// (row_kernel_max_registers: at 128, two blocks, the 16 clusters of [16, 262144] did not all
// fit). Not log_softmax, which spilled at 128 registers. Held blocks: the same for rows of one
// block (launch_row_tiers' held_block_rows), Full; float32 rows too, 32 values a thread
// (has_held_blocks).
constexpr int kHeldPacks = 8;
constexpr int kHeldThreads = 256;

// The ops that have held kernels: the 16-bit softmax forward.
template <typename T, bool Log, bool Bwd>
constexpr bool has_held_kernels() {
  return sizeof(T) == 2 && !Bwd && !Log;
}
// The ops that have held blocks (Full): those, and the float32 softmax forward, whose threads
// then hold 32 values (held_block_rows says where each runs).
template <typename T, bool Log, bool Bwd>
constexpr bool has_held_blocks() {
  return has_held_kernels<T, Log, Bwd>() || (sizeof(T) == 4 && !Bwd && !Log);
}

// Whether a 16- or 32-bit forward may re-read rows from the ring instead of holding them in
// registers (the lanes tier's register cap follows from it; float64's forward and every
// backward re-read it outside the lanes tier, see holds_row_in_ring).
template <typename T, bool Bwd>
constexpr bool reads_ring() {
  return !Bwd && sizeof(T) <= 4;
}

// Whether a thread with PACKS packs leaves them in the ring, each pass reading them from there
// again, instead of holding them in registers. The forward: float32 and float64 outside the lanes
// tier (each keeps exp(x - m) in its slot for the output pass, with no rounding); float32 lanes
// past 8 values; 16-bit types past 16 values a thread. A lane's softmax holds 32 values in every
// type: float32 without spilling (sm_90: four packs 31 -> 38 and 24 -> 40 registers, eight 40 ->
// 63 and 32 -> 61; H200 kernel times, two rounds, [262144, 100] 55.7 / 56.0 -> 53.5 / 52.8 us at
// four, [67108, 1000] 130.1 / 130.7 -> 129.4 / 129.1 at eight, the other long grids within 1%),
// 16-bit ([67108, 1000] float16 93.0 -> 92.1 us on an H100, bfloat16 93.7 -> 92.2, [32, 64, 128,
// 128] 48.3 -> 47.7; its log_softmax spilled there). At 16 or fewer 16-bit values fit in registers,
// where exp is taken once instead of again in the output pass (the second exp and re-read made
// [1024, 8192] float16 issue-bound: SM 65% busy, DRAM 31%). The backward outside the lanes tier,
// every type: its two passes (the sum of the terms, the output) take no exp, and y and dy held in
// registers capped a block at 16 values a thread and 1024-thread blocks at one an SM.
template <typename T, bool Log, bool Bwd, int PACKS, RowGroup G>
constexpr bool holds_row_in_ring() {
  if constexpr (Bwd || sizeof(T) == 8) return G != RowGroup::kLanes;
  if constexpr (sizeof(T) == 4 && G != RowGroup::kLanes) return true;
  constexpr int kMaxValues = G == RowGroup::kLanes && !Log ? 32 : sizeof(T) == 4 ? 8 : 16;
  return PACKS * pack_size<T>() > kMaxValues;
}

// Whether a thread loads its packs straight from global memory into registers, with no ring:
// a forward lane of 16- or 32-bit values, or a block's thread of 16-bit values, that holds its
// row in registers (its loads are all in flight before the first use either way). H100 kernel
// times against the ring, two rounds: [2097152, 32] float16 97.4 -> 91.5 us (torch.compile's
// kernel: 91.3), bfloat16 alike, float32 182.9 -> 181.0 (which also moved its rows of 8 values or
// fewer into registers); [32, 64, 32, 32] float16 5.95 -> 5.7. float32 lanes of 16 values stayed
// in the ring ([524288, 128] 181.0 -> 182.0 in registers); float64 lanes and the backward's lost
// 1-2% direct ([32, 64, 64, 64] float64 47.3 -> 48.0, backward float32 36.4 -> 37.0), the block
// tier's float32 one-pack rows gained nothing. The block tier's 16-bit rows (one or two packs a
// thread) measured 1-2% slower direct on an H100 in softmax_tune's isolated runs, but gained in
// the benchmark beside torch.compile and Liger, whose regime the sweep measures (H200 kernel
// times, two rounds: [1024, 1024] float16 3.15 / 3.17 -> 3.10 / 3.14 us, bfloat16 3.17 / 3.17 ->
// 3.14 / 3.14; [1024, 2048] 3.41 / 3.42 -> 3.39 / 3.38, 3.42 / 3.42 -> 3.41 / 3.36; [1024, 4096]
// 5.30 / 5.25 -> 5.20 / 5.20, 5.23 / 5.22 -> 5.18 / 5.22). Held blocks (`Held`): float32's
// direct, 16-bit ones through the ring (H200 kernel times, two rounds, the benchmark beside
// torch.compile and Liger: float32 [1024, 4096] 8.86 / 8.77 -> 8.58 / 8.53 us, [1024, 8192] 17.70 /
// 17.87 -> 17.62 / 17.63, [2048-16384, 4096] and [4096, 8192] alike; float16 direct lost, [1024,
// 8192] 9.39 / 9.46 -> 9.60 / 9.65, [1024, 10240] 12.11 / 12.10 -> 12.42 / 12.51). Held clusters
// keep the ring. The 16-bit backward's lanes load y and dy directly at one pack a lane, and at
// two in the Full kernels of short grids (bwd_takes_words), which hold them as words (kBwdWords
// in the kernel); H200 kernel times, two rounds, the ring -> direct: [262144, 100] float16 69.2 /
// 69.8 -> 66.9 / 67.3 us, [262144, 120] 50.8 / 51.2 -> 48.1 / 48.5, bfloat16 alike. Two packs a
// lane direct on a long grid lost ([1048576, 512] 731 -> 735 as floats, 740 as words).
template <typename T, bool Log, bool Bwd, int PACKS, RowGroup G, bool Held = false,
          bool Full = false>
constexpr bool loads_direct() {
  if constexpr (Held) return G == RowGroup::kBlock && sizeof(T) == 4;
  constexpr bool kGroup = G == RowGroup::kLanes ? sizeof(T) <= 4
                                                : G == RowGroup::kBlock && sizeof(T) == 2;
  constexpr bool kBwdLanes = G == RowGroup::kLanes && sizeof(T) == 2 && (PACKS == 1 || Full);
  return kGroup && (!Bwd || kBwdLanes) && !holds_row_in_ring<T, Log, Bwd, PACKS, G>();
}

// Packs a thread owns in the block and cluster tiers, each of them in the ring: the forward 16
// values of float32, 8 doubles, 16 of 16-bit data (which it then holds in registers); `Wide`
// takes 8 packs, so that one block of 1024 threads holds a row of 32K floats without a cluster
// (each cluster exchange costs a row's worth of time). The backward takes 2 packs of y and 2 of
// dy, 4 of each wide: as many ring bytes a thread as the forward's 8.
template <typename T, bool Bwd, bool Wide>
constexpr int block_row_packs() {
  if (Bwd) return Wide ? 4 : 2;
  return Wide ? 8 : sizeof(T) == 2 ? 2 : 4;
}

// The most packs a lane holds in the lanes tier (256 threads a block, so registers are not
// capped at 64): 32 values of float or 16-bit data, half as many for the backward; 8 doubles
// either way. (16 doubles a forward lane took 102 registers, two blocks an SM: [32, 64, 512, 512]
// float64 ran 2,635 us on an H200 and 2,916 on an H100, 2,327 and 2,835 in the block tier.)
template <typename T, bool Bwd>
constexpr int lanes_row_max_packs() {
  if constexpr (sizeof(T) == 8) return 4;
  return (sizeof(T) == 2 ? 4 : 8) / (Bwd ? 2 : 1);
}

// Ring bytes for `threads` threads holding `packs` packs of one tensor (two for the backward).
template <bool Bwd>
inline int64_t row_ring_bytes(int stages, int threads, int packs) {
  return int64_t(stages) * (Bwd ? 2 : 1) * packs * threads * 16;
}

// Blocks of the largest size an SM must hold at once, which caps the registers of a thread
// (65536 / (threads x blocks)). The lanes tier's ring-reading forward: 4 blocks of 256, 64
// registers (uncapped, the compiler kept a row's values live across the passes that re-read
// them). A 16- or 32-bit row in one block: 2 blocks of 1024, 32 registers, so that blocks of 256
// run eight an SM and 1024 rows take one round of an H100, not 1.55 (at 48 registers; [1024,
// 4096] kernel 8.8 -> 7.8 us in float16, 13.6 -> 12.9 in float32; backward [1024, 8192] float32
// 40.6 -> 37.7). Not float64 or the forward's log_softmax: they spill at 32.
template <typename T, bool Log, bool Bwd, RowGroup G>
constexpr int row_kernel_min_blocks() {
  if constexpr (G == RowGroup::kLanes) return reads_ring<T, Bwd>() ? 4 : 1;
  return G == RowGroup::kBlock && (Bwd || !Log) && sizeof(T) <= 4 ? 2 : 1;
}

// The 16-bit lanes kernels that take a lane's packs as words (the max on the words, one store
// pointer, one conversion pass: kWords in the kernel): the aligned rows' Full kernels and those
// of four packs. The kernels of one or two packs that test their packs, which long grids take,
// keep the pack by pack form: with words (two packs: 278 -> 240 SASS instructions a warp-row, 31
// registers for 36) they ran 1.5-2.5% slower there, at eight blocks an SM or capped back to six
// (H200 kernel times, two rounds: [262144, 128] float16 34.3 / 34.4 -> 35.1 / 34.9 us, capped
// 35.5; [524288, 128] 66.3 -> 67.9 / 67.4; [2097152, 32] 65.5 / 66.2 -> 67.5 / 66.9), while the
// Full kernels of short grids gained ([1024, 512] 2.42 / 2.45 -> 2.37 / 2.35, [131072, 64] 10.72
// / 10.85 -> 10.48 / 10.40) and four packs' held even ([67108, 1000] 66.7 / 67.1 -> 66.6 / 66.3).
template <typename T, int PACKS, bool Full, bool Shifted>
constexpr bool lanes_take_words() {
  return sizeof(T) == 2 && !Shifted && (Full || PACKS >= 4);
}

// The most registers a thread may take: what the launch bounds leave (65536 / (threads x
// blocks), at most 255), except in the float64 forward's clusters: 40 (48 Shifted), where none
// spills (softmax; log_softmax 4-8 bytes). They had taken 56 (with slot addresses, kSlotAddresses,
// 59 had lost a block an SM at 224 threads), which left their SMs half their warps: ncu on
// [8192, 50304], 5 blocks of 224 an SM, warps active 50%, issue slots 67% busy, DRAM 72%; at 40,
// 7 blocks (13 of 224 a row), 68%, 72%, 74%. H200 kernel times, two rounds: [8192, 50304]
// 1,859-1,866 -> 1,752-1,754 us, [4096, 32000] 541-543 -> 506, [2048, 32768] 276.6-276.8 ->
// 260.8-261.1, [2048, 65536] 593-595 -> 524-528, [512, 131072] 347-348 -> 292-296, [1024, 16384]
// 72.1-72.4 -> 69.0; misaligned [4096, 50257] 1,005 -> 968-970 (at 40: 992-994); log_softmax
// [8192, 50304] 1,825-1,828 -> 1,692, [4096, 32000] 538-544 -> 513-514; at 48, between the two.
// The persistent clusters of longer rows lost at 40 ([2048, 151936] 1,782-1,784 -> 1,828-1,830),
// which a cluster a row took over from them (launch_cluster_row_tier). Held kernels:
// 80, three blocks of 256 an SM, with no spill, Full or not (the non-Full kernel took 111 at a
// cap of 128 before its owned packs were tested against one register and its output stored
// through one pointer, held_room and held_out).
template <typename T, bool Log, bool Bwd, RowGroup G, bool Held = false, bool Full = false,
          int PACKS = 0, bool Shifted = false>
constexpr int row_kernel_max_registers() {
  if constexpr (Held) return 80;
  // The lanes tier's 16-bit softmax rows held in registers as words (lanes_take_words): 32
  // registers for the Full kernels of up to two packs a lane (eight blocks of 256 an SM), 56 at
  // four packs (four blocks), where none spills. Uncapped, ptxas spread them over up to 39 and 64
  // once their instructions were cut (one store address, the max on words, no division; sm_90:
  // two packs' Full kernel from 32, which would have cost it two blocks an SM); held so, four
  // packs' take 52 and 53 (52 and 54 before).
  if constexpr (G == RowGroup::kLanes && sizeof(T) == 2 && !Log && !Bwd && PACKS > 0 &&
                loads_direct<T, Log, Bwd, (PACKS > 0 ? PACKS : 1), G>() &&
                lanes_take_words<T, PACKS, Full, Shifted>()) {
    if constexpr (PACKS >= 4) return 56;
    return 32;
  }
  // The 16-bit backward's Full lanes kernels, y and dy held as words (kBwdWords): 32 registers
  // at one pack a lane (eight blocks of 256 an SM; sm_90 takes 26-30), 48 at two (five; at 40
  // softmax spilled 16 bytes and [1048576, 512] ran 788 us, not 740).
  if constexpr (G == RowGroup::kLanes && sizeof(T) == 2 && Bwd && Full && PACKS > 0)
    return PACKS >= 2 ? 48 : 32;
  constexpr int threads = G == RowGroup::kLanes ? kLanesTierThreads : kRowTierMaxThreads;
  constexpr int cap = 65536 / (threads * row_kernel_min_blocks<T, Log, Bwd, G>());
  if constexpr (sizeof(T) == 8 && !Bwd && G == RowGroup::kCluster) return Shifted ? 48 : 40;
  return cap < 255 ? cap : 255;
}

// Where a misaligned row may take a Shifted kernel: read and written in the 16-byte packs of
// the aligned row that starts `shift` (< N) elements before it, with an aligned row's thread
// mapping and loads (cp.async, 16-byte stores); the elements outside the row (the neighbouring
// rows') are padded where they land and never stored. Such a row spans up to one pack more than
// its own, which the launch provides for (planned_cols), and every tensor of the launch must sit
// at the same offset within 16 bytes, so that one shift serves them all. These are kernels of
// their own: the aligned rows' kernels stay as they were (inside the shared kernel, a misaligned
// path that raised its registers made aligned rows 5-19% slower). H200 kernel times against
// the previous mapping (each of a pack's elements a thread apart, 2-byte loads), one call:
// forward float16 [262144, 100] 115.1 -> 37.6 us (torch's kernel: 58.4), [16384, 1001] 31.5 ->
// 21.7, [4096, 50257] 510 -> 275 (torch 350), [1024, 4095] 10.9 -> 7.7, [8, 131071] 6.5 ->
// 5.3; float32 [16384, 1001] 45.0 -> 34.8, [1024, 4095] 14.1 -> 10.8; backward float16 blocks
// [16384, 1001] 58.8 -> 28.5, [1024, 4095] 19.7 -> 9.4. In a later call, two rounds: float32
// clusters [4096, 50257] 662 -> 435, [64, 152063] 43.7 -> 30.0, [8, 131071] 10.6 -> 6.9;
// float64 [4096, 50257] 1648 -> 1138, [1024, 4095] 30.2 -> 23.5; backward clusters float16
// [4096, 50257] 825 -> 305, [64, 152063] 54.7 -> 23.0, [8, 131071] 13.2 -> 8.1, float32
// [4096, 50257] 1012 -> 629, blocks [16384, 1001] float32 63.5 -> 51.6; the lanes rows alike
// (float32, float64), but not the backward's 16-bit lanes ([262144, 100] float16 69.5-69.9 ->
// 74.5-74.6), which keep the element-strided mapping.
template <typename T, bool Bwd, RowGroup G>
constexpr bool misaligned_rows_shifted() {
  return !(Bwd && sizeof(T) == 2 && G == RowGroup::kLanes);
}

// The block of a staged-row launch, as the kernel's `block_shape` argument: its threads (bits 8
// and up) and a lanes group's log2 of the threads a row (bits 0-7; 0 for the other groups). The
// kernel takes its threads from here rather than from blockDim.x, and a held cluster its row from
// blockIdx.y (launch_cluster_row_tier lays those clusters along y) rather than from %clusterid.x:
// each of those is a constant of its own, blockDim.x at c[0x0][0x0] and %clusterid.x blockIdx.x
// times the reciprocal of the cluster's size at c[0x0][0x150], away from the arguments' constant
// line, and each block's warps waited out the misses one after another before their first load
// (ncu's source page of held [8, 131072] float16: 56 of the warps' 347 stall samples on the
// constant misses, QuACK's kernel 13 of 192 reading only its arguments). H200 kernel times, two
// rounds: float16 [1024, 512] 2.40 / 2.37 -> 2.27 / 2.27 us, [1024, 1024] 3.04 / 3.10 -> 3.01 /
// 2.94, [4, 131072] 3.74 -> 3.68, [32, 65536] 5.66 / 5.70 -> 5.60 / 5.57, [8, 131072] 4.54 /
// 4.51 -> 4.51 / 4.45, [1024, 4096] 6.30 / 6.34 -> 6.21 / 6.27, bfloat16 alike; lost: held [16,
// 262144] 8.38 / 8.32 -> 8.51 / 8.45, [128, 32768] 7.20 / 7.26 -> 7.33 / 7.33; the long grids,
// float32 and the backward within 1% (one round of float16's [131072, 64] backward aside).
constexpr int staged_block_shape(int threads, int lanes_log2) { return threads << 8 | lanes_log2; }

}  // namespace mt
