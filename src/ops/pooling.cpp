// The pooling ops' infer steps: validate the input and the lists with ATen's rules, turn
// kernel/stride/padding/dilation (or an adaptive output size) into explicit windows per
// output position, and allocate the output (and indices) in the input's suggested format.
#include <layoutguard/pooling.h>

#include <layoutguard/factories.h>

#include <utility>

#include "core/tensor_internal.h"
#include "core/wide_int.h"
#include "dispatch/dispatcher.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using dispatch::OpId;
using dispatch::PoolWindows;

enum class Kind { Max, Avg };

struct PoolCall {
  OpId id;
  int spatial;
  Kind kind;
  std::string_view name;  // the public function (max_pool2d_with_indices reports as max_pool2d)
};

std::vector<int64_t> expand(const PoolCall& c, IntArrayRef v, std::string_view what) {
  LG_CHECK(v.size() == 1 || static_cast<int>(v.size()) == c.spatial, "[", c.name, "] ", what, " must be a single int or a list of ",
           c.spatial, " ints, but got ", v);
  return v.size() == 1 ? std::vector<int64_t>(c.spatial, v[0]) : v.vec();
}

// Checks rank, dtype and spatial sizes; returns the batched (N, C, ...) input.
Tensor check_input(const PoolCall& c, const Tensor& x) {
  detail::check_defined(x, c.name, "input");
  detail::check_device_supported(x.device(), c.name);
  LG_CHECK(x.dim() == c.spatial + 1 || x.dim() == c.spatial + 2, "[", c.name, "] expected ", c.spatial + 1, "-D (unbatched) or ",
           c.spatial + 2, "-D (batched) input, but got input of size ", x.sizes());
  if (c.kind == Kind::Avg)
    LG_CHECK_TYPE(is_floating_point(x.dtype()), "[", c.name, "] is not implemented for ", x.dtype(),
                  "; required a floating dtype");
  else
    LG_CHECK_TYPE(x.dtype() != kBool, "[", c.name, "] is not implemented for bool; required a numeric dtype");
  const Tensor b = x.dim() == c.spatial + 1 ? x.unsqueeze(0) : x;
  for (int64_t d = 1; d < b.dim(); ++d)
    LG_CHECK(b.size(d) > 0, "[", c.name, "] expected input with non-zero channel and spatial sizes (batch may be 0), but got input of size ",
             x.sizes());
  return b;
}

Tensor as_5d(const Tensor& t, int spatial) { return spatial == 2 ? detail::view_as_5d(t) : t; }

// Allocates out (and int64 indices when asked) in the input's suggested format, runs kernel.
template <typename Run>
std::pair<Tensor, Tensor> finish(const PoolCall& c, const Tensor& input, const Tensor& x, std::vector<int64_t> out_spatial,
                                 PoolWindows w, bool with_indices, Run&& run) {
  std::vector<int64_t> sizes{x.size(0), x.size(1)};
  sizes.insert(sizes.end(), out_spatial.begin(), out_spatial.end());
  const MemoryFormat fmt = input.dim() == c.spatial + 2 ? x.suggest_memory_format() : MemoryFormat::Contiguous;
  Tensor out = empty(sizes, x.options(), fmt);
  Tensor idx = with_indices ? empty(sizes, TensorOptions().dtype(kInt64).device(x.device()), fmt) : Tensor();
  w.channels_last = fmt != MemoryFormat::Contiguous;
  if (c.spatial == 2) {  // depth 1: a single window [0, 1)
    w.begin[0] = {0};
    w.end[0] = {1};
    w.count[0] = {1};
  }
  // An empty output has no window tables (see checked_output_numel) and nothing to compute.
  if (out.numel() > 0) run(as_5d(out, c.spatial), idx.defined() ? as_5d(idx, c.spatial) : idx, as_5d(x, c.spatial), w);
  if (input.dim() == c.spatial + 1) {
    out = out.squeeze(0);
    if (idx.defined()) idx = idx.squeeze(0);
  }
  return {out, idx};
}

// The output's element count, which must fit int64 before window tables (one entry per output
// position) are built for it. No tables are built when it is 0: nothing reads them.
int64_t checked_output_numel(const PoolCall& c, const Tensor& x, const std::vector<int64_t>& spatial) {
  std::vector<int64_t> sizes{x.size(0), x.size(1)};
  sizes.insert(sizes.end(), spatial.begin(), spatial.end());
  return layout::checked_numel(sizes, c.name);
}

// Room for the windows of `n` output positions along table dim `dim` (and their counts): the
// tables are built on every call, and growing them one push_back at a time reallocated each
// several times.
void reserve_windows(PoolWindows& w, int dim, int64_t n, bool counts) {
  w.begin[dim].reserve(static_cast<size_t>(n));
  w.end[dim].reserve(static_cast<size_t>(n));
  if (counts) w.count[dim].reserve(static_cast<size_t>(n));
}

// Fixed windows from kernel/stride/padding/dilation (ATen's pooling_output_shape and shape checks).
std::pair<std::vector<int64_t>, PoolWindows> fixed_windows(const PoolCall& c, const Tensor& x, IntArrayRef kernel_size,
                                                           IntArrayRef stride_in, IntArrayRef padding, IntArrayRef dilation,
                                                           bool ceil_mode, bool count_include_pad) {
  using Wide = detail::WideInt;
  const auto k = expand(c, kernel_size, "kernel_size");
  const auto s = stride_in.empty() ? k : expand(c, stride_in, "stride");
  const auto p = expand(c, padding, "padding");
  const auto d = expand(c, dilation, "dilation");
  for (int i = 0; i < c.spatial; ++i) {
    LG_CHECK(k[i] > 0, "[", c.name, "] kernel size should be greater than zero, but got kernel_size ", IntArrayRef(k));
    LG_CHECK(s[i] > 0, "[", c.name, "] stride should be greater than zero, but got stride ", IntArrayRef(s));
    LG_CHECK(d[i] > 0, "[", c.name, "] dilation should be greater than zero, but got dilation ", IntArrayRef(d));
    LG_CHECK(p[i] >= 0, "[", c.name, "] pad must be non-negative, but got padding ", IntArrayRef(p));
    LG_CHECK(p[i] <= k[i] / 2, "[", c.name, "] pad should be at most half of kernel size, but got padding ",
             IntArrayRef(p), " and kernel_size ", IntArrayRef(k));
  }
  std::vector<int64_t> out(c.spatial);
  PoolWindows w;
  const int lead = 3 - c.spatial;
  for (int i = 0; i < c.spatial; ++i) {
    // In 128 bits: a dilation or kernel near int64's top must give "too small", not a wrapped
    // size.
    const Wide in = x.size(2 + i), eff = Wide(d[i]) * (k[i] - 1) + 1;
    const Wide span = in + 2 * Wide(p[i]) - eff;
    // ATen's div_rtn: the division rounds toward minus infinity (a kernel wider than the
    // padded input still gives one window with ceil_mode).
    const Wide num = span + (ceil_mode ? s[i] - 1 : 0);
    Wide o = num / s[i] - (num % s[i] != 0 && num < 0) + 1;
    // ceil_mode: the last window must start inside the input or the left padding.
    if (ceil_mode && o > 0 && (o - 1) * s[i] >= in + p[i]) --o;
    out[i] = static_cast<int64_t>(std::max<Wide>(o, 0));  // o <= in + 1, as eff >= k >= 2p
  }
  for (int64_t o : out)
    LG_CHECK(o > 0, "[", c.name, "] given input of size ", x.sizes(), ", the calculated output size ", IntArrayRef(out),
             " is too small; required every output size > 0");
  if (checked_output_numel(c, x, out) == 0) return {std::move(out), std::move(w)};
  for (int i = 0; i < c.spatial; ++i) {
    const int64_t in = x.size(2 + i);
    // A one-tap window ignores its dilation, which may then be anything up to int64's top:
    // kernels stepping `tap += dilation` would overflow. With two or more taps an output exists
    // only if the dilated window fits the padded input, or (ceil_mode) for one window starting
    // at or before 0; either way the first tap inside the input plus the dilation stays below
    // int64's top.
    w.dilation[lead + i] = k[i] == 1 ? 1 : d[i];
    reserve_windows(w, lead + i, out[i], c.kind == Kind::Avg);
    for (int64_t o = 0; o < out[i]; ++o) {
      const int64_t start = o * s[i] - p[i];  // in [-p, in + p): o * s fits, as o < output size
      if (c.kind == Kind::Max) {
        // First in-range tap of the dilated window, and one past the last (in 128 bits: a
        // dilation near int64's top).
        const int64_t first = start >= 0 ? start : static_cast<int64_t>(start + (-Wide(start) + d[i] - 1) / d[i] * d[i]);
        w.begin[lead + i].push_back(first);
        w.end[lead + i].push_back(static_cast<int64_t>(std::min<Wide>(start + Wide(k[i] - 1) * d[i] + 1, in)));
      } else {
        const int64_t end_padded = static_cast<int64_t>(std::min<Wide>(Wide(start) + k[i], Wide(in) + p[i]));
        const int64_t b = std::max<int64_t>(start, 0), e = std::min(end_padded, in);
        w.begin[lead + i].push_back(b);
        w.end[lead + i].push_back(e);
        w.count[lead + i].push_back(count_include_pad ? end_padded - start : e - b);
      }
    }
  }
  return {std::move(out), std::move(w)};
}

std::pair<std::vector<int64_t>, PoolWindows> adaptive_windows(const PoolCall& c, const Tensor& x, IntArrayRef output_size) {
  LG_CHECK(static_cast<int>(output_size.size()) == c.spatial, "[", c.name, "] output_size must have ", c.spatial,
           " values, but got ", output_size);
  for (int64_t o : output_size)
    LG_CHECK(o >= 0, "[", c.name, "] elements of output_size must be greater than or equal to 0, but got ", output_size);
  if (checked_output_numel(c, x, output_size.vec()) == 0) return {output_size.vec(), PoolWindows{}};
  PoolWindows w;
  const int lead = 3 - c.spatial;
  for (int i = 0; i < c.spatial; ++i) {
    const int64_t in = x.size(2 + i), n = output_size[i];
    reserve_windows(w, lead + i, n, true);
    for (int64_t o = 0; o < n; ++o) {
      // ATen's start/end index, in 128 bits: o * in passes int64 for a huge output size.
      using Wide = detail::WideInt;
      const int64_t b = static_cast<int64_t>(Wide(o) * in / n), e = static_cast<int64_t>(((Wide(o) + 1) * in + n - 1) / n);
      w.begin[lead + i].push_back(b);
      w.end[lead + i].push_back(e);
      w.count[lead + i].push_back(e - b);
    }
  }
  return {output_size.vec(), std::move(w)};
}

std::pair<Tensor, Tensor> run_max(const PoolCall& c, const Tensor& input, bool with_indices, IntArrayRef kernel_size,
                                  IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const std::vector<int64_t> k = kernel_size.vec(), s = stride.vec(), p = padding.vec(), d = dilation.vec();
  auto body = [&](std::span<const Tensor> in) {
    const Tensor x = check_input(c, in[0]);
    auto [out, w] = fixed_windows(c, x, k, s, p, d, ceil_mode, true);
    auto kernel = c.id == OpId::max_pool2d ? dispatch::kernel_for<OpId::max_pool2d>(x.device())
                                           : dispatch::kernel_for<OpId::max_pool3d>(x.device());
    auto r = finish(c, in[0], x, std::move(out), std::move(w), with_indices, kernel);
    return with_indices ? std::vector<Tensor>{r.first, r.second} : std::vector<Tensor>{r.first};
  };
  const std::vector<Tensor> r = dispatch::run_op(dispatch::op_info(c.id), std::span<const Tensor>(&input, 1), body, true);
  return {r[0], with_indices ? r[1] : Tensor()};
}

Tensor run_avg(const PoolCall& c, const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
               bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  const std::vector<int64_t> k = kernel_size.vec(), s = stride.vec(), p = padding.vec();
  LG_CHECK(!divisor_override || *divisor_override != 0, "[", c.name, "] divisor must be not zero");
  auto body = [&](std::span<const Tensor> in) {
    const Tensor x = check_input(c, in[0]);
    auto [out, w] = fixed_windows(c, x, k, s, p, {1}, ceil_mode, count_include_pad);
    w.divisor_override = divisor_override.value_or(0);
    auto kernel = c.id == OpId::avg_pool2d ? dispatch::kernel_for<OpId::avg_pool2d>(x.device())
                                           : dispatch::kernel_for<OpId::avg_pool3d>(x.device());
    return std::vector<Tensor>{
        finish(c, in[0], x, std::move(out), std::move(w), false, [&](const Tensor& o, const Tensor&, const Tensor& xi, const PoolWindows& pw) {
          kernel(o, xi, pw);
        }).first};
  };
  return dispatch::run_op(dispatch::op_info(c.id), std::span<const Tensor>(&input, 1), body, true)[0];
}

Tensor run_adaptive_avg(const PoolCall& c, const Tensor& input, IntArrayRef output_size) {
  const std::vector<int64_t> size = output_size.vec();
  auto body = [&](std::span<const Tensor> in) {
    const Tensor x = check_input(c, in[0]);
    auto [out, w] = adaptive_windows(c, x, size);
    auto kernel = c.id == OpId::adaptive_avg_pool2d ? dispatch::kernel_for<OpId::adaptive_avg_pool2d>(x.device())
                                                    : dispatch::kernel_for<OpId::adaptive_avg_pool3d>(x.device());
    return std::vector<Tensor>{
        finish(c, in[0], x, std::move(out), std::move(w), false, [&](const Tensor& o, const Tensor&, const Tensor& xi, const PoolWindows& pw) {
          kernel(o, xi, pw);
        }).first};
  };
  return dispatch::run_op(dispatch::op_info(c.id), std::span<const Tensor>(&input, 1), body, true)[0];
}

}  // namespace

Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return run_max({OpId::max_pool2d, 2, Kind::Max, "max_pool2d"}, input, false, kernel_size, stride, padding, dilation,
                 ceil_mode).first;
}

std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                                                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return run_max({OpId::max_pool2d, 2, Kind::Max, "max_pool2d_with_indices"}, input, true, kernel_size, stride, padding,
                 dilation, ceil_mode);
}

Tensor max_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return run_max({OpId::max_pool3d, 3, Kind::Max, "max_pool3d"}, input, false, kernel_size, stride, padding, dilation,
                 ceil_mode).first;
}

Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  return run_avg({OpId::avg_pool2d, 2, Kind::Avg, "avg_pool2d"}, input, kernel_size, stride, padding, ceil_mode,
                 count_include_pad, divisor_override);
}

Tensor avg_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  return run_avg({OpId::avg_pool3d, 3, Kind::Avg, "avg_pool3d"}, input, kernel_size, stride, padding, ceil_mode,
                 count_include_pad, divisor_override);
}

Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  return run_adaptive_avg({OpId::adaptive_avg_pool2d, 2, Kind::Avg, "adaptive_avg_pool2d"}, input, output_size);
}

Tensor adaptive_avg_pool3d(const Tensor& input, IntArrayRef output_size) {
  return run_adaptive_avg({OpId::adaptive_avg_pool3d, 3, Kind::Avg, "adaptive_avg_pool3d"}, input, output_size);
}

std::pair<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size) {
  const PoolCall c{OpId::adaptive_max_pool2d, 2, Kind::Max, "adaptive_max_pool2d"};
  const std::vector<int64_t> size = output_size.vec();
  auto body = [&](std::span<const Tensor> in) {
    const Tensor x = check_input(c, in[0]);
    auto [out, w] = adaptive_windows(c, x, size);
    auto r = finish(c, in[0], x, std::move(out), std::move(w), true, dispatch::kernel_for<OpId::adaptive_max_pool2d>(x.device()));
    return std::vector<Tensor>{r.first, r.second};
  };
  const std::vector<Tensor> r = dispatch::run_op(dispatch::op_info(c.id), std::span<const Tensor>(&input, 1), body, true);
  return {r[0], r[1]};
}

}  // namespace lg
