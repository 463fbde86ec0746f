// Parameter-free activation layers; each forwards to the public op of the same name.
#pragma once

#include <string>

#include <layoutguard/nn/module.h>
#include <layoutguard/pointwise.h>

namespace lg::nn {

#define LG_NN_ACTIVATION(Name, op)                                        \
  class Name : public Module {                                            \
   public:                                                                \
    Name() : Module(#Name) {}                                             \
    Tensor forward(const Tensor& input) override { return op(input); }    \
  }
LG_NN_ACTIVATION(ReLU, lg::relu);
LG_NN_ACTIVATION(ReLU6, lg::relu6);
LG_NN_ACTIVATION(SiLU, lg::silu);
LG_NN_ACTIVATION(Hardswish, lg::hardswish);
LG_NN_ACTIVATION(Sigmoid, lg::sigmoid);
#undef LG_NN_ACTIVATION

class GELU : public Module {
 public:
  // approximate: "none" or "tanh" (checked by the op).
  explicit GELU(std::string approximate = "none") : Module("GELU"), approximate_(std::move(approximate)) {}
  Tensor forward(const Tensor& input) override { return lg::gelu(input, approximate_); }
  std::string extra_repr() const override { return "approximate='" + approximate_ + "'"; }

 private:
  std::string approximate_;
};

}  // namespace lg::nn
