// Convolution weights packed into the order and dtype a kernel reads, cached while the weight
// is unchanged. The key is the weight's storage (its unique id, never a reused address), its
// geometry and dtype, the requested order and dtype, and the storage's version counter, which
// every in-place op bumps -- so an optimizer step or copy_ into the weight repacks it.
#pragma once

#include <array>
#include <cstdint>

#include <layoutguard/tensor.h>

namespace lg::cpu {

// The weight's memory order the NHWC GEMM reads as B: [tap][i][o], a (taps x C_in/groups) x
// C_out matrix.
constexpr std::array<int, 5> kOrderTapsIO{2, 3, 4, 1, 0};

// A dense tensor with weight's values in dtype `compute`, whose memory order (outermost first)
// is the dim permutation `order` of the 5-D weight. Returns weight itself when it already is
// exactly that; otherwise a cached packing (built on a miss).
Tensor packed_weight(const Tensor& weight, DType compute, const std::array<int, 5>& order);

// The weight as the panel GEMM's B (cpu/panel_gemm.h), float32, group after group: for group
// gi, pack_panels of the [(kD, kH, kW, C_in/groups) x C_out/groups] matrix. Cached like
// packed_weight. Packing is portable; running the panel GEMM needs panel_gemm_supported().
Tensor packed_weight_panels(const Tensor& weight, int64_t groups);

struct PackCacheStats {
  int64_t hits = 0, misses = 0, entries = 0, bytes = 0;
};
// For tests and benchmarks.
PackCacheStats pack_cache_stats();
void clear_pack_cache();

}  // namespace lg::cpu
