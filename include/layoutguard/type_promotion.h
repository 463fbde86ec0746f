// PyTorch's type promotion for the dtypes layoutguard has: which dtype a pointwise op computes
// in and returns, and which casts an out= tensor may receive.
#pragma once

#include <span>

#include <layoutguard/dtype.h>
#include <layoutguard/scalar.h>
#include <layoutguard/tensor.h>

namespace lg {

// torch.promote_types: bool < integers < floating; uint8 + int32 = int32; float16 + bfloat16 =
// float32; a floating type wins over any integer.
DType promote_types(DType a, DType b);

// torch.can_cast: no floating -> integral, no non-bool -> bool.
bool can_cast(DType from, DType to);

// torch.result_type over tensors and scalars: tensors with dims outrank 0-dim tensors, which
// outrank scalars, except that a higher category (integral -> floating, bool -> integral) from
// a lower tier still promotes; a floating scalar counts as float32 (the default dtype).
DType result_type(std::span<const Tensor> tensors, std::span<const Scalar> scalars = {});

}  // namespace lg
