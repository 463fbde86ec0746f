// cat on CPU: each input is copied into its slice of the output by the strided copy kernel,
// which walks both in their shared memory order -- whole channel runs for NHWC, planes for NCHW.
#include "cpu/register.h"
#include "core/tensor_internal.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

void cat_cpu(const Tensor& out, std::span<const Tensor> inputs, int64_t dim) {
  const auto copy = dispatch::kernel_table().get<dispatch::OpId::copy_>(DeviceType::CPU);
  int64_t offset = 0;
  for (const Tensor& t : inputs) {
    const int64_t n = t.size(dim);
    if (n > 0 && t.numel() > 0) {
      std::vector<int64_t> sizes = out.sizes().vec();
      sizes[dim] = n;
      copy(detail::make_view(out, sizes, out.strides().vec(), out.storage_offset() + offset * out.stride(dim)), t);
    }
    offset += n;
  }
}

}  // namespace

void register_cat_kernels(dispatch::KernelTable& table) {
  table.set<dispatch::OpId::cat>(DeviceType::CPU, cat_cpu, "cat_copy_cpu");
}

}  // namespace lg
