// Linear, Dropout, Upsample, Sequential.
#include <layoutguard/nn/basic.h>

#include <layoutguard/linalg.h>
#include <layoutguard/reduction.h>
#include <layoutguard/resampling.h>

#include "init.h"

namespace lg::nn {

Linear::Linear(LinearOptions o) : Module("Linear"), options_(std::move(o)) {
  detail::require(options_.in_features() > 0 && options_.out_features() > 0, "Linear",
                  "in_features and out_features must be positive, got " + std::to_string(options_.in_features()) +
                      " and " + std::to_string(options_.out_features()));
  const double bound = 1.0 / std::sqrt(double(options_.in_features()));
  weight = detail::uniform({options_.out_features(), options_.in_features()}, bound, "Linear");
  if (options_.bias()) bias = detail::uniform({options_.out_features()}, bound, "Linear");
  register_parameter("weight", &weight);
  register_parameter("bias", &bias);
}

Tensor Linear::forward(const Tensor& input) {
  return linear(input, weight, bias.defined() ? std::optional<Tensor>(bias) : std::nullopt);
}

std::string Linear::extra_repr() const {
  return "in_features=" + std::to_string(options_.in_features()) +
         ", out_features=" + std::to_string(options_.out_features()) + (options_.bias() ? "" : ", bias=False");
}

Dropout::Dropout(double p) : Module("Dropout"), p_(p) {
  detail::require(p >= 0 && p <= 1, "Dropout", "p must be in [0, 1], got " + std::to_string(p));
}

Tensor Dropout::forward(const Tensor& input) { return dropout(input, p_, is_training()); }

std::string Dropout::extra_repr() const { return "p=" + std::to_string(p_); }

Tensor Upsample::forward(const Tensor& input) {
  return interpolate(input, options_.size(), options_.scale_factor(), options_.mode(), options_.align_corners());
}

std::string Upsample::extra_repr() const {
  std::string s = options_.size().empty() ? "scale_factor=" + std::to_string(options_.scale_factor().empty() ? 0.0 : options_.scale_factor()[0])
                                          : "size=" + to_string(options_.size());
  return s + ", mode='" + options_.mode() + "'";
}

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (const std::shared_ptr<Module>& m : items_) x = (*m)(x);
  return x;
}

const std::shared_ptr<Module>& Sequential::operator[](size_t i) const {
  if (i >= items_.size())
    throw IndexError("[nn::Sequential] index " + std::to_string(i) + " out of range for " +
                     std::to_string(items_.size()) + " modules");
  return items_[i];
}

}  // namespace lg::nn
