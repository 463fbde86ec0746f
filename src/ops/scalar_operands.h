// Python-scalar operands of pointwise ops (`x + 1.0`) as 0-dim tensors, cached per device.
#pragma once

#include <functional>

#include <layoutguard/scalar.h>
#include <layoutguard/tensor.h>

namespace lg::detail {

// The 0-dim tensor of `dtype` on `device` that `make()` builds for `value`, built once per
// (device, dtype, value) and then reused: on a GPU, making it takes a fill and a cast, two
// launches and two allocations per call -- more host time than the op it feeds when the
// tensors are small (bench/host_instructions: x + 1.0 took 22k host instructions against 10k
// for x + y). The tensor is only ever read (an operand, never a result); a caller must not
// write to it. Beyond kMaxCachedScalars entries the cache starts over.
Tensor cached_scalar_operand(const Scalar& value, DType dtype, Device device, const std::function<Tensor()>& make);

inline constexpr size_t kMaxCachedScalars = 4096;

}  // namespace lg::detail
