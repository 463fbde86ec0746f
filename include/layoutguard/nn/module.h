// lg::nn::Module: the base of every layer and model, after libtorch's C++ frontend.
//
// A module owns its parameters and buffers as Tensor members and registers pointers to them, so
// `conv->weight` and `named_parameters()` are the same tensor, and to()/load_state_dict() update
// the members in place. Modules are created with std::make_shared and never copied or moved;
// a child knows the name its parent registered it under, and calling a module (operator())
// pushes that name on the guard's module stack, so a violation inside names e.g.
// "layer3.4.conv2". A module registered in several places has all its names ("0|2"), because
// it cannot know which place called it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <layoutguard/device.h>
#include <layoutguard/dtype.h>
#include <layoutguard/layout.h>
#include <layoutguard/nn/safetensors.h>
#include <layoutguard/tensor.h>

namespace lg::nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Module {
 public:
  explicit Module(std::string type_name) : type_name_(std::move(type_name)) {}
  virtual ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Runs forward() inside a guard::ModuleScope named after this module's place in its parent.
  Tensor operator()(const Tensor& input);
  virtual Tensor forward(const Tensor& input) = 0;

  const std::string& type_name() const { return type_name_; }  // "Conv2d", "ResNet", ...
  const std::string& name() const { return name_; }  // in the parent ("" at the root; "a|b" if shared)

  // Dotted names, depth first, in registration order ("layer1.0.conv1.weight"). Undefined
  // slots (a Conv2d without bias) are left out. As in PyTorch, a tensor held by several slots
  // (tied weights, a module registered twice) is listed once, under its first name, so an
  // optimiser or a parameter count sees it once; state_dict() keeps every name.
  NamedTensors named_parameters(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true) const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const;
  // Every module below and including this one, each once (a shared one under its first name);
  // this one is named "".
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules();
  std::vector<Tensor> parameters(bool recurse = true) const;

  // Training mode (batch statistics in norms, active dropout); eval() is train(false).
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Like nn.Module.to: every parameter and buffer of rank 4 (ChannelsLast) or rank 5
  // (ChannelsLast3d) is converted; Contiguous converts ranks 4 and 5; other ranks are left as
  // they are (PyTorch raises for a rank-5 tensor with channels_last; we skip it, see
  // docs/design.md). Preserve is a ValueError.
  Module& to(MemoryFormat fmt);
  // Floating-point parameters and buffers only (num_batches_tracked stays int64).
  Module& to(DType dtype);
  Module& to(Device device);

  // Parameters and buffers by dotted name (buffers include BatchNorm's num_batches_tracked).
  StateDict state_dict() const;
  // Copies values in, keeping each member's device, dtype and layout. With strict, missing and
  // unexpected keys are errors; shape mismatches always are. One lg::ValueError lists every
  // missing key, unexpected key and shape mismatch together. Dtypes convert (float16 into float32).
  void load_state_dict(const StateDict& dict, bool strict = true);

  // One line per module: "layer1.0.conv1  Conv2d(64, 64, kernel_size=[3, 3], ...)".
  std::string describe() const;
  virtual std::string extra_repr() const { return {}; }

 protected:
  // `slot` must be a member of this module (it outlives the registration).
  void register_parameter(std::string name, Tensor* slot);
  // `optional_in_checkpoint`: a checkpoint may lack it and still load strictly, the member
  // keeping its value (BatchNorm's num_batches_tracked, which PyTorch fills in the same way).
  void register_buffer(std::string name, Tensor* slot, bool optional_in_checkpoint = false);
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> child) {
    attach(std::move(name), child);
    return child;
  }

 private:
  struct Slot {
    std::string name;
    Tensor* tensor;
    bool is_parameter;
    bool optional_in_checkpoint = false;
  };
  void attach(std::string name, std::shared_ptr<Module> child);
  void register_slot(std::string name, Tensor* slot, bool is_parameter, bool optional = false);
  // visit(path, module, its shared_ptr or null for this one) for this module and every module
  // below it, parents first, in registration order; path() makes the dotted path; `once`: a
  // shared module only at its first place.
  template <class Visit>
  void walk(bool once, Visit&& visit) const;
  template <class Fn>
  void for_each_slot(Fn&& fn) const;
  template <class Fn>
  void for_each_slot_in(bool recurse, Fn&& fn) const;
  template <class Fn>
  void for_each_slot_info(Fn&& fn) const;

  std::string type_name_;
  std::string name_;
  bool training_ = true;
  std::vector<Slot> slots_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

}  // namespace lg::nn
