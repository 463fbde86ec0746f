// The short-planes transpose for 2-byte elements (float16, bfloat16): NCHW <-> NHWC with at
// most 64 channels over long planes (ResNet's 64-channel 56x56 maps), or planes of at most 64
// pixels (7x7 maps of 2048 channels). copy.cu's generic short-planes kernel does the same with
// one element per shared-memory access.
//
// Why a kernel of its own: shared memory, not global memory, bounded the generic kernel on
// 2-byte types. It makes 16 accesses of 2 bytes for every 16 bytes moved, and its padded rows
// put two lanes of a warp on most banks; `scripts/smem-wavefronts` replays its addresses and
// counts 32 wavefronts per 512 bytes moved for 64 channels and 49 for 7x7 maps (float32: 16
// and 30). On an H200 SM, 32 per 512 bytes for its share of 32x64x56x56 is about 6 us of
// shared-memory time, against 5.6 us for the whole cudaMemcpy (the generic kernel took
// 8.3 us by CUDA events).
//
// The stage is K rows of 128 elements in the interleaved side's order, (k, m) at column m of
// row k, without padding: each row's 16-byte granules are XOR-swizzled by the row's group of 8
// instead, so either side's warp spreads over the banks.
// - The interleaved side (K rows of M, k * M + m) moves whole 16-byte packets between global
//   and shared memory untouched: one access per 16 bytes.
// - The planar side (M planes of K, m * K + k), when K is a multiple of 8: a thread takes two
//   packets, planes m and m + 1 at the same 8 values of k, and pairs them into 8 words of
//   (k, m), (k, m + 1), which are columns m / 2 of 8 rows: 8 accesses per 32 bytes.
// - Otherwise it stages one element per access, as the generic kernel does, but at the
//   swizzled places.
// Modelled (scripts/smem-wavefronts): 8 wavefronts per 512 bytes for K = 8, 16, 32 or 64, 12 for
// the other multiples of 8, 20-22.4 for every other K from 9 to 63 (7x7 maps: 20.3; K below 8
// takes the few-planes kernel). For K = 8 and 16 a planar-side warp instruction covers half of
// each 32-byte sector it touches (planes m and m + 1 are separate instructions), which the
// model, being about banks only, does not see.
// The interleaved side loads through cp.async (async_copy.cuh), so a thread's loads are all in
// flight at once. Measured (bench/cuda_ops, % of cudaMemcpy, this kernel against the generic
// one in the same run): H200 32x64x56x56 float16 88 / 86 % against 72 / 72 %; 7x7 maps
// of 2048 channels 82 / 86 % against 84 / 78 % (docs/performance.md).
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/kernels/async_copy.cuh"
#include "cuda/kernels/device_types.cuh"
#include "cuda/kernels/row_walk.h"
#include "cuda/kernels/transpose_plan.cuh"

namespace lg::cuda::kernels {

namespace short_planes_2byte {
constexpr int kPacket = 8;                      // elements per 16-byte packet
constexpr int kChunk = 128;                     // positions of M per block: one stage row
constexpr int kGranules = kChunk / kPacket;     // 16-byte granules per stage row
using Elements = Packet<uint16_t, kPacket>;
using Granule = Packet<uint32_t, 4>;

// The granule of stage row k that holds elements m = 8 j .. 8 j + 7 of the chunk. The swizzle
// depends on k's group of 8 only, so the 8 rows a paired access spans share it.
__device__ inline int granule(int k, int j, int shift) {
  return k * kGranules + (j ^ (((k >> 3) << (3 - shift)) & 7));
}
// The element (k, m) of the stage, counted in elements.
__device__ inline int element(int k, int m, int shift) { return granule(k, m >> 3, shift) * kPacket + (m & 7); }
// The swizzle's shift for planes of K elements: the smallest with K <= 8 << shift (at most 3),
// so the groups of rows a warp's planar side touches at once fall on distinct granule
// positions. Chosen by replaying every K from 8 to 64 in scripts/smem-wavefronts: no other
// shift did better by more than 0.5 wavefronts per 512 bytes.
__device__ inline int swizzle_shift(int K) {
  int shift = 0;
  while ((kPacket << shift) < K) ++shift;
  return shift;
}
}  // namespace short_planes_2byte

// Chunks of kChunk positions of M, all K rows of each. K <= 64, M % 8 == 0, 16-byte aligned
// bases and batch strides that are multiples of 8 (the launcher checks all of these).
template <typename I, bool kPlanarSrc>
__global__ void copy_short_planes_2byte(const char* src_bytes, char* dst_bytes, TransposePlan p, I K, I M) {
  using namespace short_planes_2byte;
  __shared__ Granule stage[kShortPlane * kGranules];  // 16 KB
  uint16_t* elements = reinterpret_cast<uint16_t*>(stage);
  uint32_t* words = reinterpret_cast<uint32_t*>(stage);
  const uint16_t* src = reinterpret_cast<const uint16_t*>(src_bytes);
  uint16_t* dst = reinterpret_cast<uint16_t*>(dst_bytes);
  const bool paired = K % kPacket == 0;
  const I groups = K / kPacket;  // whole packets per plane
  const int shift = swizzle_shift(static_cast<int>(K));
  const I chunks = (M + kChunk - 1) / kChunk;
  for (I block = blockIdx.x; block < chunks * static_cast<I>(p.batches); block += gridDim.x) {
    const I b = block / chunks, m0 = (block % chunks) * kChunk;
    const I w = M - m0 < kChunk ? M - m0 : kChunk;  // a multiple of 8
    I dbase, sbase;
    batch_offsets<I>(p, b, dbase, sbase);
    const uint16_t* in = src + sbase;
    uint16_t* out = dst + dbase;
    const I row_packets = w / kPacket;
    // Interleaved side: item (k, j) is the packet k * M + m0 + 8 j, granule j of stage row k.
    // Each side is a lambda taken twice, loading (kLoad) before the barrier or storing after it.
    const auto interleaved = [&](auto load) {
      constexpr bool kLoad = decltype(load)::value;
      RowWalk<I> at(threadIdx.x, blockDim.x, row_packets);
      for (I q = threadIdx.x; q < K * row_packets; q += blockDim.x, at.advance()) {
        Granule& staged = stage[granule(static_cast<int>(at.row), static_cast<int>(at.col), shift)];
        const I offset = at.row * M + m0 + at.col * kPacket;
        if constexpr (kLoad) copy_16_async(&staged, in + offset);  // all of them in flight at once
        else *reinterpret_cast<Granule*>(out + offset) = staged;
      }
      if constexpr (kLoad) wait_async_copies();
    };
    // Planar side, paired: item (pair, g) is planes m0 + 2 pair and m0 + 2 pair + 1 at
    // k = 8 g .. 8 g + 7: word column `pair` of stage rows 8 g .. 8 g + 7.
    const auto planar_paired = [&](auto load) {
      constexpr bool kLoad = decltype(load)::value;
      RowWalk<I> at(threadIdx.x, blockDim.x, groups);
      for (I r = threadIdx.x; r < w / 2 * groups; r += blockDim.x, at.advance()) {
        const int k = static_cast<int>(at.col) * kPacket, m = 2 * static_cast<int>(at.row);
        uint32_t* column = words + element(k, m, shift) / 2;
        const I run = (m0 + m) * K + k;
        if constexpr (kLoad) {
          const Elements lo = *reinterpret_cast<const Elements*>(in + run);
          const Elements hi = *reinterpret_cast<const Elements*>(in + run + K);
#pragma unroll
          for (int e = 0; e < kPacket; ++e)
            column[e * kChunk / 2] = static_cast<uint32_t>(lo.v[e]) | static_cast<uint32_t>(hi.v[e]) << 16;
        } else {
          Elements lo, hi;
#pragma unroll
          for (int e = 0; e < kPacket; ++e) {
            const uint32_t both = column[e * kChunk / 2];
            lo.v[e] = static_cast<uint16_t>(both);
            hi.v[e] = static_cast<uint16_t>(both >> 16);
          }
          *reinterpret_cast<Elements*>(out + run) = lo;
          *reinterpret_cast<Elements*>(out + run + K) = hi;
        }
      }
    };
    // Planar side, one element per access: packet q of the chunk's run holds (m, k) =
    // (q / K, q % K) onwards, walked without dividing.
    const auto planar_single = [&](auto load) {
      constexpr bool kLoad = decltype(load)::value;
      const I first = static_cast<I>(threadIdx.x) * kPacket, step = static_cast<I>(blockDim.x) * kPacket;
      RowWalk<I> at(first, step, K);
      for (I q = first; q < w * K; q += step, at.advance()) {
        Elements v;
        if constexpr (kLoad) v = *reinterpret_cast<const Elements*>(in + m0 * K + q);
        RowWalk<I> e_at = at;
#pragma unroll
        for (int e = 0; e < kPacket; ++e, e_at.next()) {
          uint16_t& staged = elements[element(static_cast<int>(e_at.col), static_cast<int>(e_at.row), shift)];
          if constexpr (kLoad) staged = v.v[e];
          else v.v[e] = staged;
        }
        if constexpr (!kLoad) *reinterpret_cast<Elements*>(out + m0 * K + q) = v;
      }
    };
    constexpr std::true_type kLoadStage;
    constexpr std::false_type kStoreStage;
    if constexpr (kPlanarSrc) {
      if (paired) planar_paired(kLoadStage);
      else planar_single(kLoadStage);
      __syncthreads();
      interleaved(kStoreStage);
    } else {
      interleaved(kLoadStage);
      __syncthreads();
      if (paired) planar_paired(kStoreStage);
      else planar_single(kStoreStage);
    }
    __syncthreads();
  }
}

}  // namespace lg::cuda::kernels
