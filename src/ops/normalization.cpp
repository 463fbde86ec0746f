// The normalisation ops' infer steps: validate input and parameters, choose the output layout
// (batch_norm: PyTorch's CPU rule; the others keep the input's suggested format), and
// hand the kernels 5-D views. Running statistics are written in place by the kernel; their
// version counters are bumped here.
#include <layoutguard/normalization.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <layoutguard/factories.h>

#include "core/tensor_internal.h"
#include "dispatch/dispatcher.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using dispatch::OpId;

// Optional tensor arguments: nullopt and an undefined tensor both mean absent.
Tensor or_none(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }

// The tensors an op was given, in argument order, with absent ones skipped; `present` records
// which were given so the body can read them back from the dispatcher's span.
struct Operands {
  std::vector<Tensor> tensors;
  std::vector<bool> present;
  explicit Operands(std::initializer_list<Tensor> all) {
    for (const Tensor& t : all) {
      present.push_back(t.defined());
      if (t.defined()) tensors.push_back(t);
    }
  }
  // The i-th argument from the body's span (undefined when absent).
  Tensor get(std::span<const Tensor> in, size_t i) const {
    if (!present[i]) return Tensor();
    size_t k = 0;
    for (size_t j = 0; j < i; ++j) k += present[j] ? 1 : 0;
    return in[k];
  }
};

void check_input(std::string_view op, const Tensor& x, int64_t min_dim) {
  detail::check_defined(x, op, "input");
  detail::check_device_supported(x.device(), op);
  LG_CHECK_TYPE(is_floating_point(x.dtype()), "[", op, "] is not implemented for ", x.dtype(),
                " input; required float32, float64, float16 or bfloat16");
  LG_CHECK(x.dim() >= min_dim, "[", op, "] expected an input with at least ", min_dim, " dims, but got input of size ",
           x.sizes());
}

// A per-channel parameter: 1-D with `channels` elements, on the input's device, of the input's
// dtype (float32 is also accepted for float16/bfloat16 input, as PyTorch's mixed-type norms).
void check_channel_param(std::string_view op, const Tensor& t, std::string_view what, const Tensor& x, int64_t channels) {
  if (!t.defined()) return;
  LG_CHECK(t.device() == x.device(), "[", op, "] ", what, " is on ", t.device(), " but input is on ", x.device(),
           "; required the same device");
  LG_CHECK(t.dim() == 1 && t.size(0) == channels, "[", op, "] expected ", what, " of size (", channels,
           ") for input of size ", x.sizes(), ", but got ", what, " of size ", t.sizes());
  const bool mixed = t.dtype() == kFloat32 && (x.dtype() == kFloat16 || x.dtype() == kBFloat16);
  LG_CHECK_TYPE(t.dtype() == x.dtype() || mixed, "[", op, "] ", what, " has dtype ", t.dtype(), " but input has ",
                x.dtype(), "; required the input's dtype (or float32 for float16/bfloat16 input)");
}

// N, C, D, H, W: ranks 2 to 5 padded with size-1 dims (detail::view_as_5d).
Tensor as_5d(const Tensor& t, std::string_view op) {
  LG_CHECK(t.dim() >= 2 && t.dim() <= 5, "[", op, "] supports inputs of 2 to 5 dims, but got input of size ",
           t.sizes());
  return detail::view_as_5d(t);
}

// PyTorch's batch_norm_cpu rule: a tensor contiguous in some format keeps that format
// ("contiguous first" for ambiguous ones) when every parameter is contiguous; otherwise the
// suggested format.
MemoryFormat batch_norm_format(const Tensor& x, std::initializer_list<Tensor> params) {
  bool all_contig = x.is_contiguous() || x.is_contiguous(MemoryFormat::ChannelsLast) ||
                    x.is_contiguous(MemoryFormat::ChannelsLast3d);
  for (const Tensor& p : params) all_contig = all_contig && (!p.defined() || p.is_contiguous());
  if (!all_contig) return x.suggest_memory_format();
  if (x.is_contiguous()) return MemoryFormat::Contiguous;
  return x.is_contiguous(MemoryFormat::ChannelsLast3d) ? MemoryFormat::ChannelsLast3d : MemoryFormat::ChannelsLast;
}

dispatch::ChannelNormKernel channel_norm_kernel(OpId id, Device d) {
  switch (id) {
    case OpId::batch_norm: return dispatch::kernel_for<OpId::batch_norm>(d);
    case OpId::group_norm: return dispatch::kernel_for<OpId::group_norm>(d);
    case OpId::instance_norm: return dispatch::kernel_for<OpId::instance_norm>(d);
    default: LG_ASSERT(false, dispatch::op_name(id), " is not a channel normalisation");
  }
  return nullptr;
}

// Whether two tensors share a byte. Their address ranges first; where those meet, a 1-D pair
// (a running stat against a weight or bias, C elements each) is compared element by element,
// so that interleaved slices of one buffer pass; any other pair counts as sharing.
bool shares_elements(const Tensor& a, const Tensor& b) {
  if (!detail::ranges_overlap(a, b)) return false;
  if (a.dim() != 1 || b.dim() != 1) return true;
  // As integers: a byte before an element may lie outside every allocation.
  const auto address = [](const Tensor& t, int64_t i) {
    return reinterpret_cast<intptr_t>(t.data_ptr()) + i * t.stride(0) * static_cast<intptr_t>(t.itemsize());
  };
  std::vector<intptr_t> starts(static_cast<size_t>(b.numel()));  // of b's elements, each itemsize long
  for (int64_t j = 0; j < b.numel(); ++j) starts[static_cast<size_t>(j)] = address(b, j);
  std::sort(starts.begin(), starts.end());
  const auto width = static_cast<intptr_t>(b.itemsize());
  for (int64_t i = 0; i < a.numel(); ++i) {
    // b's element at s meets a's [begin, end) when begin - width < s < end.
    const intptr_t begin = address(a, i);
    const auto first = std::upper_bound(starts.begin(), starts.end(), begin - width);
    if (first != starts.end() && *first < begin + static_cast<intptr_t>(a.itemsize())) return true;
  }
  return false;
}

// Runs a channel normalisation whose output has format `fmt`; bumps the running stats' versions.
Tensor run_channel_norm(OpId id, const Tensor& x, MemoryFormat fmt, dispatch::ChannelNormParams p) {
  const std::string_view op = dispatch::op_name(id);
  if (p.use_input_stats && p.running_mean.defined()) {
    // The running stats are updated in place, one element per channel: an expanded stat or two
    // stats sharing memory would keep only the last channel's update.
    detail::check_no_internal_overlap(p.running_mean, op);
    detail::check_no_internal_overlap(p.running_var, op);
    LG_CHECK(!detail::ranges_overlap(p.running_mean, p.running_var), "[", op,
             "] running_mean and running_var share memory; both are updated in place, so required separate tensors");
    // Nor may they share memory with what the kernel reads while it writes them: the input,
    // the weight or the bias would be read after (or while) the stats changed.
    const std::pair<const Tensor*, const char*> read[] = {{&x, "input"}, {&p.weight, "weight"}, {&p.bias, "bias"}};
    for (const Tensor* stat : {&p.running_mean, &p.running_var})
      for (const auto& [t, name] : read)
        LG_CHECK(!t->defined() || !shares_elements(*stat, *t), "[", op, "] ",
                 stat == &p.running_mean ? "running_mean" : "running_var", " shares memory with ", name,
                 "; the running stats are updated in place, so required separate tensors");
  }
  Tensor out = empty(x.sizes(), x.options(), fmt);
  p.channels_last = fmt != MemoryFormat::Contiguous;
  if (x.numel() > 0) {
    channel_norm_kernel(id, x.device())(as_5d(out, op), as_5d(x, op), p);
    if (p.use_input_stats && p.running_mean.defined()) {
      p.running_mean.bump_version();
      p.running_var.bump_version();
    }
  }
  return out;
}

int64_t spatial_numel(const Tensor& x) {
  int64_t n = 1;
  for (int64_t d = 2; d < x.dim(); ++d) n *= x.size(d);
  return n;
}

// The per-channel operands of the channel norms: weight, bias and running stats each absent or
// (C) (running stats both or neither), and eps >= 0.
void check_channel_operands(std::string_view op, const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& rm,
                            const Tensor& rv, double eps) {
  const int64_t C = x.size(1);
  check_channel_param(op, w, "weight", x, C);
  check_channel_param(op, b, "bias", x, C);
  check_channel_param(op, rm, "running_mean", x, C);
  check_channel_param(op, rv, "running_var", x, C);
  LG_CHECK(rm.defined() == rv.defined(), "[", op, "] received only one of running_mean and running_var; required both or neither");
  LG_CHECK(eps >= 0, "[", op, "] received eps ", eps, "; required eps >= 0");
}

// A momentum the running statistics are updated with must be finite: NaN or infinity would
// turn them into NaN without an error (PyTorch accepts it).
void check_momentum(std::string_view op, double momentum, bool updates_running_stats) {
  LG_CHECK(!updates_running_stats || std::isfinite(momentum), "[", op, "] received momentum ", momentum,
           "; required a finite momentum to update the running statistics with");
}

}  // namespace

Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var, bool training,
                  double momentum, double eps) {
  const Operands args{input, or_none(weight), or_none(bias), or_none(running_mean), or_none(running_var)};
  auto body = [&](std::span<const Tensor> in) {
    const std::string_view op = "batch_norm";
    const Tensor x = args.get(in, 0), w = args.get(in, 1), b = args.get(in, 2), rm = args.get(in, 3), rv = args.get(in, 4);
    check_input(op, x, 2);
    check_channel_operands(op, x, w, b, rm, rv, eps);
    LG_CHECK(training || rm.defined(), "[batch_norm] running_mean and running_var must be defined in evaluation mode");
    check_momentum(op, momentum, training && rm.defined());
    if (training)
      LG_CHECK(x.numel() == 0 || x.size(0) * spatial_numel(x) > 1, "[batch_norm] expected more than 1 value per channel when training, got input of size ",
               x.sizes());
    dispatch::ChannelNormParams p;
    p.across_batch = true;
    p.use_input_stats = training;
    p.eps = eps;
    p.momentum = momentum;
    p.weight = w;
    p.bias = b;
    p.running_mean = rm;
    p.running_var = rv;
    return std::vector<Tensor>{run_channel_norm(OpId::batch_norm, x, batch_norm_format(x, {w, b, rm, rv}), p)};
  };
  return dispatch::run_op(dispatch::op_info(OpId::batch_norm), args.tensors, body, true)[0];
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps) {
  const Operands args{input, or_none(weight), or_none(bias)};
  auto body = [&](std::span<const Tensor> in) {
    const std::string_view op = "group_norm";
    const Tensor x = args.get(in, 0), w = args.get(in, 1), b = args.get(in, 2);
    check_input(op, x, 2);
    const int64_t C = x.size(1);
    LG_CHECK(num_groups > 0 && C % num_groups == 0, "[group_norm] expected number of channels in input to be divisible by num_groups, but got input of size ",
             x.sizes(), " and num_groups=", num_groups);
    check_channel_operands(op, x, w, b, Tensor(), Tensor(), eps);
    dispatch::ChannelNormParams p;
    p.groups = num_groups;
    p.eps = eps;
    p.weight = w;
    p.bias = b;
    return std::vector<Tensor>{run_channel_norm(OpId::group_norm, x, x.suggest_memory_format(), p)};
  };
  return dispatch::run_op(dispatch::op_info(OpId::group_norm), args.tensors, body, true)[0];
}

Tensor instance_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                     const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                     bool use_input_stats, double momentum, double eps) {
  const Operands args{input, or_none(weight), or_none(bias), or_none(running_mean), or_none(running_var)};
  auto body = [&](std::span<const Tensor> in) {
    const std::string_view op = "instance_norm";
    const Tensor x = args.get(in, 0), w = args.get(in, 1), b = args.get(in, 2), rm = args.get(in, 3), rv = args.get(in, 4);
    check_input(op, x, 3);
    const int64_t C = x.size(1);
    check_channel_operands(op, x, w, b, rm, rv, eps);
    LG_CHECK(use_input_stats || rm.defined(), "[instance_norm] expected running_mean and running_var to be defined when use_input_stats is false");
    check_momentum(op, momentum, use_input_stats && rm.defined());
    if (use_input_stats)
      LG_CHECK(x.numel() == 0 || spatial_numel(x) > 1, "[instance_norm] expected more than 1 spatial element when training, got input of size ",
               x.sizes());
    dispatch::ChannelNormParams p;
    p.groups = C;
    p.use_input_stats = use_input_stats;
    p.eps = eps;
    p.momentum = momentum;
    p.weight = w;
    p.bias = b;
    p.running_mean = rm;
    p.running_var = rv;
    return std::vector<Tensor>{run_channel_norm(OpId::instance_norm, x, x.suggest_memory_format(), p)};
  };
  return dispatch::run_op(dispatch::op_info(OpId::instance_norm), args.tensors, body, true)[0];
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps) {
  const Operands args{input, or_none(weight), or_none(bias)};
  const std::vector<int64_t> shape = normalized_shape.vec();
  auto body = [&](std::span<const Tensor> in) {
    const std::string_view op = "layer_norm";
    const Tensor x = args.get(in, 0), w = args.get(in, 1), b = args.get(in, 2);
    check_input(op, x, 1);
    const int64_t k = static_cast<int64_t>(shape.size());
    LG_CHECK(k > 0, "[layer_norm] received an empty normalized_shape; required at least one dim");
    bool match = x.dim() >= k;
    for (int64_t i = 0; match && i < k; ++i) match = x.size(x.dim() - k + i) == shape[i];
    LG_CHECK(match, "[layer_norm] given normalized_shape=", IntArrayRef(shape), ", expected input with shape (*, ",
             to_string(IntArrayRef(shape)).substr(1), ", but got input of size ", x.sizes());
    for (const auto& [t, what] : {std::pair{w, "weight"}, std::pair{b, "bias"}}) {
      if (!t.defined()) continue;
      LG_CHECK(t.device() == x.device(), "[layer_norm] ", what, " is on ", t.device(), " but input is on ", x.device());
      LG_CHECK(t.sizes() == IntArrayRef(shape), "[layer_norm] expected ", what, " of size ", IntArrayRef(shape),
               ", but got ", what, " of size ", t.sizes());
      LG_CHECK_TYPE(t.dtype() == x.dtype(), "[layer_norm] ", what, " has dtype ", t.dtype(), " but input has ", x.dtype(),
                    "; required the same dtype");
    }
    LG_CHECK(eps >= 0, "[layer_norm] received eps ", eps, "; required eps >= 0");
    // layoutguard keeps the input's suggested format (PyTorch returns contiguous).
    Tensor out = empty(x.sizes(), x.options(), x.suggest_memory_format());
    dispatch::LayerNormParams p;
    p.normalized_dims = k;
    p.eps = eps;
    p.weight = w.defined() ? w.contiguous() : w;
    p.bias = b.defined() ? b.contiguous() : b;
    if (x.numel() > 0) dispatch::kernel_for<OpId::layer_norm>(x.device())(out, x, p);
    return std::vector<Tensor>{out};
  };
  return dispatch::run_op(dispatch::op_info(OpId::layer_norm), args.tensors, body, true)[0];
}

}  // namespace lg
