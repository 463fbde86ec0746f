// Size and stride arithmetic that cannot pass int64 silently: signed overflow is undefined
// behaviour, and a size or stride that wrapped would address memory outside the storage. Every
// product and sum of sizes, strides, offsets and element counts that user input can push past
// int64 goes through these. (A tensor with a zero-size dim may hold any strides, since it
// addresses nothing: products of its sizes and strides are not bounded by its storage.)
// Internal to src/.
#pragma once

#include <cstdint>
#include <limits>

#include <layoutguard/error.h>

namespace lg::detail {

// a * b, or lg::ValueError "`context...`: a * b is beyond int64".
template <typename... Context>
int64_t checked_mul(int64_t a, int64_t b, const Context&... context) {
  int64_t product = 0;
  LG_CHECK(!__builtin_mul_overflow(a, b, &product), context..., ": ", a, " * ", b, " is beyond int64");
  return product;
}

// a + b, or lg::ValueError "`context...`: a + b is beyond int64".
template <typename... Context>
int64_t checked_add(int64_t a, int64_t b, const Context&... context) {
  int64_t sum = 0;
  LG_CHECK(!__builtin_add_overflow(a, b, &sum), context..., ": ", a, " + ", b, " is beyond int64");
  return sum;
}

// a * b for non-negative a and b, or INT64_MAX when that passes int64: for bounds that strides
// are compared with (no stride exceeds INT64_MAX), where PyTorch's own product would wrap.
inline int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? std::numeric_limits<int64_t>::max() : product;
}

}  // namespace lg::detail
