// Upsampling, pooling and pad on CUDA: the infer steps (src/ops) already turned every op into
// explicit per-dim taps, windows or source maps; this file fetches those small tables on the
// device (cached by content: cuda/device_tables.h) and launches the kernels of kernels/window.cu.
#include <cstring>
#include <vector>

#include <layoutguard/factories.h>

#include "cuda/device_tables.h"
#include "cuda/geometry.h"
#include "cuda/register.h"
#include "cuda/runtime.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

namespace kernels = cuda::kernels;

using cuda::detail::device_table;
using cuda::detail::view5;

void upsample_cuda(const Tensor& out, const Tensor& input, const dispatch::InterpTaps& taps) {
  kernels::InterpArgs a;
  a.out = view5(out);
  a.in = view5(input);
  a.out_data = static_cast<char*>(out.data_ptr());
  a.in_data = static_cast<const char*>(input.data_ptr());
  std::vector<Tensor> keep;
  for (int i = 0; i < 3; ++i) {
    a.taps[i] = taps.taps[i];
    keep.push_back(device_table(taps.index[i], out.device()));
    keep.push_back(device_table(taps.weight[i], out.device()));
    a.index[i] = static_cast<const int64_t*>(keep[keep.size() - 2].data_ptr());
    a.weight[i] = static_cast<const double*>(keep.back().data_ptr());
  }
  cuda::detail::check_launch(kernels::upsample(a, cuda::detail::scalar_type(out.dtype()), cuda::detail::stream_for(out.device())),
                             "kernels::upsample", "upsample", out.device());
}

void pool_cuda(const Tensor& out, const Tensor& indices, const Tensor& input, const dispatch::PoolWindows& w, bool max) {
  kernels::PoolArgs a;
  a.out = view5(out);
  a.in = view5(input);
  a.out_data = static_cast<char*>(out.data_ptr());
  a.in_data = static_cast<const char*>(input.data_ptr());
  if (indices.defined()) {
    a.idx = view5(indices);
    a.indices = static_cast<int64_t*>(indices.data_ptr());
  }
  std::vector<Tensor> keep;
  for (int i = 0; i < 3; ++i) {
    a.dilation[i] = w.dilation[static_cast<size_t>(i)];
    keep.push_back(device_table(w.begin[static_cast<size_t>(i)], out.device()));
    a.begin[i] = static_cast<const int64_t*>(keep.back().data_ptr());
    keep.push_back(device_table(w.end[static_cast<size_t>(i)], out.device()));
    a.end[i] = static_cast<const int64_t*>(keep.back().data_ptr());
    if (!max) {
      keep.push_back(device_table(w.count[static_cast<size_t>(i)], out.device()));
      a.count[i] = static_cast<const int64_t*>(keep.back().data_ptr());
    }
  }
  a.divisor_override = w.divisor_override;
  a.max = max;
  cuda::detail::check_launch(kernels::pool(a, cuda::detail::scalar_type(out.dtype()), cuda::detail::stream_for(out.device())),
                             "kernels::pool", max ? "max_pool" : "avg_pool", out.device());
}

void max_pool_cuda(const Tensor& out, const Tensor& indices, const Tensor& input, const dispatch::PoolWindows& w) {
  pool_cuda(out, indices, input, w, true);
}
void avg_pool_cuda(const Tensor& out, const Tensor& input, const dispatch::PoolWindows& w) {
  pool_cuda(out, Tensor(), input, w, false);
}

void pad_cuda(const Tensor& out, const Tensor& input, const dispatch::PadMap& map) {
  LG_CHECK_NOT_IMPLEMENTED(out.dim() <= kernels::kMaxDims, "[pad] on CUDA supports at most ", kernels::kMaxDims,
                           " dims, but got output of size ", out.sizes());
  kernels::PadArgs a;
  a.rank = static_cast<int>(out.dim());
  a.numel = out.numel();
  a.out_data = static_cast<char*>(out.data_ptr());
  a.in_data = static_cast<const char*>(input.data_ptr());
  std::vector<Tensor> keep;
  for (int d = 0; d < a.rank; ++d) {
    a.out_size[d] = out.size(d);
    a.out_stride[d] = out.stride(d);
    a.in_stride[d] = input.stride(d);
    keep.push_back(device_table(map.source[static_cast<size_t>(d)], out.device()));
    a.source[d] = static_cast<const int64_t*>(keep.back().data_ptr());
  }
  visit_dtype(out.dtype(), [&]<typename T>(std::type_identity<T>) {
    const T v = static_cast<T>(static_cast<std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>>(map.value));
    std::memcpy(&a.fill_bits, &v, sizeof(T));
  });
  cuda::detail::check_launch(kernels::pad(a, static_cast<int>(out.itemsize()), cuda::detail::stream_for(out.device())),
                             "kernels::pad", "pad", out.device());
}

}  // namespace

void register_cuda_window_kernels(dispatch::KernelTable& table) {
  using dispatch::OpId;
  table.set<OpId::upsample_nearest2d>(DeviceType::CUDA, upsample_cuda, "upsample_separable_cuda");
  table.set<OpId::upsample_nearest3d>(DeviceType::CUDA, upsample_cuda, "upsample_separable_cuda");
  table.set<OpId::upsample_bilinear2d>(DeviceType::CUDA, upsample_cuda, "upsample_separable_cuda");
  table.set<OpId::upsample_trilinear3d>(DeviceType::CUDA, upsample_cuda, "upsample_separable_cuda");
  table.set<OpId::upsample_bicubic2d>(DeviceType::CUDA, upsample_cuda, "upsample_separable_cuda");
  table.set<OpId::max_pool2d>(DeviceType::CUDA, max_pool_cuda, "max_pool_cuda");
  table.set<OpId::max_pool3d>(DeviceType::CUDA, max_pool_cuda, "max_pool_cuda");
  table.set<OpId::adaptive_max_pool2d>(DeviceType::CUDA, max_pool_cuda, "max_pool_cuda");
  table.set<OpId::avg_pool2d>(DeviceType::CUDA, avg_pool_cuda, "avg_pool_cuda");
  table.set<OpId::avg_pool3d>(DeviceType::CUDA, avg_pool_cuda, "avg_pool_cuda");
  table.set<OpId::adaptive_avg_pool2d>(DeviceType::CUDA, avg_pool_cuda, "avg_pool_cuda");
  table.set<OpId::adaptive_avg_pool3d>(DeviceType::CUDA, avg_pool_cuda, "avg_pool_cuda");
  table.set<OpId::pad>(DeviceType::CUDA, pad_cuda, "pad_gather_cuda");
}

}  // namespace lg
