// The CPU element copy used by Tensor::copy_ and everything built on it.
#pragma once

#include <layoutguard/tensor.h>

namespace lg::detail {

// dst[i] = convert(src[i]) for every index i. Preconditions (checked by the callers): equal
// sizes (src already broadcast, stride 0 where expanded), both on the CPU, dst has no
// self-overlap, and dst does not overlap src.
void copy_elements_cpu(const Tensor& dst, const Tensor& src);

}  // namespace lg::detail
