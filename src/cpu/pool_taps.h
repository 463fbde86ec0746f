// The inner step of NHWC pooling: one output pixel's channels from the input pixels of its
// window ("taps"), each a unit-stride run of C floats.
//
// The portable loop in pooling.cpp keeps its running value in memory and vectorises to SSE.
// The AVX2 forms here come in three orders, because which one wins depends on where the input
// comes from (bench/cpu_ops, docs/performance.md):
//   - InRegisters: 32 channels in four registers across all taps, one store. Fewest memory
//     operations; it wins when windows overlap enough that the input sits in cache (3x3
//     stride 1: 3-4x faster than the portable loop).
//   - Streaming: the same, and each tap's run is prefetched 4 KiB ahead. When the input is read
//     about once from memory (2x2 stride 2, the stem's 3x3 stride 2), interleaving the taps'
//     runs starves the hardware prefetchers -- without the prefetch this order was 1.6x slower
//     than even the portable loop there. With it, the stem pool runs 1.46x faster than
//     TapByTap, and the 2x2 pools about as fast (1.2x faster when timed back to back).
//   - TapByTap: each tap's whole channel run added into the output in turn, one sequential
//     stream at a time. For windows of many taps read once (global pooling: 49 runs of 2048
//     channels), where prefetching for every run at once does not pay.
// All orders walk the taps in the same order with the same operations per channel, so they
// give the same bits.
#pragma once

#include <cstdint>

namespace lg::cpu {

enum class TapOrder { InRegisters, Streaming, TapByTap };

// Whether the AVX2 tap reductions run on this CPU.
bool pool_taps_supported();

// out[c] = (taps[0][c] + taps[1][c] + ... ) / divisor, summed in tap order from 0, for c < C.
void sum_taps(TapOrder order, float* out, const float* const* taps, int64_t count, int64_t C, float divisor);

// out[c] = the largest taps[t][c], a NaN winning as in PyTorch, from -inf (no taps: -inf).
void max_taps(TapOrder order, float* out, const float* const* taps, int64_t count, int64_t C);

}  // namespace lg::cpu
