// batch_norm, group_norm, instance_norm and layer_norm on CUDA. group_norm, layer_norm and
// instance_norm without running stats never leave the device (kernels::group_normalize: moments,
// statistics and the affine map in three launches, rather than taking the moments to the host
// twice per call). Where running stats must be updated (instance_norm tracking
// them, batch norm on strides the kernels below do not take), the device computes the moments
// and the affine map and the host turns the moments into statistics and updates the running
// stats with core/channel_statistics.h, as the CPU does.
//
// Batch norm on dense NCHW or channels-last tensors never leaves the device: in evaluation a
// small kernel turns the running stats into per-channel scale and shift; in training two
// coalesced passes sum each channel and its squared deviations (atomics in double), one kernel
// turns them into statistics, updates the running stats and makes scale and shift; a packed
// kernel then applies them at memory bandwidth. Group, instance and layer norm, and batch norm
// on other strides, take the per-group path above. With lg::cuda::set_cudnn_batch_norm(true),
// batch norm is first offered to cuDNN (cudnn_batch_norm.cpp), and these kernels take what it
// declines.
#include <array>
#include <optional>
#include <vector>

#include <layoutguard/cuda.h>
#include <layoutguard/factories.h>

#include "core/channel_statistics.h"
#include "core/derived_cache.h"
#if LG_HAVE_CUDNN
#include "cuda/cudnn_batch_norm.h"
#endif
#include "cuda/geometry.h"
#include "cuda/register.h"
#include "cuda/runtime.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

namespace kernels = cuda::kernels;

Tensor to_device(const std::vector<double>& v, Device device) {
  Tensor host = empty({static_cast<int64_t>(v.size())}, kFloat64);
  std::copy(v.begin(), v.end(), host.data_ptr<double>());
  return host.to(device);
}

std::vector<double> to_host(const Tensor& t) {
  const Tensor h = t.to(TensorOptions().dtype(kFloat64).device(kCPU)).contiguous();
  return std::vector<double>(h.data_ptr<double>(), h.data_ptr<double>() + h.numel());
}

const double* ptr(const Tensor& t) { return t.defined() ? static_cast<const double*>(t.data_ptr()) : nullptr; }

std::vector<double> moments(const kernels::GroupedView& v, const Tensor& input, const Tensor& shift, int power,
                            std::string_view op) {
  Tensor out = empty({v.groups}, TensorOptions().dtype(kFloat64).device(input.device()));
  cuda::detail::check_launch(kernels::group_moments(v, static_cast<const char*>(input.data_ptr()),
                                                    cuda::detail::scalar_type(input.dtype()), ptr(shift), power,
                                                    static_cast<double*>(out.data_ptr()),
                                                    cuda::detail::stream_for(input.device())),
                             "kernels::group_moments", op, input.device());
  return to_host(out);
}

void affine(const kernels::GroupedView& v, const Tensor& out, const Tensor& input, const Tensor& mean, const Tensor& scale,
            const Tensor& shift, const Tensor& w, const Tensor& b, std::string_view op) {
  cuda::detail::check_launch(
      kernels::group_affine(v, static_cast<const char*>(input.data_ptr()), static_cast<char*>(out.data_ptr()),
                            cuda::detail::scalar_type(input.dtype()), ptr(mean), ptr(scale), ptr(shift), ptr(w), ptr(b),
                            cuda::detail::stream_for(out.device())),
      "kernels::group_affine", op, out.device());
}

// The channel-affine view of a dense input that `out` shares strides with, if it is one: NCHW
// contiguous, or channels innermost (channels_last and channels_last_3d).
std::optional<kernels::ChannelAffine> channel_affine_view(const Tensor& out, const Tensor& input) {
  if (out.strides() != input.strides() || !input.is_non_overlapping_and_dense() || input.dtype() == kFloat64)
    return std::nullopt;
  kernels::ChannelAffine a;
  a.numel = input.numel();
  a.channels = input.size(1);
  if (input.is_contiguous()) a.inner = a.numel / (input.size(0) * a.channels);
  else if (input.stride(1) == 1) a.channels_innermost = true;
  else return std::nullopt;
  return a;
}

// y = x * scale[c] + shift[c] through the packed kernel.
void apply_channel_affine(const kernels::ChannelAffine& a, const Tensor& out, const Tensor& input, const float* scale,
                          const float* shift, std::string_view op) {
  cuda::detail::check_launch(
      kernels::channel_affine(a, static_cast<const char*>(input.data_ptr()), static_cast<char*>(out.data_ptr()),
                              cuda::detail::scalar_type(input.dtype()), scale, shift,
                              cuda::detail::stream_for(out.device())),
      "kernels::channel_affine", op, out.device());
}

// Evaluation with running stats on a dense input: the per-channel scale and shift, then the
// affine map. The stats keep their dtype when all four share one (the usual case), else they
// meet in float32.
Tensor eval_coefficients(int64_t channels, const dispatch::ChannelNormParams& p, Device device, std::string_view op) {
  std::array<Tensor, 4> stats{p.running_mean, p.running_var, p.weight, p.bias};
  DType dt = p.running_mean.dtype();
  for (const Tensor& t : stats)
    if (t.defined() && t.dtype() != dt) dt = kFloat32;
  for (Tensor& t : stats)
    if (t.defined() && (t.dtype() != dt || !t.is_contiguous())) t = t.contiguous().to(dt);
  const auto raw = [](const Tensor& t) -> const void* { return t.defined() ? t.data_ptr() : nullptr; };
  const Tensor coefficients = empty({2, channels}, TensorOptions().dtype(kFloat32).device(device));
  float* scale = static_cast<float*>(coefficients.data_ptr());
  cuda::detail::check_launch(
      kernels::channel_coefficients(channels, cuda::detail::scalar_type(dt), raw(stats[0]), raw(stats[1]),
                                    raw(stats[2]), raw(stats[3]), p.eps, scale, scale + channels,
                                    cuda::detail::stream_for(device)),
      "kernels::channel_coefficients", op, device);
  return coefficients;
}

// The coefficients are the same on every forward of a network in evaluation, so they are
// cached until a stat changes (an in-place op, or bump_version after a write through
// data_ptr): one launch and one allocation per batch norm instead of two of each, and for
// stats of mixed dtypes no conversions. At batch 1 the host enqueues ResNet-50's 53 batch
// norms faster than the device runs them only with these saved.
void channel_norm_running_cuda(const kernels::ChannelAffine& a, const Tensor& out, const Tensor& input,
                               const dispatch::ChannelNormParams& p, std::string_view op) {
  static auto* cache = new detail::DerivedCache(4096, int64_t{256} << 20);  // never destroyed: device memory
  const Tensor coefficients = cache->get({p.running_mean, p.running_var, p.weight, p.bias},
                                         {a.channels, detail::double_param(p.eps)},
                                         [&] { return eval_coefficients(a.channels, p, out.device(), op); });
  const float* scale = static_cast<const float*>(coefficients.data_ptr());
  apply_channel_affine(a, out, input, scale, scale + a.channels, op);
}

// The dtype the statistics kernels read the stats in: the running stats' own (they are updated
// in place), which the weight and bias are brought to. None when the running stats are not
// contiguous float tensors of one dtype (the host path then takes over).
std::optional<DType> stats_dtype(const dispatch::ChannelNormParams& p) {
  if (!p.running_mean.defined()) return p.weight.defined() ? p.weight.dtype() : kFloat32;
  if (p.running_mean.dtype() != p.running_var.dtype() || !p.running_mean.is_contiguous() ||
      !p.running_var.is_contiguous())
    return std::nullopt;
  return p.running_mean.dtype();
}

// Training-mode batch norm on a dense input, all on the device: channel sums, sums of squared
// deviations from the mean (two passes, as the CPU computes), the statistics with the
// running-stat update, then the affine map. Nothing crosses to the host.
void batch_norm_training_cuda(const kernels::ChannelAffine& a, DType dt, const Tensor& out, const Tensor& input,
                              const dispatch::ChannelNormParams& p, std::string_view op) {
  const Device device = out.device();
  cudaStream_t stream = cuda::detail::stream_for(device);
  const Tensor sums = zeros({2, a.channels}, TensorOptions().dtype(kFloat64).device(device));
  double* sum = static_cast<double*>(sums.data_ptr());
  double* squares = sum + a.channels;
  const char* x = static_cast<const char*>(input.data_ptr());
  const kernels::ScalarType type = cuda::detail::scalar_type(input.dtype());
  const double count = static_cast<double>(a.numel / a.channels);
  cuda::detail::check_launch(kernels::channel_sums(a, x, type, nullptr, 0.0, 1, sum, stream), "kernels::channel_sums",
                             op, device);
  cuda::detail::check_launch(kernels::channel_sums(a, x, type, sum, 1.0 / count, 2, squares, stream),
                             "kernels::channel_sums", op, device);
  const auto as_stats = [&](const Tensor& t) { return t.defined() ? t.contiguous().to(dt) : Tensor(); };
  const Tensor w = as_stats(p.weight), b = as_stats(p.bias);
  const Tensor coefficients = empty({2, a.channels}, TensorOptions().dtype(kFloat32).device(device));
  kernels::BatchStatistics st;
  st.channels = a.channels;
  st.count = count;
  st.momentum = p.momentum;
  st.eps = p.eps;
  st.sums = sum;
  st.squares = squares;
  if (p.running_mean.defined()) {
    st.running_mean = p.running_mean.data_ptr();
    st.running_var = p.running_var.data_ptr();
  }
  st.w = w.defined() ? w.data_ptr() : nullptr;
  st.b = b.defined() ? b.data_ptr() : nullptr;
  st.scale = static_cast<float*>(coefficients.data_ptr());
  st.shift = st.scale + a.channels;
  cuda::detail::check_launch(kernels::batch_statistics(st, cuda::detail::scalar_type(dt), stream),
                             "kernels::batch_statistics", op, device);
  apply_channel_affine(a, out, input, st.scale, st.shift, op);
}

// group_normalize with its workspace and the weights as float64 on the device: no host trip.
// The float64 weights are kept until the weights change (core/derived_cache.h): made per call,
// they were two launches and two allocations of a call's seven and three.
void normalize_on_device(const kernels::GroupedView& v, const Tensor& out, const Tensor& input, int64_t per_stat,
                         int64_t channels, double eps, const Tensor& plane_w, const Tensor& plane_b,
                         const Tensor& inner_w, const Tensor& inner_b, std::string_view op) {
  static auto* weights = new detail::DerivedCache(4096, int64_t{1} << 30);  // never destroyed: device memory
  const Device device = out.device();
  const TensorOptions f64 = TensorOptions().dtype(kFloat64).device(device);
  const auto as_f64 = [&](const Tensor& t) {
    return t.defined() ? weights->get({t}, {}, [&] { return t.contiguous().to(f64); }) : Tensor();
  };
  const Tensor pw = as_f64(plane_w), pb = as_f64(plane_b), iw = as_f64(inner_w), ib = as_f64(inner_b);
  kernels::GroupNormArgs a;
  a.per_stat = per_stat;
  a.channels = channels;
  a.eps = eps;
  a.plane_w = ptr(pw);
  a.plane_b = ptr(pb);
  a.inner_w = ptr(iw);
  a.inner_b = ptr(ib);
  a.workspace_doubles = kernels::group_normalize_workspace(v, a);
  const Tensor workspace = empty({a.workspace_doubles}, f64);
  a.workspace = static_cast<double*>(workspace.data_ptr());
  cuda::detail::check_launch(
      kernels::group_normalize(v, static_cast<const char*>(input.data_ptr()), static_cast<char*>(out.data_ptr()),
                               cuda::detail::scalar_type(input.dtype()), a, cuda::detail::stream_for(device)),
      "kernels::group_normalize", op, device);
}

void channel_norm_cuda(const Tensor& out, const Tensor& input, const dispatch::ChannelNormParams& p) {
  const std::string_view op = "channel norm (CUDA)";
  if (out.numel() == 0) return;
  const Device device = out.device();
  const int64_t N = input.size(0), C = input.size(1);
#if LG_HAVE_CUDNN
  if (p.across_batch && cuda::cudnn_batch_norm() && cuda::batch_norm_cudnn(out, input, p)) return;
#endif
  const std::optional<kernels::ChannelAffine> fast = channel_affine_view(out, input);
  if (fast && !p.use_input_stats) return channel_norm_running_cuda(*fast, out, input, p, op);
  if (fast && p.across_batch) {
    if (const std::optional<DType> dt = stats_dtype(p); dt && is_floating_point(*dt))
      return batch_norm_training_cuda(*fast, *dt, out, input, p, op);
  }
  kernels::GroupedView v;
  v.outer_dims = 2;
  v.inner_dims = 3;
  for (int d = 0; d < 2; ++d) {
    v.outer_size[d] = input.size(d);
    v.outer_stride[d] = input.stride(d);
    v.outer_out_stride[d] = out.stride(d);
  }
  for (int d = 0; d < 3; ++d) {
    v.inner_size[d] = input.size(2 + d);
    v.inner_stride[d] = input.stride(2 + d);
    v.inner_out_stride[d] = out.stride(2 + d);
  }
  v.groups = N * C;
  v.inner_count = input.size(2) * input.size(3) * input.size(4);
  // group_norm, and instance_norm without running stats: statistics per sample, all on the device.
  if (!p.across_batch && p.use_input_stats && !p.running_mean.defined())
    return normalize_on_device(v, out, input, C / p.groups, C, p.eps, p.weight, p.bias, Tensor(), Tensor(), op);
  norm::ChannelStatistics stats(N, C, p.groups, p.across_batch, v.inner_count);
  if (p.use_input_stats) {
    const std::vector<double> shift = stats.set_means(moments(v, input, Tensor(), 1, op));
    stats.set_variances(moments(v, input, to_device(shift, device), 2, op));
    if (p.running_mean.defined()) {
      std::vector<double> rm = to_host(p.running_mean), rv = to_host(p.running_var);
      stats.update_running(rm, rv, p.momentum);
      p.running_mean.copy_(to_device(rm, device));
      p.running_var.copy_(to_device(rv, device));
    }
  } else {
    stats.use_running(to_host(p.running_mean), to_host(p.running_var));
  }
  const std::vector<double> w = p.weight.defined() ? to_host(p.weight) : std::vector<double>(C, 1.0);
  const std::vector<double> b = p.bias.defined() ? to_host(p.bias) : std::vector<double>(C, 0.0);
  const norm::ChannelStatistics::Affine af = stats.affine(w, b, p.eps);
  affine(v, out, input, to_device(af.mean, device), to_device(af.scale, device), to_device(af.shift, device), Tensor(),
         Tensor(), op);
}

void layer_norm_cuda(const Tensor& out, const Tensor& input, const dispatch::LayerNormParams& p) {
  const std::string_view op = "layer_norm (CUDA)";
  if (out.numel() == 0) return;
  const int64_t rank = input.dim(), k = p.normalized_dims;
  LG_CHECK_NOT_IMPLEMENTED(rank - k <= kernels::kMaxDims && k <= kernels::kMaxDims, "[layer_norm] on CUDA supports at most ",
                           kernels::kMaxDims, " leading and normalised dims, but got input of size ", input.sizes());
  kernels::GroupedView v;
  v.groups = 1;
  v.inner_count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    const bool inner = d >= rank - k;
    int64_t* size = inner ? v.inner_size : v.outer_size;
    int64_t* stride = inner ? v.inner_stride : v.outer_stride;
    int64_t* ostride = inner ? v.inner_out_stride : v.outer_out_stride;
    int& dims = inner ? v.inner_dims : v.outer_dims;
    size[dims] = input.size(d);
    stride[dims] = input.stride(d);
    ostride[dims] = out.stride(d);
    ++dims;
    (inner ? v.inner_count : v.groups) *= input.size(d);
  }
  normalize_on_device(v, out, input, 1, 1, p.eps, Tensor(), Tensor(), p.weight, p.bias, op);
}

}  // namespace

void register_cuda_norm_kernels(dispatch::KernelTable& table) {
  using dispatch::OpId;
  table.set<OpId::batch_norm>(DeviceType::CUDA, channel_norm_cuda, "channel_norm_cuda");
  table.set<OpId::group_norm>(DeviceType::CUDA, channel_norm_cuda, "channel_norm_cuda");
  table.set<OpId::instance_norm>(DeviceType::CUDA, channel_norm_cuda, "channel_norm_cuda");
  table.set<OpId::layer_norm>(DeviceType::CUDA, layer_norm_cuda, "layer_norm_cuda");
}

}  // namespace lg
