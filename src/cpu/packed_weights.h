// Convolution weights packed into the order and dtype a kernel reads, cached while the weight
// is unchanged. The key is the weight's storage (its unique id, never a reused address), its
// geometry and dtype, the requested order and dtype, and the storage's version counter, which
// every in-place op bumps -- so an optimizer step or copy_ into the weight repacks it.
#pragma once

#include <array>
#include <cstdint>

#include <layoutguard/tensor.h>

namespace lg::cpu {

// A dense tensor with weight's values in dtype `compute`, whose memory order (outermost first)
// is the dim permutation `order` of the 5-D weight. Returns weight itself when it already is
// exactly that; otherwise a cached packing (built on a miss).
Tensor packed_weight(const Tensor& weight, DType compute, const std::array<int, 5>& order);

struct PackCacheStats {
  int64_t hits = 0, misses = 0, entries = 0, bytes = 0;
};
// For tests and benchmarks.
PackCacheStats pack_cache_stats();
void clear_pack_cache();

}  // namespace lg::cpu
