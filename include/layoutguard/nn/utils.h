// PyTorch's weight-conversion utilities (torch.nn.utils.convert_conv{2,3}d_weight_memory_format).
#pragma once

#include <layoutguard/layout.h>
#include <layoutguard/nn/module.h>

namespace lg::nn::utils {

// Walks `module` and every descendant; the weight of each Conv2d and ConvTranspose2d becomes a
// copy laid out in `fmt` with the strides lg::empty(sizes, fmt) gives -- also where size-1 dims
// make the old strides already "contiguous" in fmt (a 1x1 kernel, a single input channel), so
// the conv's suggest_memory_format() really changes. Biases and every other layer are left
// untouched. fmt: Contiguous or ChannelsLast (else ValueError). Returns `module`.
Module& convert_conv2d_weight_memory_format(Module& module, MemoryFormat fmt);
// The same for Conv3d and ConvTranspose3d; fmt: Contiguous or ChannelsLast3d.
Module& convert_conv3d_weight_memory_format(Module& module, MemoryFormat fmt);

}  // namespace lg::nn::utils
