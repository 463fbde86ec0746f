// convert_conv{2,3}d_weight_memory_format, after torch.nn.utils.memory_format.
#include <layoutguard/nn/utils.h>

#include <string>
#include <type_traits>
#include <vector>

#include <layoutguard/error.h>
#include <layoutguard/factories.h>
#include <layoutguard/nn/conv.h>

#include "nn/tied_conversion.h"

namespace lg::nn::utils {
namespace {

// PyTorch clones the weight into fmt and then resize_()s it with fmt, which restrides it to
// the format's canonical strides; a fresh empty(sizes, fmt) filled by copy_ is the same tensor.
// With tied == nullptr only checks the weights, so that a bad one raises before any changed.
// The tree is walked with an explicit stack (it may be deeper than nested calls allow); a
// module's dotted path is made only for the error that names it.
template <class... Convs>
void convert_weights(const char* fn, Module& root, MemoryFormat fmt, detail::TiedConversion* tied) {
  struct Node {
    Module* module;
    size_t parent;            // index in `nodes`; the root is its own parent
    std::string name;         // in the parent
  };
  std::vector<Node> nodes{{&root, 0, ""}};
  std::vector<size_t> pending{0};
  const auto path_of = [&nodes](size_t i) {
    std::vector<const std::string*> names;
    for (; i != 0; i = nodes[i].parent) names.push_back(&nodes[i].name);
    std::string out;
    for (auto it = names.rbegin(); it != names.rend(); ++it) out += (out.empty() ? "" : ".") + **it;
    return out;
  };
  while (!pending.empty()) {
    const size_t at = pending.back();
    pending.pop_back();
    Module& module = *nodes[at].module;
    auto convert = [&](auto* conv) {
      if (!conv) return false;
      const Tensor& weight = conv->weight;
      using Conv = std::remove_cvref_t<decltype(*conv)>;
      const int64_t rank = std::is_same_v<Conv, Conv3d> || std::is_same_v<Conv, ConvTranspose3d> ? 5 : 4;
      if (!weight.defined() || weight.dim() != rank) {
        const std::string path = path_of(at);
        throw ValueError(std::string("[nn::utils::") + fn + "] the " + conv->type_name() + " at \"" +
                         (path.empty() ? "<root>" : path) + "\" has " +
                         (weight.defined() ? "a weight of " + describe_layout(weight) : std::string("no weight")) +
                         "; required a " + std::to_string(rank) + "-D weight");
      }
      if (!tied) return true;
      conv->weight = (*tied)(weight, [&](const Tensor& w) {
        Tensor out = empty(w.sizes(), w.options(), fmt);
        out.copy_(w);
        return out;
      });
      return true;
    };
    (convert(dynamic_cast<Convs*>(&module)) || ...);
    const auto children = module.named_children();
    // Reversed, so that the first child is converted first.
    for (auto it = children.rbegin(); it != children.rend(); ++it) {
      nodes.push_back({it->second.get(), at, it->first});
      pending.push_back(nodes.size() - 1);
    }
  }
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
  convert_weights<Conv2d, ConvTranspose2d>("convert_conv2d_weight_memory_format", module, fmt, nullptr);
  convert_weights<Conv2d, ConvTranspose2d>("convert_conv2d_weight_memory_format", module, fmt, &tied);
  return module;
}

Module& convert_conv3d_weight_memory_format(Module& module, MemoryFormat fmt) {
  check_format("convert_conv3d_weight_memory_format", fmt, MemoryFormat::ChannelsLast3d);
  detail::TiedConversion tied;
  convert_weights<Conv3d, ConvTranspose3d>("convert_conv3d_weight_memory_format", module, fmt, nullptr);
  convert_weights<Conv3d, ConvTranspose3d>("convert_conv3d_weight_memory_format", module, fmt, &tied);
  return module;
}

}  // namespace lg::nn::utils
