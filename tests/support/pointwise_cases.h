// The pointwise ops' test table: per op, one call of it and its float64 reference, the value
// PyTorch's definition gives for one element, written for clarity and independently of the
// kernels' math (src/dispatch/pointwise_math.h). The CPU value tests (tests/ops), the
// dispatcher's one-sample-per-op test (tests/dispatch) and the CUDA-against-CPU tests
// (tests/cuda) all iterate this table, so a new pointwise op is tested everywhere by one row.
#pragma once

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include <layoutguard/pointwise.h>

namespace lg::testing {

inline double ref_clamp(double x, double lo, double hi) { return std::isnan(x) ? x : std::min(std::max(x, lo), hi); }

// erf(x) = 2/sqrt(pi) e^(-x^2) sum_n 2^n x^(2n+1) / (1 * 3 * ... * (2n+1)): every term has the
// sign of x, so the sum loses nothing to cancellation (and uses no libm erf).
inline double ref_erf(double x) {
  if (std::isnan(x)) return x;
  if (std::fabs(x) > 6.0) return x > 0 ? 1.0 : -1.0;  // within 1e-17 of +-1
  double term = x, sum = x;
  for (int n = 1; n < 1000 && std::fabs(term) > 1e-18 * std::fabs(sum); ++n) {
    term *= 2.0 * x * x / (2.0 * n + 1.0);
    sum += term;
  }
  return 2.0 / std::sqrt(3.14159265358979323846) * std::exp(-x * x) * sum;
}

// Which inputs an op's tests feed it.
enum class Inputs {
  Any,       // values around zero (the ramps of op_testing.h, the noise of tensor_testing.h)
  Positive,  // values > 0 (log, sqrt, rsqrt)
  Wide,      // the usual values times 3, so that relu6 reaches its upper bound
};

struct UnaryCase {
  std::string_view op;              // the name in op_list.def
  Tensor (*call)(const Tensor& x);  // one call of the op, nothing else
  double (*reference)(double x);
  Inputs inputs = Inputs::Any;
};

struct BinaryCase {
  std::string_view op;
  Tensor (*call)(const Tensor& a, const Tensor& b);
  double (*reference)(double a, double b);
  bool positive_first = false;  // pow: a non-negative base
  bool returns_bool = false;    // the comparisons (reference: 1.0 for true)
};

inline const std::vector<UnaryCase>& unary_cases() {
  static const std::vector<UnaryCase> cases{
      {"neg", [](const Tensor& x) { return lg::neg(x); }, [](double x) { return -x; }},
      {"abs", [](const Tensor& x) { return lg::abs(x); }, [](double x) { return std::fabs(x); }},
      {"relu", [](const Tensor& x) { return lg::relu(x); }, [](double x) { return std::isnan(x) ? x : (x > 0 ? x : 0.0); }},
      {"relu6", [](const Tensor& x) { return lg::relu6(x); }, [](double x) { return ref_clamp(x, 0.0, 6.0); }, Inputs::Wide},
      {"leaky_relu", [](const Tensor& x) { return lg::leaky_relu(x); }, [](double x) { return x > 0 ? x : 0.01 * x; }},
      {"elu", [](const Tensor& x) { return lg::elu(x); }, [](double x) { return x > 0 ? x : std::exp(x) - 1.0; }},
      {"sigmoid", [](const Tensor& x) { return lg::sigmoid(x); }, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
      {"tanh", [](const Tensor& x) { return lg::tanh(x); }, [](double x) { return std::tanh(x); }},
      {"gelu", [](const Tensor& x) { return lg::gelu(x); }, [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }},
      {"silu", [](const Tensor& x) { return lg::silu(x); }, [](double x) { return x / (1.0 + std::exp(-x)); }},
      {"hardswish", [](const Tensor& x) { return lg::hardswish(x); }, [](double x) { return x * ref_clamp(x + 3.0, 0.0, 6.0) / 6.0; }},
      {"hardsigmoid", [](const Tensor& x) { return lg::hardsigmoid(x); }, [](double x) { return ref_clamp(x + 3.0, 0.0, 6.0) / 6.0; }},
      {"exp", [](const Tensor& x) { return lg::exp(x); }, [](double x) { return std::exp(x); }},
      {"log", [](const Tensor& x) { return lg::log(x); }, [](double x) { return std::log(x); }, Inputs::Positive},
      {"sqrt", [](const Tensor& x) { return lg::sqrt(x); }, [](double x) { return std::sqrt(x); }, Inputs::Positive},
      {"rsqrt", [](const Tensor& x) { return lg::rsqrt(x); }, [](double x) { return 1.0 / std::sqrt(x); }, Inputs::Positive},
      {"erf", [](const Tensor& x) { return lg::erf(x); },
       [](double x) { return ref_erf(x); }},
      {"clamp", [](const Tensor& x) { return lg::clamp(x, -1.5, 2.5); }, [](double x) { return ref_clamp(x, -1.5, 2.5); }},
  };
  return cases;
}

inline const std::vector<BinaryCase>& binary_cases() {
  static const std::vector<BinaryCase> cases{
      {"add", [](const Tensor& a, const Tensor& b) { return lg::add(a, b, 0.5); }, [](double a, double b) { return a + 0.5 * b; }},
      {"sub", [](const Tensor& a, const Tensor& b) { return lg::sub(a, b); }, [](double a, double b) { return a - b; }},
      {"mul", [](const Tensor& a, const Tensor& b) { return lg::mul(a, b); }, [](double a, double b) { return a * b; }},
      {"div", [](const Tensor& a, const Tensor& b) { return lg::div(a, b); }, [](double a, double b) { return a / b; }},
      {"maximum", [](const Tensor& a, const Tensor& b) { return lg::maximum(a, b); },
       [](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }},
      {"minimum", [](const Tensor& a, const Tensor& b) { return lg::minimum(a, b); },
       [](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }},
      {"pow", [](const Tensor& a, const Tensor& b) { return lg::pow(a, b); }, [](double a, double b) { return std::pow(a, b); }, true},
      {"eq", [](const Tensor& a, const Tensor& b) { return lg::eq(a, b); }, [](double a, double b) { return double(a == b); }, false, true},
      {"ne", [](const Tensor& a, const Tensor& b) { return lg::ne(a, b); }, [](double a, double b) { return double(a != b); }, false, true},
      {"lt", [](const Tensor& a, const Tensor& b) { return lg::lt(a, b); }, [](double a, double b) { return double(a < b); }, false, true},
      {"le", [](const Tensor& a, const Tensor& b) { return lg::le(a, b); }, [](double a, double b) { return double(a <= b); }, false, true},
      {"gt", [](const Tensor& a, const Tensor& b) { return lg::gt(a, b); }, [](double a, double b) { return double(a > b); }, false, true},
      {"ge", [](const Tensor& a, const Tensor& b) { return lg::ge(a, b); }, [](double a, double b) { return double(a >= b); }, false, true},
  };
  return cases;
}

}  // namespace lg::testing
