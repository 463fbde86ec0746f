// The matrix-product ops' infer steps: ATen's shape and dtype checks, then every product as a
// batched (B, M, K) @ (B, K, N) view pair for the one GEMM kernel. matmul is composite: it
// reshapes, broadcasts and calls mm or bmm, as ATen does.
#include <layoutguard/linalg.h>

#include <layoutguard/factories.h>

#include "core/tensor_internal.h"
#include "dispatch/dispatcher.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using dispatch::GemmParams;
using dispatch::OpId;

// t with a leading batch dim of size 1 (no dispatcher call: the kernel's argument only).
Tensor batched(const Tensor& t) {
  std::vector<int64_t> sizes = t.sizes().vec(), strides = t.strides().vec();
  sizes.insert(sizes.begin(), 1);
  strides.insert(strides.begin(), t.numel() > 0 ? t.numel() : 1);
  return detail::make_view(t, sizes, strides, t.storage_offset());
}

// The view of t broadcast to sizes (stride 0 where t has size 1 or no dim), or a ValueError.
Tensor broadcast_view(const Tensor& t, IntArrayRef sizes, std::string_view op, std::string_view what) {
  const std::vector<int64_t> joint = layout::broadcast_shapes({t.sizes(), sizes}, op);
  LG_CHECK(IntArrayRef(joint) == sizes, "[", op, "] ", what, " of size ", t.sizes(), " cannot be broadcast to ", sizes);
  std::vector<int64_t> strides(sizes.size(), 0);
  const size_t lead = sizes.size() - static_cast<size_t>(t.dim());
  for (size_t d = lead; d < sizes.size(); ++d) {
    const int64_t k = static_cast<int64_t>(d - lead);
    strides[d] = t.size(k) == 1 && sizes[d] != 1 ? 0 : t.stride(k);
  }
  return detail::make_view(t, sizes.vec(), strides, t.storage_offset());
}

void check_operands(std::string_view op, const Tensor& a, std::string_view a_name, const Tensor& b,
                    std::string_view b_name) {
  detail::check_defined(a, op, a_name);
  detail::check_defined(b, op, b_name);
  LG_CHECK(a.device() == b.device(), "[", op, "] expected ", a_name, " and ", b_name, " on the same device, but got ",
           a.device(), " and ", b.device());
  detail::check_device_supported(a.device(), op);
  LG_CHECK_TYPE(a.dtype() == b.dtype(), "[", op, "] expected ", a_name, " and ", b_name,
                " to have the same dtype, but got: ", a.dtype(), " != ", b.dtype());
  LG_CHECK_TYPE(a.dtype() != kBool, "[", op, "] is not implemented for bool; required a numeric dtype");
}

void check_rank(std::string_view op, const Tensor& t, std::string_view name, int64_t rank) {
  LG_CHECK(t.dim() == rank, "[", op, "] ", name, " must be a ", rank == 2 ? "matrix (2-D)" : "batch of matrices (3-D)",
           ", but got ", name, " of size ", t.sizes());
}

// out (B, M, N) = alpha * a @ b + beta * c through op's kernel.
Tensor run_gemm(OpId id, const Tensor& a, const Tensor& b, GemmParams params) {
  Tensor out = empty({a.size(0), a.size(1), b.size(2)}, a.options());
  auto kernel = dispatch::kernel_as<dispatch::GemmKernel>(id, a.device());
  if (out.numel() > 0) kernel(out, a, b, params);
  return out;
}

Tensor squeeze_batch(const Tensor& t) {
  return detail::make_view(t, {t.size(1), t.size(2)}, {t.stride(1), t.stride(2)}, t.storage_offset());
}

}  // namespace

Tensor mm(const Tensor& self, const Tensor& mat2) {
  auto body = [&](std::span<const Tensor> in) {
    check_operands("mm", in[0], "self", in[1], "mat2");
    check_rank("mm", in[0], "self", 2);
    check_rank("mm", in[1], "mat2", 2);
    LG_CHECK(in[0].size(1) == in[1].size(0), "[mm] mat1 and mat2 shapes cannot be multiplied (", in[0].size(0), "x",
             in[0].size(1), " and ", in[1].size(0), "x", in[1].size(1), ")");
    return std::vector<Tensor>{squeeze_batch(run_gemm(OpId::mm, batched(in[0]), batched(in[1]), {}))};
  };
  const std::array<Tensor, 2> inputs{self, mat2};
  return dispatch::run_op(dispatch::op_info(OpId::mm), inputs, body, true)[0];
}

Tensor bmm(const Tensor& self, const Tensor& mat2) {
  auto body = [&](std::span<const Tensor> in) {
    check_operands("bmm", in[0], "self", in[1], "mat2");
    check_rank("bmm", in[0], "self", 3);
    check_rank("bmm", in[1], "mat2", 3);
    LG_CHECK(in[0].size(0) == in[1].size(0), "[bmm] batch sizes must match, but got self of size ", in[0].sizes(),
             " and mat2 of size ", in[1].sizes());
    LG_CHECK(in[0].size(2) == in[1].size(1), "[bmm] self and mat2 shapes cannot be multiplied (", in[0].sizes(), " and ",
             in[1].sizes(), ")");
    return std::vector<Tensor>{run_gemm(OpId::bmm, in[0], in[1], {})};
  };
  const std::array<Tensor, 2> inputs{self, mat2};
  return dispatch::run_op(dispatch::op_info(OpId::bmm), inputs, body, true)[0];
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
  auto body = [&](std::span<const Tensor> in) {
    check_operands("addmm", in[1], "mat1", in[2], "mat2");
    check_operands("addmm", in[0], "self", in[1], "mat1");
    check_rank("addmm", in[1], "mat1", 2);
    check_rank("addmm", in[2], "mat2", 2);
    LG_CHECK(in[1].size(1) == in[2].size(0), "[addmm] mat1 and mat2 shapes cannot be multiplied (", in[1].size(0), "x",
             in[1].size(1), " and ", in[2].size(0), "x", in[2].size(1), ")");
    LG_CHECK(in[0].dim() <= 2, "[addmm] self must have at most 2 dims, but got self of size ", in[0].sizes());
    // As ATen: integral products take integral scales only (a floating one would be truncated).
    if (!is_floating_point(in[1].dtype()))
      for (const auto& [name, scale] : {std::pair{"beta", &beta}, std::pair{"alpha", &alpha}})
        LG_CHECK(!scale->is_floating_point(), "[addmm] received the floating ", name, " ", *scale, " for integral operands (",
                 in[1].dtype(), "); required an integer ", name);
    const std::vector<int64_t> sizes{1, in[1].size(0), in[2].size(1)};
    GemmParams p;
    p.alpha = alpha.to<double>();
    p.beta = beta.to<double>();
    Tensor c = broadcast_view(in[0], IntArrayRef(sizes).slice(1), "addmm", "self");
    if (p.beta != 0.0) p.c = batched(c);
    return std::vector<Tensor>{squeeze_batch(run_gemm(OpId::addmm, batched(in[1]), batched(in[2]), p))};
  };
  const std::array<Tensor, 3> inputs{self, mat1, mat2};
  return dispatch::run_op(dispatch::op_info(OpId::addmm), inputs, body, true)[0];
}

Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias_in) {
  const Tensor bias = bias_in.value_or(Tensor());
  auto body = [&](std::span<const Tensor> in) {
    const Tensor &x = in[0], &w = in[1];
    check_operands("linear", x, "input", w, "weight");
    LG_CHECK(x.dim() >= 1, "[linear] input must have at least 1 dim, but got a 0-dim tensor");
    LG_CHECK(w.dim() == 2, "[linear] weight must be 2-D (out_features, in_features), but got weight of size ", w.sizes());
    LG_CHECK(x.size(-1) == w.size(1), "[linear] input's last dim (", x.size(-1), ") must equal in_features (", w.size(1),
             "): input of size ", x.sizes(), ", weight of size ", w.sizes());
    const Tensor& b = in.size() > 2 ? in[2] : bias;
    if (b.defined()) {
      check_operands("linear", x, "input", b, "bias");
      LG_CHECK(b.dim() == 1 && b.size(0) == w.size(0), "[linear] bias must be 1-D of size out_features (", w.size(0),
               "), but got bias of size ", b.sizes());
    }
    const int64_t K = x.size(-1), M = K > 0 ? x.numel() / K : layout::checked_numel(x.sizes().slice(0, x.dim() - 1), "linear");
    // (*, K) as (M, K): a view when the leading dims merge (dense or row-major inputs), else a
    // copy -- the one place linear converts, recorded like any contiguous() call.
    Tensor x2;
    if (auto st = layout::view_strides(x.sizes(), x.strides(), {M, K}))
      x2 = detail::make_view(x, {M, K}, *st, x.storage_offset());
    else
      x2 = x.contiguous().view({M, K});
    const Tensor wt = detail::make_view(w, {1, K, w.size(0)}, {w.numel() > 0 ? w.numel() : 1, w.stride(1), w.stride(0)},
                                        w.storage_offset());
    GemmParams p;
    if (b.defined()) {
      p.beta = 1.0;
      p.c = batched(broadcast_view(b, {M, w.size(0)}, "linear", "bias"));
    }
    std::vector<int64_t> sizes = x.sizes().vec();
    sizes.back() = w.size(0);
    const Tensor out = run_gemm(OpId::linear, batched(x2), wt, p);
    return std::vector<Tensor>{detail::make_view(out, sizes, layout::contiguous_strides(sizes), 0)};
  };
  std::vector<Tensor> inputs{input, weight};
  if (bias.defined()) inputs.push_back(bias);
  return dispatch::run_op(dispatch::op_info(OpId::linear), inputs, body, true)[0];
}

Tensor matmul(const Tensor& self, const Tensor& other) {
  auto body = [&](std::span<const Tensor> in) {
    const Tensor &a = in[0], &b = in[1];
    detail::check_defined(a, "matmul", "self");
    detail::check_defined(b, "matmul", "other");
    LG_CHECK(a.dim() >= 1 && b.dim() >= 1, "[matmul] both arguments to matmul need to be at least 1D, but they are ", a.dim(),
             "D and ", b.dim(), "D");
    LG_CHECK(a.device() == b.device(), "[matmul] expected self and other on the same device, but got ", a.device(), " and ",
             b.device());
    LG_CHECK_TYPE(a.dtype() == b.dtype(), "[matmul] expected self and other to have the same dtype, but got: ", a.dtype(),
                  " != ", b.dtype());
    const int64_t k_other = b.dim() == 1 ? b.size(0) : b.size(-2);
    LG_CHECK(a.size(-1) == k_other, "[matmul] shapes cannot be multiplied: self of size ", a.sizes(), " and other of size ",
             b.sizes(), " (", a.size(-1), " != ", k_other, ")");
    if (a.dim() == 1 && b.dim() == 1) {
      return std::vector<Tensor>{mm(a.unsqueeze(0), b.unsqueeze(1)).view({})};
    }
    if (a.dim() <= 2 && b.dim() <= 2) {
      if (a.dim() == 2 && b.dim() == 2) return std::vector<Tensor>{mm(a, b)};
      if (a.dim() == 2) return std::vector<Tensor>{mm(a, b.unsqueeze(1)).squeeze(1)};
      return std::vector<Tensor>{mm(a.unsqueeze(0), b).squeeze(0)};
    }
    // Batched: promote 1-D operands to matrices, broadcast the batch dims, bmm, then drop the
    // promoted dims again.
    const Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a, b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
    const int64_t n = a2.size(-2), k = a2.size(-1), m = b2.size(-1);
    const std::vector<int64_t> batch = layout::broadcast_shapes(
        {a2.sizes().slice(0, a2.dim() - 2), b2.sizes().slice(0, b2.dim() - 2)}, "matmul");
    int64_t B = 1;
    for (int64_t s : batch) B *= s;
    std::vector<int64_t> as = batch, bs = batch, os = batch;
    as.insert(as.end(), {n, k});
    bs.insert(bs.end(), {k, m});
    Tensor out = bmm(a2.expand(as).reshape({B, n, k}), b2.expand(bs).reshape({B, k, m}));
    if (a.dim() > 1) os.push_back(n);
    if (b.dim() > 1) os.push_back(m);
    return std::vector<Tensor>{out.view(os)};
  };
  const std::array<Tensor, 2> inputs{self, other};
  return dispatch::run_op(dispatch::op_info(OpId::matmul), inputs, body, true)[0];
}

}  // namespace lg
