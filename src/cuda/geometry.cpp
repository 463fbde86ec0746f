// Tensors to the kernels' plain argument structs: make_geometry (the dim merging of
// src/cpu/elementwise.h), the reduction and softmax arguments, and the 5-D views of pooling and
// upsampling. Geometry and View5 get their IndexDividers here; the reduce and softmax launchers
// set the dividers of their own structs.
#include "cuda/geometry.h"

#include <algorithm>

#include <layoutguard/error.h>

namespace lg::cuda::detail {

kernels::Geometry make_geometry(const Tensor& out, std::initializer_list<const Tensor*> inputs, std::string_view op) {
  // Fixed arrays, not vectors: this runs on every pointwise op and copy, and its allocations
  // were a tenth of a small op's host instructions (bench/host_instructions).
  LG_ASSERT(inputs.size() + 1 <= static_cast<size_t>(kernels::kMaxOperands), "too many operands for a CUDA geometry");
  const Tensor* ops[kernels::kMaxOperands] = {&out};
  int operands = 1;
  for (const Tensor* t : inputs) {
    LG_ASSERT(t->dim() == out.dim(), "CUDA geometry operands must be broadcast to the output's rank first");
    ops[operands++] = t;
  }
  kernels::Geometry g;
  g.operands = operands;
  g.numel = out.numel();
  for (int k = 0; k < operands; ++k) g.data[k] = static_cast<char*>(ops[k]->data_ptr());
  // The launchers return on numel 0 without reading the rest; and only with numel > 0 are the
  // products of sizes below bounded by numel (a zero-size dim lets the others be anything).
  if (g.numel == 0) return g;
  const IntArrayRef out_sizes = out.sizes(), out_strides = out.strides();
  // The output's non-trivial dims, outermost (largest stride) first.
  int64_t order[lg::kMaxDims];
  int64_t dims = 0;
  for (int64_t d = 0; d < out.dim(); ++d)
    if (out_sizes[d] != 1) order[dims++] = d;
  std::stable_sort(order, order + dims, [&](int64_t a, int64_t b) { return out_strides[a] > out_strides[b]; });
  // Dims every operand steps through evenly merge into one.
  int64_t sizes[lg::kMaxDims];
  int64_t strides[lg::kMaxDims][kernels::kMaxOperands];
  int64_t merged = 0;
  for (int64_t i = 0; i < dims; ++i) {
    const int64_t d = order[i];
    bool mergeable = merged > 0;
    // stride * size can exceed int64 only for strides no allocation could back (from_blob
    // trusts its caller's): such a dim is simply not merged.
    for (int k = 0; k < operands && mergeable; ++k) {
      int64_t span = 0;
      mergeable = !__builtin_mul_overflow(ops[k]->strides()[d], out_sizes[d], &span) && strides[merged - 1][k] == span;
    }
    if (!mergeable) sizes[merged++] = 1;
    sizes[merged - 1] *= out_sizes[d];
    for (int k = 0; k < operands; ++k) strides[merged - 1][k] = ops[k]->strides()[d];
  }
  LG_CHECK_NOT_IMPLEMENTED(merged <= kernels::kMaxDims, "[", op, "] on CUDA supports at most ", kernels::kMaxDims,
                           " dims after merging contiguous ones, but the operands of sizes ", out.sizes(), " need ",
                           merged);
  g.ndim = static_cast<int>(merged);
  for (int d = 0; d < g.ndim; ++d) {
    g.sizes[d] = sizes[d];
    g.dividers[d] = kernels::IndexDivider::of(static_cast<uint64_t>(g.sizes[d]));
    for (int k = 0; k < operands; ++k) g.strides[k][d] = strides[d][k];
  }
  return g;
}

namespace {
[[noreturn]] void too_many_dims(std::string_view op, const Tensor& t) {
  throw NotImplementedError(lg::detail::str("[", op, "] on CUDA supports at most ", kernels::kMaxDims,
                                            " non-trivial dims, but got input of size ", t.sizes()));
}
}  // namespace

kernels::ReduceArgs reduce_args(const Tensor& out, const Tensor& input) {
  kernels::ReduceArgs a;
  a.out = static_cast<char*>(out.data_ptr());
  a.in = static_cast<const char*>(input.data_ptr());
  a.outputs = out.numel();
  // An empty input reduces nothing (count 0); only a non-empty one bounds the product below.
  a.count = input.numel() == 0 ? 0 : 1;
  for (int64_t d = 0; d < input.dim(); ++d) {
    if (input.size(d) == 1) continue;
    if (out.size(d) == 1) {
      if (a.reduced == kernels::kMaxDims) too_many_dims("reduce", input);
      a.red_size[a.reduced] = input.size(d);
      a.red_stride[a.reduced] = input.stride(d);
      a.count *= input.size(d);
      ++a.reduced;
    } else {
      if (a.kept == kernels::kMaxDims) too_many_dims("reduce", input);
      a.kept_size[a.kept] = input.size(d);
      a.kept_in_stride[a.kept] = input.stride(d);
      a.kept_out_stride[a.kept] = out.stride(d);
      ++a.kept;
    }
  }
  return a;
}

kernels::SoftmaxArgs softmax_args(const Tensor& out, const Tensor& input, int64_t dim, bool log) {
  kernels::SoftmaxArgs a;
  a.out = static_cast<char*>(out.data_ptr());
  a.in = static_cast<const char*>(input.data_ptr());
  a.log = log;
  // An empty input has no lines (the launcher returns); only a non-empty one bounds the product.
  a.lines = input.numel() == 0 ? 0 : 1;
  if (input.dim() == 0) {
    a.n = 1;
    return a;
  }
  a.n = input.size(dim);
  a.in_stride = input.stride(dim);
  a.out_stride = out.stride(dim);
  for (int64_t d = 0; d < input.dim(); ++d) {
    if (d == dim || input.size(d) == 1) continue;
    if (a.other == kernels::kMaxDims) too_many_dims("softmax", input);
    a.other_size[a.other] = input.size(d);
    a.other_in_stride[a.other] = input.stride(d);
    a.other_out_stride[a.other] = out.stride(d);
    a.lines *= input.size(d);
    ++a.other;
  }
  return a;
}

kernels::View5 view5(const Tensor& t) {
  LG_ASSERT(t.dim() == 5, "view5 takes a 5-D tensor");
  kernels::View5 v;
  for (int d = 0; d < 5; ++d) {
    v.size[d] = t.size(d);
    v.stride[d] = t.stride(d);
    v.size_divider[d] = kernels::IndexDivider::of(static_cast<uint64_t>(v.size[d]));
    v.stride_divider[d] = kernels::IndexDivider::of(static_cast<uint64_t>(v.stride[d]));
  }
  return v;
}

kernels::ScalarType scalar_type(DType dtype) {
  switch (dtype) {
    case DType::Float32: return kernels::ScalarType::Float32;
    case DType::Float16: return kernels::ScalarType::Float16;
    case DType::BFloat16: return kernels::ScalarType::BFloat16;
    case DType::Float64: return kernels::ScalarType::Float64;
    case DType::Int64: return kernels::ScalarType::Int64;
    case DType::Int32: return kernels::ScalarType::Int32;
    case DType::UInt8: return kernels::ScalarType::UInt8;
    case DType::Bool: return kernels::ScalarType::Bool;
  }
  return kernels::ScalarType::Float32;
}

}  // namespace lg::cuda::detail
