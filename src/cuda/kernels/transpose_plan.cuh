// The plan every batched-transpose kernel of copy.cu takes: a (rows x cols) plane per batch
// position, and the batch dims' offsets. Shared by copy.cu and short_planes_2byte.cuh.
#pragma once

#include <cstdint>

#include "cuda/kernels/device_types.cuh"

namespace lg::cuda::kernels {

// Planes (or channel counts) of at most this many elements go through the short-planes
// kernels, which move whole planes per block instead of square tiles.
constexpr int kShortPlane = 64;

// A batched transpose as plain scalars: each batch position holds a (rows x cols) plane that
// is unit-stride along rows in the source and along cols in the destination.
struct TransposePlan {
  const char* src;
  char* dst;
  int64_t rows, cols, batches;
  int64_t src_row, src_col, dst_row, dst_col;  // strides in elements
  int nb;                                      // batch dims, outermost first
  int64_t bsize[kMaxDims], bsrc[kMaxDims], bdst[kMaxDims];
};

// Offsets of batch position b (the dims other than the plane's), unrolled over the fixed
// maximum so no kernel parameter is indexed at run time.
template <typename I>
__device__ inline void batch_offsets(const TransposePlan& p, I b, I& dbase, I& sbase) {
  dbase = 0;
  sbase = 0;
#pragma unroll
  for (int d = kMaxDims - 1; d >= 0; --d) {
    if (d >= p.nb) continue;
    const I size = static_cast<I>(p.bsize[d]);
    const I idx = b % size;
    b /= size;
    dbase += idx * static_cast<I>(p.bdst[d]);
    sbase += idx * static_cast<I>(p.bsrc[d]);
  }
}

}  // namespace lg::cuda::kernels
