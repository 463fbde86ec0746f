// Pointwise operators with ATen's names, signatures, broadcasting, type promotion and output
// layout (TensorIterator's rule: a channels_last input keeps a channels_last output;
// the first operand wins ties). In-place forms (relu_, add_) write into their first argument;
// out= forms (add_out) write into `out`, which keeps its strides when it already has the
// result's sizes and is replaced by a fresh tensor when it is empty.
#pragma once

#include <optional>
#include <string_view>

#include <layoutguard/scalar.h>
#include <layoutguard/tensor.h>

namespace lg {

// ---- Unary ----
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor relu6(const Tensor& x);
Tensor leaky_relu(const Tensor& x, const Scalar& negative_slope = 0.01);
Tensor elu(const Tensor& x, const Scalar& alpha = 1, const Scalar& scale = 1, const Scalar& input_scale = 1);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
// approximate: "none" (erf) or "tanh".
Tensor gelu(const Tensor& x, std::string_view approximate = "none");
Tensor silu(const Tensor& x);
Tensor hardswish(const Tensor& x);
Tensor hardsigmoid(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor erf(const Tensor& x);  // the Gauss error function
// At least one bound; min > max gives max everywhere, as in PyTorch.
Tensor clamp(const Tensor& x, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);

const Tensor& neg_(const Tensor& x);
const Tensor& abs_(const Tensor& x);
const Tensor& relu_(const Tensor& x);
const Tensor& relu6_(const Tensor& x);
const Tensor& leaky_relu_(const Tensor& x, const Scalar& negative_slope = 0.01);
const Tensor& elu_(const Tensor& x, const Scalar& alpha = 1, const Scalar& scale = 1, const Scalar& input_scale = 1);
const Tensor& sigmoid_(const Tensor& x);
const Tensor& tanh_(const Tensor& x);
const Tensor& silu_(const Tensor& x);
const Tensor& hardswish_(const Tensor& x);
const Tensor& hardsigmoid_(const Tensor& x);
const Tensor& exp_(const Tensor& x);
const Tensor& log_(const Tensor& x);
const Tensor& sqrt_(const Tensor& x);
const Tensor& rsqrt_(const Tensor& x);
const Tensor& erf_(const Tensor& x);
const Tensor& clamp_(const Tensor& x, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);

// ---- Binary, with broadcasting ----
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);  // a + alpha * b
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);  // a - alpha * b
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Scalar& b);
Tensor div(const Tensor& a, const Tensor& b);  // true division: integers give float32
Tensor div(const Tensor& a, const Scalar& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Scalar& b);
Tensor pow(const Scalar& a, const Tensor& b);

const Tensor& add_(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
const Tensor& add_(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
const Tensor& sub_(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
const Tensor& sub_(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
const Tensor& mul_(const Tensor& a, const Tensor& b);
const Tensor& mul_(const Tensor& a, const Scalar& b);
const Tensor& div_(const Tensor& a, const Tensor& b);
const Tensor& div_(const Tensor& a, const Scalar& b);
const Tensor& pow_(const Tensor& a, const Tensor& b);
const Tensor& pow_(const Tensor& a, const Scalar& b);

Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& maximum_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& minimum_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& pow_out(Tensor& out, const Tensor& a, const Tensor& b);

// ---- Comparisons: bool results ----
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Scalar& b);
Tensor ne(const Tensor& a, const Scalar& b);
Tensor lt(const Tensor& a, const Scalar& b);
Tensor le(const Tensor& a, const Scalar& b);
Tensor gt(const Tensor& a, const Scalar& b);
Tensor ge(const Tensor& a, const Scalar& b);

// cond ? a : b, elementwise; cond must be bool.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b);
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b);

// ---- Operators ----
inline Tensor operator-(const Tensor& x) { return neg(x); }
inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
inline Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
inline Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }

}  // namespace lg
