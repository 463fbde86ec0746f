// Parameter-free activation layers; each forwards to the public op of the same name.
#pragma once

#include <string>

#include <layoutguard/nn/module.h>
#include <layoutguard/pointwise.h>

namespace lg::nn {

// With `inplace` (PyTorch's inplace=True) the layer overwrites its input and returns it: no new
// tensor, so one memory pass fewer. torchvision builds ResNet and MobileNetV2 that way.
// `kShowInplace`: whether the module prints the flag, as PyTorch's does (Hardswish does not).
#define LG_NN_ACTIVATION_INPLACE(Name, op, kShowInplace)                                            \
  class Name : public Module {                                                                      \
   public:                                                                                          \
    explicit Name(bool inplace = false) : Module(#Name), inplace_(inplace) {}                       \
    Tensor forward(const Tensor& input) override { return inplace_ ? op##_(input) : op(input); }    \
    std::string extra_repr() const override { return kShowInplace && inplace_ ? "inplace=True" : ""; } \
    bool inplace() const { return inplace_; }                                                       \
                                                                                                    \
   private:                                                                                         \
    bool inplace_;                                                                                  \
  }
LG_NN_ACTIVATION_INPLACE(ReLU, lg::relu, true);
LG_NN_ACTIVATION_INPLACE(ReLU6, lg::relu6, true);
LG_NN_ACTIVATION_INPLACE(SiLU, lg::silu, true);
LG_NN_ACTIVATION_INPLACE(Hardswish, lg::hardswish, false);
#undef LG_NN_ACTIVATION_INPLACE

class Sigmoid : public Module {
 public:
  Sigmoid() : Module("Sigmoid") {}
  Tensor forward(const Tensor& input) override { return lg::sigmoid(input); }
};

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
