// Parameter initialisers and size-argument expansion shared by the layers and models.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <layoutguard/error.h>
#include <layoutguard/factories.h>
#include <layoutguard/layout.h>
#include <layoutguard/pointwise.h>

#include "core/error_tag.h"

namespace lg::nn::detail {

// A layer's parameter made by make(): a size no tensor can have, or one that does not fit in
// memory, is reported as the layer's ("[nn::Linear] [empty] sizes ..."), not only the factory's.
template <typename Make>
Tensor parameter_for(const std::string& layer, Make&& make) {
  return lg::detail::tagged("nn::" + layer, make);
}

// Uniform in [-bound, bound): PyTorch's default for conv and linear weights and biases
// (kaiming_uniform with a = sqrt(5) gives bound = 1 / sqrt(fan_in)).
inline Tensor uniform(IntArrayRef sizes, double bound, const std::string& layer) {
  return parameter_for(layer, [&] { return lg::mul(lg::sub(lg::rand(sizes), 0.5), 2.0 * bound); });
}

// `value` everywhere: the normalisation layers' weights, biases and running statistics.
inline Tensor filled(IntArrayRef sizes, double value, const std::string& layer) {
  return parameter_for(layer, [&] { return lg::full(sizes, value); });
}

// Normal(0, std): torchvision's kaiming_normal_(mode="fan_out") uses std = sqrt(2 / fan_out).
inline Tensor normal(IntArrayRef sizes, double std) { return lg::mul(lg::randn(sizes), std); }

// One value for every spatial dim, or exactly `dims` values; ValueError otherwise.
inline std::vector<int64_t> expand(const std::string& layer, const char* what, const std::vector<int64_t>& v,
                                   int dims) {
  if (v.size() == 1) return std::vector<int64_t>(dims, v[0]);
  if (static_cast<int>(v.size()) == dims) return v;
  throw ValueError("[nn::" + layer + "] " + what + " must have 1 or " + std::to_string(dims) + " values, got " +
                   to_string(v));
}

inline void require(bool ok, const std::string& layer, const std::string& message) {
  if (!ok) throw ValueError("[nn::" + layer + "] " + message);
}

}  // namespace lg::nn::detail
