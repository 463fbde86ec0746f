// The CPU kernel files' registration functions; each keeps its kernels in an anonymous namespace.
#pragma once

namespace lg {
namespace dispatch {
class KernelTable;
}
void register_copy_kernels(dispatch::KernelTable& table);  // copy_, fill_, shuffles (src/cpu/copy.cpp)
void register_pointwise_kernels(dispatch::KernelTable& table);  // src/cpu/pointwise.cpp
void register_conv_kernels(dispatch::KernelTable& table);       // src/cpu/conv.cpp
void register_conv_transpose_kernels(dispatch::KernelTable& table);  // src/cpu/conv_transpose.cpp
void register_channel_norm_kernels(dispatch::KernelTable& table);   // src/cpu/channel_norm.cpp
void register_layer_norm_kernels(dispatch::KernelTable& table);     // src/cpu/layer_norm.cpp
void register_pooling_kernels(dispatch::KernelTable& table);        // src/cpu/pooling.cpp
void register_cat_kernels(dispatch::KernelTable& table);            // src/cpu/cat.cpp
void register_upsample_kernels(dispatch::KernelTable& table);       // src/cpu/upsample.cpp
void register_pad_kernels(dispatch::KernelTable& table);            // src/cpu/pad.cpp
void register_matmul_kernels(dispatch::KernelTable& table);         // src/cpu/matmul.cpp
void register_reduce_kernels(dispatch::KernelTable& table);         // src/cpu/reduce.cpp
void register_softmax_kernels(dispatch::KernelTable& table);        // src/cpu/softmax.cpp
}  // namespace lg
