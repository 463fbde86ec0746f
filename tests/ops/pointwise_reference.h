// Reference pointwise math in float64, written for clarity: the value PyTorch's definition of
// each op gives for one element. Tests compare the kernels against these.
#pragma once

#include <cmath>
#include <string_view>

namespace lg::testing {

inline double ref_clamp(double x, double lo, double hi) { return std::isnan(x) ? x : std::min(std::max(x, lo), hi); }

inline double ref_unary(std::string_view op, double x) {
  if (op == "neg") return -x;
  if (op == "abs") return std::fabs(x);
  if (op == "relu") return std::isnan(x) ? x : (x > 0 ? x : 0.0);
  if (op == "relu6") return ref_clamp(x, 0.0, 6.0);
  if (op == "leaky_relu") return x > 0 ? x : 0.01 * x;
  if (op == "elu") return x > 0 ? x : std::exp(x) - 1.0;
  if (op == "sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (op == "tanh") return std::tanh(x);
  if (op == "gelu") return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  if (op == "silu") return x / (1.0 + std::exp(-x));
  if (op == "hardswish") return x * ref_clamp(x + 3.0, 0.0, 6.0) / 6.0;
  if (op == "hardsigmoid") return ref_clamp(x + 3.0, 0.0, 6.0) / 6.0;
  if (op == "exp") return std::exp(x);
  if (op == "log") return std::log(x);
  if (op == "sqrt") return std::sqrt(x);
  if (op == "rsqrt") return 1.0 / std::sqrt(x);
  if (op == "clamp") return ref_clamp(x, -1.5, 2.5);  // the bounds the tests use
  return NAN;
}

inline double ref_binary(std::string_view op, double a, double b) {
  if (op == "add") return a + b;
  if (op == "sub") return a - b;
  if (op == "mul") return a * b;
  if (op == "div") return a / b;
  if (op == "maximum") return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
  if (op == "minimum") return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
  if (op == "pow") return std::pow(a, b);
  if (op == "eq") return a == b;
  if (op == "ne") return a != b;
  if (op == "lt") return a < b;
  if (op == "le") return a <= b;
  if (op == "gt") return a > b;
  if (op == "ge") return a >= b;
  return NAN;
}

}  // namespace lg::testing
