// The reductions' and softmax's infer steps: dims wrapped and checked once, output dtype by
// ATen's rules (integer sums widen to int64; mean needs a floating dtype), reduction outputs
// allocated contiguous (as in PyTorch) and softmax outputs in the input's own layout. dropout is
// composite: a uniform draw in the input's layout, a comparison and two multiplications.
#include <layoutguard/reduction.h>

#include <layoutguard/factories.h>
#include <layoutguard/pointwise.h>

#include "core/tensor_internal.h"
#include "dispatch/dispatcher.h"
#include "dispatch/kernel_table.h"
#include "ops/ops_internal.h"

namespace lg {
namespace {

using dispatch::OpId;
using dispatch::ReduceKind;

// Which of t's dims the list names (all when empty); a repeated dim is an error.
std::vector<bool> reduced_dims(const Tensor& t, IntArrayRef dims, std::string_view op) {
  const int64_t rank = t.dim();
  std::vector<bool> reduced(static_cast<size_t>(rank), dims.empty());
  for (int64_t d : dims) {
    const int64_t w = layout::wrap_dim(d, std::max<int64_t>(rank, 1), op);
    if (rank == 0) continue;  // a 0-dim tensor accepts dim 0 / -1, as in ATen
    LG_CHECK(!reduced[static_cast<size_t>(w)], "[", op, "] dim ", w, " appears multiple times in the list of dims ", dims);
    reduced[static_cast<size_t>(w)] = true;
  }
  return reduced;
}

Tensor reduce(OpId id, ReduceKind kind, const Tensor& input, IntArrayRef dims_in, bool keepdim, std::optional<DType> dtype) {
  const std::vector<int64_t> dims = dims_in.vec();
  auto body = [&](std::span<const Tensor> in) {
    const std::string_view op = dispatch::op_name(id);
    const Tensor& x0 = in[0];
    detail::check_defined(x0, op, "input");
    detail::check_device_supported(x0.device(), op);
    const std::vector<bool> reduced = reduced_dims(x0, dims, op);
    DType out_dtype = dtype.value_or(x0.dtype());
    if (kind == ReduceKind::Sum && !dtype && !is_floating_point(x0.dtype())) out_dtype = kInt64;
    if (kind == ReduceKind::Mean)
      LG_CHECK_TYPE(is_floating_point(out_dtype), "[mean] could not infer output dtype: input dtype must be floating, but got ",
                    out_dtype, " (pass a floating dtype)");
    std::vector<int64_t> keep_sizes = x0.sizes().vec(), out_sizes;
    for (int64_t d = 0; d < x0.dim(); ++d) {
      if (reduced[static_cast<size_t>(d)]) {
        if (kind == ReduceKind::Max || kind == ReduceKind::Min)
          LG_CHECK_INDEX(x0.size(d) > 0, "[", op, "] expected reduction dim ", d, " to have non-zero size, input of size ",
                         x0.sizes());
        keep_sizes[static_cast<size_t>(d)] = 1;
        if (keepdim) out_sizes.push_back(1);
      } else {
        out_sizes.push_back(x0.size(d));
      }
    }
    if ((kind == ReduceKind::Max || kind == ReduceKind::Min) && x0.dim() == 0)
      LG_CHECK_INDEX(x0.numel() > 0, "[", op, "] expected a non-empty input");
    const Tensor x = x0.dtype() == out_dtype ? x0 : x0.to(out_dtype);
    Tensor out = empty(keep_sizes, x.options());
    auto kernel = dispatch::kernel_as<dispatch::ReduceKernel>(id, x.device());
    if (out.numel() > 0) kernel(out, x, {kind});
    return std::vector<Tensor>{detail::make_view(out, out_sizes, layout::contiguous_strides(out_sizes), 0)};
  };
  return dispatch::run_op(dispatch::op_info(id), std::span<const Tensor>(&input, 1), body, true)[0];
}

Tensor softmax_like(OpId id, const Tensor& input, int64_t dim_in, std::optional<DType> dtype) {
  auto body = [&](std::span<const Tensor> in) {
    const std::string_view op = dispatch::op_name(id);
    const Tensor& x0 = in[0];
    detail::check_defined(x0, op, "input");
    detail::check_device_supported(x0.device(), op);
    const int64_t dim = layout::wrap_dim(dim_in, std::max<int64_t>(x0.dim(), 1), op);
    const DType out_dtype = dtype.value_or(x0.dtype());
    LG_CHECK_TYPE(is_floating_point(out_dtype), "[", op, "] is not implemented for ", out_dtype, "; required a floating dtype");
    const Tensor x = x0.dtype() == out_dtype ? x0 : x0.to(out_dtype);
    // The input's own layout, made dense (empty_like's Preserve rule), even over channels.
    Tensor out = detail::empty_like_for(x, x.options(), MemoryFormat::Preserve, op);
    auto kernel = dispatch::kernel_as<dispatch::SoftmaxKernel>(id, x.device());
    if (out.numel() > 0) kernel(out, x, {x.dim() == 0 ? 0 : dim, id == OpId::log_softmax});
    return std::vector<Tensor>{out};
  };
  return dispatch::run_op(dispatch::op_info(id), std::span<const Tensor>(&input, 1), body, true)[0];
}

}  // namespace

Tensor sum(const Tensor& input, IntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  return reduce(OpId::sum, ReduceKind::Sum, input, dim, keepdim, dtype);
}
Tensor mean(const Tensor& input, IntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  return reduce(OpId::mean, ReduceKind::Mean, input, dim, keepdim, dtype);
}
Tensor amax(const Tensor& input, IntArrayRef dim, bool keepdim) {
  return reduce(OpId::amax, ReduceKind::Max, input, dim, keepdim, std::nullopt);
}
Tensor amin(const Tensor& input, IntArrayRef dim, bool keepdim) {
  return reduce(OpId::amin, ReduceKind::Min, input, dim, keepdim, std::nullopt);
}

Tensor softmax(const Tensor& input, int64_t dim, std::optional<DType> dtype) {
  return softmax_like(OpId::softmax, input, dim, dtype);
}
Tensor log_softmax(const Tensor& input, int64_t dim, std::optional<DType> dtype) {
  return softmax_like(OpId::log_softmax, input, dim, dtype);
}

Tensor dropout(const Tensor& input, double p, bool train) {
  auto body = [&](std::span<const Tensor> in) {
    const Tensor& x = in[0];
    detail::check_defined(x, "dropout", "input");
    LG_CHECK(p >= 0.0 && p <= 1.0, "[dropout] dropout probability has to be between 0 and 1, but got ", p);
    if (!train || p == 0.0 || x.numel() == 0) return std::vector<Tensor>{x};
    LG_CHECK_TYPE(is_floating_point(x.dtype()), "[dropout] in training is not implemented for ", x.dtype(),
                  "; required a floating dtype");
    if (p == 1.0) return std::vector<Tensor>{mul(x, 0.0)};
    // Keep each element with probability 1 - p; the draw has x's layout, so every step keeps it.
    // out= keeps out's strides, so the result has exactly x's (dense) layout, the size-1 cases
    // included (a two-tensor mul would give NCHW strides for N1HW input: TensorIterator's
    // fast path treats that input as contiguous).
    Tensor out = detail::empty_like_for(x, x.options(), MemoryFormat::Preserve, "dropout");
    mul_out(out, x, mul(lt(rand_like(x), 1.0 - p), 1.0 / (1.0 - p)));
    return std::vector<Tensor>{out};
  };
  return dispatch::run_op(dispatch::op_info(OpId::dropout), std::span<const Tensor>(&input, 1), body, false)[0];
}

}  // namespace lg
