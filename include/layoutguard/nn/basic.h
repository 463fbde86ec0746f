// Linear, Flatten, Dropout, Identity, Upsample and the Sequential container.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <layoutguard/nn/module.h>
#include <layoutguard/nn/options.h>

namespace lg::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  LG_NN_ARG(int64_t, in_features);
  LG_NN_ARG(int64_t, out_features);
  LG_NN_ARG(bool, bias) = true;
};

class Linear : public Module {
 public:
  explicit Linear(LinearOptions options);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  Tensor weight, bias;  // [out, in], [out]

 private:
  LinearOptions options_;
};

class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1) : Module("Flatten"), start_(start_dim), end_(end_dim) {}
  Tensor forward(const Tensor& input) override { return input.flatten(start_, end_); }

 private:
  int64_t start_, end_;
};

class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);  // ValueError unless 0 <= p <= 1
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  double p_;
};

class Identity : public Module {
 public:
  Identity() : Module("Identity") {}
  Tensor forward(const Tensor& input) override { return input; }
};

struct UpsampleOptions {
  LG_NN_ARG(std::vector<int64_t>, size) = {};
  LG_NN_ARG(std::vector<double>, scale_factor) = {};
  LG_NN_ARG(std::string, mode) = "nearest";  // nearest, bilinear, bicubic, trilinear
  LG_NN_ARG(std::optional<bool>, align_corners) = std::nullopt;
};

class Upsample : public Module {
 public:
  explicit Upsample(UpsampleOptions options) : Module("Upsample"), options_(std::move(options)) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

 private:
  UpsampleOptions options_;
};

// Runs its children in order. Children are named "0", "1", ... unless a name is given
// (torchvision's DenseNet names them: "conv0", "denseblock1", ...).
class Sequential : public Module {
 public:
  Sequential() : Module("Sequential") {}
  template <class M>
  std::shared_ptr<M> push_back(std::shared_ptr<M> module) {
    return push_back(std::to_string(items_.size()), std::move(module));
  }
  template <class M>
  std::shared_ptr<M> push_back(std::string name, std::shared_ptr<M> module) {
    items_.push_back(register_module(std::move(name), module));
    return module;
  }
  Tensor forward(const Tensor& input) override;
  size_t size() const { return items_.size(); }
  const std::shared_ptr<Module>& operator[](size_t i) const;  // IndexError past the end

 private:
  std::vector<std::shared_ptr<Module>> items_;
};

}  // namespace lg::nn
