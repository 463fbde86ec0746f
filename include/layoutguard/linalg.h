// Matrix products with ATen's names and argument order, on OpenBLAS for float32 and float64
// (float16 and bfloat16 compute in float32; integer dtypes use a plain loop). Outputs are
// row-major contiguous, as in PyTorch; the guard treats these ops as RankChanging.
#pragma once

#include <optional>

#include <layoutguard/scalar.h>
#include <layoutguard/tensor.h>

namespace lg {

// (n, k) @ (k, m) -> (n, m).
Tensor mm(const Tensor& self, const Tensor& mat2);
// (b, n, k) @ (b, k, m) -> (b, n, m).
Tensor bmm(const Tensor& self, const Tensor& mat2);
// beta * self + alpha * (mat1 @ mat2); self broadcasts to (n, m). With beta == 0, self is
// ignored (NaN in it does not propagate).
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
             const Scalar& alpha = 1);
// torch.matmul: 1-D x 1-D is a dot product (0-dim result); 2-D x 2-D is mm; a 1-D operand is
// promoted to a matrix and the added dim removed afterwards; batch dims broadcast.
Tensor matmul(const Tensor& self, const Tensor& other);
// input (*, in_features), weight (out_features, in_features), bias (out_features) or absent:
// input @ weight^T + bias.
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt);

}  // namespace lg
