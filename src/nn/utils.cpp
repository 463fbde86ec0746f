// convert_conv{2,3}d_weight_memory_format, after torch.nn.utils.memory_format.
#include <layoutguard/nn/utils.h>

#include <type_traits>

#include <layoutguard/error.h>
#include <layoutguard/factories.h>
#include <layoutguard/nn/conv.h>

#include "nn/tied_conversion.h"

namespace lg::nn::utils {
namespace {

// PyTorch clones the weight into fmt and then resize_()s it with fmt, which restrides it to
// the format's canonical strides; a fresh empty(sizes, fmt) filled by copy_ is the same tensor.
// With tied == nullptr only checks the weights, so that a bad one raises before any changed.
template <class... Convs>
void convert_weights(const char* fn, Module& module, MemoryFormat fmt, detail::TiedConversion* tied,
                     const std::string& path) {
  auto convert = [&](auto* conv) {
    if (!conv) return false;
    const Tensor& weight = conv->weight;
    using Conv = std::remove_cvref_t<decltype(*conv)>;
    const int64_t rank = std::is_same_v<Conv, Conv3d> || std::is_same_v<Conv, ConvTranspose3d> ? 5 : 4;
    if (!weight.defined() || weight.dim() != rank)
      throw ValueError(std::string("[nn::utils::") + fn + "] the " + conv->type_name() + " at \"" +
                       (path.empty() ? "<root>" : path) + "\" has " +
                       (weight.defined() ? "a weight of " + describe_layout(weight) : std::string("no weight")) +
                       "; required a " + std::to_string(rank) + "-D weight");
    if (!tied) return true;
    conv->weight = (*tied)(weight, [&](const Tensor& w) {
      Tensor out = empty(w.sizes(), w.options(), fmt);
      out.copy_(w);
      return out;
    });
    return true;
  };
  (convert(dynamic_cast<Convs*>(&module)) || ...);
  for (auto& [name, child] : module.named_children())
    convert_weights<Convs...>(fn, *child, fmt, tied, path.empty() ? name : path + "." + name);
}

void check_format(const char* fn, MemoryFormat fmt, MemoryFormat allowed) {
  if (fmt != MemoryFormat::Contiguous && fmt != allowed)
    throw ValueError(std::string("[nn::utils::") + fn + "] memory_format must be contiguous_format or " +
                     std::string(memory_format_name(allowed)) + ", got " + std::string(memory_format_name(fmt)));
}

}  // namespace

Module& convert_conv2d_weight_memory_format(Module& module, MemoryFormat fmt) {
  check_format("convert_conv2d_weight_memory_format", fmt, MemoryFormat::ChannelsLast);
  detail::TiedConversion tied;
  convert_weights<Conv2d, ConvTranspose2d>("convert_conv2d_weight_memory_format", module, fmt, nullptr, "");
  convert_weights<Conv2d, ConvTranspose2d>("convert_conv2d_weight_memory_format", module, fmt, &tied, "");
  return module;
}

Module& convert_conv3d_weight_memory_format(Module& module, MemoryFormat fmt) {
  check_format("convert_conv3d_weight_memory_format", fmt, MemoryFormat::ChannelsLast3d);
  detail::TiedConversion tied;
  convert_weights<Conv3d, ConvTranspose3d>("convert_conv3d_weight_memory_format", module, fmt, nullptr, "");
  convert_weights<Conv3d, ConvTranspose3d>("convert_conv3d_weight_memory_format", module, fmt, &tied, "");
  return module;
}

}  // namespace lg::nn::utils
