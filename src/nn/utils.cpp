// convert_conv{2,3}d_weight_memory_format, after torch.nn.utils.memory_format.
#include <layoutguard/nn/utils.h>

#include <layoutguard/error.h>
#include <layoutguard/factories.h>
#include <layoutguard/nn/conv.h>

namespace lg::nn::utils {
namespace {

// PyTorch clones the weight into fmt and then resize_()s it with fmt, which restrides it to
// the format's canonical strides; a fresh empty(sizes, fmt) filled by copy_ is the same tensor.
template <class... Convs>
void convert_weights(Module& module, MemoryFormat fmt) {
  auto convert = [&](auto* conv) {
    if (!conv) return false;
    Tensor w = empty(conv->weight.sizes(), conv->weight.options(), fmt);
    w.copy_(conv->weight);
    conv->weight = w;
    return true;
  };
  (convert(dynamic_cast<Convs*>(&module)) || ...);
  for (auto& [name, child] : module.named_children()) convert_weights<Convs...>(*child, fmt);
}

void check_format(const char* fn, MemoryFormat fmt, MemoryFormat allowed) {
  if (fmt != MemoryFormat::Contiguous && fmt != allowed)
    throw ValueError(std::string("[nn::utils::") + fn + "] memory_format must be contiguous_format or " +
                     std::string(memory_format_name(allowed)) + ", got " + std::string(memory_format_name(fmt)));
}

}  // namespace

Module& convert_conv2d_weight_memory_format(Module& module, MemoryFormat fmt) {
  check_format("convert_conv2d_weight_memory_format", fmt, MemoryFormat::ChannelsLast);
  convert_weights<Conv2d, ConvTranspose2d>(module, fmt);
  return module;
}

Module& convert_conv3d_weight_memory_format(Module& module, MemoryFormat fmt) {
  check_format("convert_conv3d_weight_memory_format", fmt, MemoryFormat::ChannelsLast3d);
  convert_weights<Conv3d, ConvTranspose3d>(module, fmt);
  return module;
}

}  // namespace lg::nn::utils
