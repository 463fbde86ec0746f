// The convolutions' infer step: validate input, weight, bias and the lists with ATen's
// messages, compute the output size and layout (channels_last(_3d) when the input or the
// weight suggests it, as in PyTorch main), and hand the kernel 5-D views in the compute dtype.
#include <layoutguard/conv.h>

#include <limits>

#include <layoutguard/factories.h>

#include "core/checked_arith.h"
#include "core/tensor_internal.h"
#include "core/wide_int.h"
#include "dispatch/dispatcher.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using dispatch::ConvParams;
using dispatch::OpId;

struct ConvCall {
  OpId id;
  int spatial;  // 2 or 3
  bool transposed;
  std::vector<int64_t> stride, padding, dilation, output_padding;
  std::optional<PaddingMode> padding_mode;  // kSame / kValid instead of numbers
  int64_t groups;
};

std::string_view name_of(const ConvCall& c) { return dispatch::op_name(c.id); }

// ATen's expand_param_if_needed: one value for every spatial dim, or exactly one per dim.
std::vector<int64_t> expand_list(const ConvCall& c, IntArrayRef v, std::string_view what) {
  LG_CHECK(v.size() == 1 || static_cast<int>(v.size()) == c.spatial, "[", name_of(c), "] ", what,
           " has ", v.size(), " values ", v, "; required 1 or ", c.spatial);
  return v.size() == 1 ? std::vector<int64_t>(c.spatial, v[0]) : v.vec();
}

bool is_float(DType d) { return is_floating_point(d); }

// Output sizes (without N, C) and the leading padding per dim; validates every number.
struct Shape {
  std::vector<int64_t> out;
  std::vector<int64_t> pad_lead;
};

// The size arithmetic runs in 128 bits and comes back through in_int64: a dilation, stride or
// padding near int64's top must raise, not wrap into a plausible size.
using Wide = detail::WideInt;

int64_t in_int64(Wide v, const ConvCall& c, const char* what) {
  LG_CHECK(v >= std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max(), "[", name_of(c),
           "] the ", what, " is beyond int64 for stride ", IntArrayRef(c.stride), ", padding ", IntArrayRef(c.padding),
           " and dilation ", IntArrayRef(c.dilation), "; required sizes that int64 can hold");
  return static_cast<int64_t>(v);
}

Shape output_shape(const ConvCall& c, const Tensor& x, const Tensor& w) {
  const std::string_view op = name_of(c);
  for (int64_t s : c.stride) LG_CHECK(s > 0, "[", op, "] non-positive stride is not supported: stride ", IntArrayRef(c.stride));
  for (int64_t d : c.dilation) LG_CHECK(d > 0, "[", op, "] dilation should be greater than zero: dilation ", IntArrayRef(c.dilation));
  Shape s;
  std::vector<int64_t> pad_total(c.spatial);
  if (c.padding_mode) {
    if (*c.padding_mode == PaddingMode::Same) {
      for (int64_t v : c.stride)
        LG_CHECK(v == 1, "[", op, "] padding=kSame is not supported for strided convolutions (stride ",
                 IntArrayRef(c.stride), "); required stride 1");
      for (int i = 0; i < c.spatial; ++i) pad_total[i] = in_int64(Wide(c.dilation[i]) * (w.size(2 + i) - 1), c, "padding");
    }
    for (int i = 0; i < c.spatial; ++i) s.pad_lead.push_back(pad_total[i] / 2);
  } else {
    for (int64_t p : c.padding) LG_CHECK(p >= 0, "[", op, "] negative padding is not supported: padding ", IntArrayRef(c.padding));
    s.pad_lead = c.padding;
    for (int i = 0; i < c.spatial; ++i) pad_total[i] = in_int64(2 * Wide(c.padding[i]), c, "padding");
  }
  if (c.transposed) {
    for (int i = 0; i < c.spatial; ++i)
      LG_CHECK(c.output_padding[i] >= 0 && (c.output_padding[i] < c.stride[i] || c.output_padding[i] < c.dilation[i]),
               "[", op, "] output padding must be smaller than either stride or dilation, but got output_padding ",
               IntArrayRef(c.output_padding), " with stride ", IntArrayRef(c.stride), " and dilation ",
               IntArrayRef(c.dilation));
    for (int i = 0; i < c.spatial; ++i) {
      const Wide o = Wide(x.size(2 + i) - 1) * c.stride[i] - 2 * Wide(c.padding[i]) +
                     Wide(c.dilation[i]) * (w.size(2 + i) - 1) + c.output_padding[i] + 1;
      s.out.push_back(in_int64(o, c, "output size"));
    }
    for (int64_t o : s.out)
      LG_CHECK(o > 0, "[", op, "] the output size ", IntArrayRef(s.out), " is too small for input ", x.sizes(),
               ", weight ", w.sizes(), ", stride ", IntArrayRef(c.stride), ", padding ", IntArrayRef(c.padding),
               "; required every output size > 0");
    return s;
  }
  std::vector<int64_t> padded(c.spatial), kernel(c.spatial);
  bool fits = true;
  for (int i = 0; i < c.spatial; ++i) {
    padded[i] = in_int64(Wide(x.size(2 + i)) + pad_total[i], c, "padded input size");
    kernel[i] = in_int64(Wide(c.dilation[i]) * (w.size(2 + i) - 1) + 1, c, "dilated kernel size");
    fits = fits && kernel[i] <= padded[i];
  }
  LG_CHECK(fits, "[", op, "] calculated padded input size per channel: ", IntArrayRef(padded),
           ". Kernel size: ", IntArrayRef(kernel), ". Kernel size can't be greater than actual input size");
  for (int i = 0; i < c.spatial; ++i) s.out.push_back((padded[i] - kernel[i]) / c.stride[i] + 1);
  return s;
}

// Checks input (batched, N C spatial...), weight and bias against each other.
void check_operands(const ConvCall& c, const Tensor& x, const Tensor& w, const Tensor& bias) {
  const std::string_view op = name_of(c);
  detail::check_defined(x, op, "input");
  detail::check_defined(w, op, "weight");
  LG_CHECK(w.device() == x.device() && (!bias.defined() || bias.device() == x.device()), "[", op,
           "] input is on ", x.device(), ", weight on ", w.device(),
           bias.defined() ? detail::str(", bias on ", bias.device()) : std::string(),
           "; required all on one device");
  detail::check_device_supported(x.device(), op);
  LG_CHECK_TYPE(is_float(x.dtype()), "[", op, "] is not implemented for ", x.dtype(),
                " input; required float32, float64, float16 or bfloat16");
  LG_CHECK_TYPE(w.dtype() == x.dtype(), "[", op, "] input type (", x.dtype(), ") and weight type (", w.dtype(),
                ") should be the same");
  LG_CHECK_TYPE(!bias.defined() || bias.dtype() == x.dtype(), "[", op, "] input type (", x.dtype(),
                ") and bias type (", bias.dtype(), ") should be the same");
  LG_CHECK(w.dim() == c.spatial + 2, "[", op, "] expected a ", c.spatial + 2, "-D weight, but got weight of size ",
           w.sizes());
  LG_CHECK(c.groups > 0, "[", op, "] non-positive groups is not supported: groups=", c.groups);
  for (int i = 0; i < c.spatial; ++i)
    LG_CHECK(w.size(2 + i) > 0, "[", op, "] non-positive kernel size in weight of size ", w.sizes());
  const int64_t channels = x.size(1);
  int64_t c_out = 0;
  if (c.transposed) {
    LG_CHECK(w.size(0) == channels, "[", op, "] given transposed=1, weight of size ", w.sizes(),
             ", expected input ", x.sizes(), " to have ", w.size(0), " channels, but got ", channels,
             " channels instead");
    LG_CHECK(channels % c.groups == 0, "[", op, "] given groups=", c.groups, ", expected the ", channels,
             " input channels to be divisible by groups");
    c_out = detail::checked_mul(w.size(1), c.groups, "[", op, "] output channels, weight size ", w.sizes(),
                                " times groups=", c.groups);
  } else {
    LG_CHECK(w.size(0) % c.groups == 0, "[", op, "] given groups=", c.groups,
             ", expected weight to be divisible by ", c.groups, " at dimension 0, but got weight of size ", w.sizes(),
             " instead");
    const int64_t expected = detail::checked_mul(w.size(1), c.groups, "[", op, "] input channels, weight size ",
                                                 w.sizes(), " times groups=", c.groups);
    LG_CHECK(expected == channels, "[", op, "] given groups=", c.groups, ", weight of size ", w.sizes(),
             ", expected input ", x.sizes(), " to have ", expected, " channels, but got ", channels,
             " channels instead");
    c_out = w.size(0);
  }
  LG_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == c_out), "[", op, "] given weight of size ",
           w.sizes(), ", expected bias to be 1-dimensional with ", c_out, " elements, but got bias of size ",
           bias.defined() ? to_string(bias.sizes()) : std::string(), " instead");
}

dispatch::ConvKernel conv_kernel(OpId id, Device device) {
  switch (id) {
    case OpId::conv2d: return dispatch::kernel_for<OpId::conv2d>(device);
    case OpId::conv3d: return dispatch::kernel_for<OpId::conv3d>(device);
    case OpId::conv_transpose2d: return dispatch::kernel_for<OpId::conv_transpose2d>(device);
    case OpId::conv_transpose3d: return dispatch::kernel_for<OpId::conv_transpose3d>(device);
    default: LG_ASSERT(false, dispatch::op_name(id), " is not a convolution");
  }
  return nullptr;
}

// 4-D tensors become 5-D with a depth of 1 so one kernel serves 2-D and 3-D.
Tensor as_5d(const Tensor& t, int spatial) { return spatial == 2 ? detail::view_as_5d(t) : t; }

Tensor compute(const ConvCall& c, std::span<const Tensor> in) {
  const std::string_view op = name_of(c);
  const Tensor& input = in[0];
  const Tensor& weight = in[1];
  const Tensor bias = in.size() > 2 ? in[2] : Tensor();
  detail::check_defined(input, op, "input");
  LG_CHECK(input.dim() == c.spatial + 1 || input.dim() == c.spatial + 2, "[", op, "] expected ", c.spatial + 1,
           "-D (unbatched) or ", c.spatial + 2, "-D (batched) input, but got input of size ", input.sizes());
  const bool batched = input.dim() == c.spatial + 2;
  const Tensor x = batched ? input : input.unsqueeze(0);
  check_operands(c, x, weight, bias);
  const Shape shape = output_shape(c, x, weight);

  // PyTorch's rule: channels_last(_3d) if the input or the weight suggests it; the bias never
  // votes.
  const MemoryFormat cl = c.spatial == 2 ? MemoryFormat::ChannelsLast : MemoryFormat::ChannelsLast3d;
  const bool channels_last = x.suggest_memory_format() == cl || weight.suggest_memory_format() == cl;
  std::vector<int64_t> out_sizes{x.size(0), c.transposed ? weight.size(1) * c.groups : weight.size(0)};
  out_sizes.insert(out_sizes.end(), shape.out.begin(), shape.out.end());
  Tensor out = empty(out_sizes, x.options(), channels_last ? cl : MemoryFormat::Contiguous);

  // On the CPU float16 / bfloat16 compute in float32 and round once (the packed weight is cached
  // in float32); cuDNN takes every floating dtype as it is.
  const DType compute_dt = !x.device().is_cpu() ? x.dtype() : x.dtype() == kFloat64 ? kFloat64 : kFloat32;
  const Tensor xc = x.dtype() == compute_dt ? x : x.to(compute_dt);
  const Tensor bc = !bias.defined() || bias.dtype() == compute_dt ? bias : bias.to(compute_dt);
  const Tensor oc = out.dtype() == compute_dt ? out : empty(out_sizes, xc.options(), channels_last ? cl : MemoryFormat::Contiguous);

  ConvParams p;
  const int lead = 3 - c.spatial;  // 2-D: the depth dim keeps the defaults
  for (int i = 0; i < c.spatial; ++i) {
    p.stride[lead + i] = c.stride[i];
    p.padding[lead + i] = shape.pad_lead[i];
    p.dilation[lead + i] = c.dilation[i];
  }
  p.groups = c.groups;
  p.channels_last = channels_last;
  conv_kernel(c.id, x.device())(as_5d(oc, c.spatial), as_5d(xc, c.spatial), as_5d(weight, c.spatial), bc, p);
  if (!oc.is_same(out)) out.copy_(oc);
  return batched ? out : out.squeeze(0);
}

Tensor run(ConvCall c, const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  std::vector<Tensor> inputs{input, weight};
  if (bias && bias->defined()) inputs.push_back(*bias);
  auto body = [&](std::span<const Tensor> in) { return std::vector<Tensor>{compute(c, in)}; };
  return dispatch::run_op(dispatch::op_info(c.id), inputs, body, true)[0];
}

ConvCall make_call(OpId id, int spatial, bool transposed, IntArrayRef stride, IntArrayRef padding,
                   IntArrayRef dilation, IntArrayRef output_padding, int64_t groups) {
  ConvCall c{id, spatial, transposed, {}, {}, {}, {}, std::nullopt, groups};
  c.stride = expand_list(c, stride, "stride");
  c.padding = expand_list(c, padding, "padding");
  c.dilation = expand_list(c, dilation, "dilation");
  c.output_padding = expand_list(c, output_padding, "output_padding");
  return c;
}

ConvCall with_padding_mode(ConvCall c, PaddingMode mode) {
  LG_CHECK(mode == PaddingMode::Same || mode == PaddingMode::Valid, "[", name_of(c), "] received padding mode ",
           static_cast<int>(mode), "; required kSame or kValid");
  c.padding_mode = mode;
  return c;
}

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return run(make_call(OpId::conv2d, 2, false, stride, padding, dilation, {0}, groups), input, weight, bias);
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              PaddingMode padding, IntArrayRef dilation, int64_t groups) {
  return run(with_padding_mode(make_call(OpId::conv2d, 2, false, stride, {0}, dilation, {0}, groups), padding),
             input, weight, bias);
}

Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return run(make_call(OpId::conv3d, 3, false, stride, padding, dilation, {0}, groups), input, weight, bias);
}

Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              PaddingMode padding, IntArrayRef dilation, int64_t groups) {
  return run(with_padding_mode(make_call(OpId::conv3d, 3, false, stride, {0}, dilation, {0}, groups), padding),
             input, weight, bias);
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  return run(make_call(OpId::conv_transpose2d, 2, true, stride, padding, dilation, output_padding, groups), input,
             weight, bias);
}

Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  return run(make_call(OpId::conv_transpose3d, 3, true, stride, padding, dilation, output_padding, groups), input,
             weight, bias);
}

}  // namespace lg
