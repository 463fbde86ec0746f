// Tensors to the kernels' plain argument structs: make_geometry (the dim merging of
// src/cpu/elementwise.h), the reduction and softmax arguments, and the 5-D views of pooling and
// upsampling. Geometry and View5 get their IndexDividers here; the reduce and softmax launchers
// set the dividers of their own structs.
#include "cuda/geometry.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include <layoutguard/error.h>

namespace lg::cuda::detail {

kernels::Geometry make_geometry(const Tensor& out, std::initializer_list<const Tensor*> inputs, std::string_view op) {
  std::vector<const Tensor*> ops{&out};
  ops.insert(ops.end(), inputs.begin(), inputs.end());
  LG_ASSERT(ops.size() <= static_cast<size_t>(kernels::kMaxOperands), "too many operands for a CUDA geometry");
  kernels::Geometry g;
  g.operands = static_cast<int>(ops.size());
  g.numel = out.numel();
  for (size_t k = 0; k < ops.size(); ++k) g.data[k] = static_cast<char*>(ops[k]->data_ptr());
  std::vector<int64_t> order;
  for (int64_t d = 0; d < out.dim(); ++d)
    if (out.size(d) != 1) order.push_back(d);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return out.stride(a) > out.stride(b); });
  std::vector<int64_t> sizes;
  std::vector<std::vector<int64_t>> strides;  // per dim, per operand
  for (int64_t d : order) {
    std::vector<int64_t> s(ops.size());
    for (size_t k = 0; k < ops.size(); ++k) s[k] = ops[k]->stride(d);
    if (!sizes.empty()) {
      bool mergeable = true;
      for (size_t k = 0; k < ops.size(); ++k) mergeable &= strides.back()[k] == s[k] * out.size(d);
      if (mergeable) {
        sizes.back() *= out.size(d);
        strides.back() = s;
        continue;
      }
    }
    sizes.push_back(out.size(d));
    strides.push_back(s);
  }
  LG_CHECK_NOT_IMPLEMENTED(sizes.size() <= static_cast<size_t>(kernels::kMaxDims), "[", op, "] on CUDA supports at most ",
                           kernels::kMaxDims, " dims after merging contiguous ones, but the operands of sizes ",
                           out.sizes(), " need ", sizes.size());
  g.ndim = static_cast<int>(sizes.size());
  for (int d = 0; d < g.ndim; ++d) {
    g.sizes[d] = sizes[static_cast<size_t>(d)];
    g.dividers[d] = kernels::IndexDivider::of(static_cast<uint64_t>(g.sizes[d]));
    for (size_t k = 0; k < ops.size(); ++k) g.strides[k][d] = strides[static_cast<size_t>(d)][k];
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
  a.count = 1;
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
  a.lines = 1;
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
