// register_cpu_kernels: the CPU backend's only entry into the kernel table.
#include "cpu/register.h"

#include "dispatch/kernel_table.h"

namespace lg {

void register_cpu_kernels(dispatch::KernelTable& table) {
  register_copy_kernels(table);
  register_pointwise_kernels(table);
  register_conv_kernels(table);
  register_conv_transpose_kernels(table);
  register_channel_norm_kernels(table);
  register_layer_norm_kernels(table);
  register_pooling_kernels(table);
  register_cat_kernels(table);
  register_upsample_kernels(table);
  register_pad_kernels(table);
  register_matmul_kernels(table);
  register_reduce_kernels(table);
  register_softmax_kernels(table);
}

}  // namespace lg
