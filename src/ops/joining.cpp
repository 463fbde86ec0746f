// cat, stack, split, chunk: validation with ATen's messages, cat's layout vote, and
// split/chunk as narrow views reported as one call with several outputs.
#include <layoutguard/joining.h>

#include <layoutguard/factories.h>

#include "core/tensor_internal.h"
#include "dispatch/dispatcher.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace {

using dispatch::OpId;

// A 1-D empty tensor: PyTorch's cat skips it for shapes (but it still votes in the layout).
bool legacy_empty(const Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

// PyTorch's cat rule: every input's suggested format votes; any contiguous vote or disagreement wins
// contiguous.
MemoryFormat cat_format(std::span<const Tensor> tensors) {
  std::optional<MemoryFormat> fmt;
  for (const Tensor& t : tensors) {
    const MemoryFormat f = t.suggest_memory_format();
    if (f == MemoryFormat::Contiguous || (fmt && *fmt != f)) return MemoryFormat::Contiguous;
    fmt = f;
  }
  return fmt.value_or(MemoryFormat::Contiguous);
}

Tensor cat_body(std::span<const Tensor> tensors, int64_t dim_in, std::string_view op) {
  LG_CHECK(!tensors.empty(), "[", op, "] expected a non-empty list of tensors");
  const Tensor* ref = nullptr;
  for (size_t i = 0; i < tensors.size(); ++i) {
    detail::check_defined(tensors[i], op, "tensors[" + std::to_string(i) + "]");
    if (!ref && !legacy_empty(tensors[i])) ref = &tensors[i];
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    LG_CHECK(t.device() == tensors[0].device(), "[", op, "] expected all tensors on ", tensors[0].device(), ", but tensor ", i,
             " is on ", t.device());
    LG_CHECK_TYPE(t.dtype() == tensors[0].dtype(), "[", op, "] expected all tensors to have dtype ", tensors[0].dtype(),
                  ", but tensor ", i, " has ", t.dtype());
  }
  detail::check_device_supported(tensors[0].device(), op);
  if (!ref) return empty({0}, tensors[0].options());  // only legacy empties
  LG_CHECK_INDEX(ref->dim() > 0, "[", op, "] zero-dimensional tensor cannot be concatenated");
  const int64_t dim = layout::wrap_dim(dim_in, ref->dim(), op);
  std::vector<int64_t> shape = ref->sizes().vec();
  shape[dim] = 0;
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (legacy_empty(t)) continue;
    LG_CHECK(t.dim() == ref->dim(), "[", op, "] tensors must have the same number of dimensions: got ", ref->dim(), " and ",
             t.dim(), " (tensor ", i, ")");
    for (int64_t d = 0; d < t.dim(); ++d)
      LG_CHECK(d == dim || t.size(d) == ref->size(d), "[", op, "] sizes of tensors must match except in dimension ", dim,
               ". Expected size ", ref->size(d), " but got size ", t.size(d), " for tensor number ", i, " in the list");
    LG_CHECK(!__builtin_add_overflow(shape[dim], t.size(dim), &shape[dim]), "[", op, "] the sizes in dimension ", dim,
             " add up to more than int64 can hold (at tensor number ", i, ")");
    parts.push_back(t);
  }
  layout::checked_numel(shape, op);
  Tensor out = empty(shape, ref->options(), cat_format(tensors));
  // An input that shares memory with out cannot exist (out is fresh), so no overlap check.
  if (out.numel() > 0) dispatch::kernel_for<OpId::cat>(out.device())(out, parts, dim);
  return out;
}

std::vector<Tensor> narrow_views(const Tensor& t, int64_t dim, const std::vector<int64_t>& sizes) {
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(t.narrow(dim, start, s));
    start += s;
  }
  return out;
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  auto body = [&](std::span<const Tensor> in) { return std::vector<Tensor>{cat_body(in, dim, "cat")}; };
  return dispatch::run_op(dispatch::op_info(OpId::cat), tensors, body, true)[0];
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim_in) {
  auto body = [&](std::span<const Tensor> in) {
    LG_CHECK(!in.empty(), "[stack] expected a non-empty list of tensors");
    for (size_t i = 0; i < in.size(); ++i) {
      detail::check_defined(in[i], "stack", "tensors[" + std::to_string(i) + "]");
      LG_CHECK(in[i].sizes() == in[0].sizes(), "[stack] expects each tensor to be equal size, but got ", in[0].sizes(),
               " at entry 0 and ", in[i].sizes(), " at entry ", i);
    }
    const int64_t rank = in[0].dim();
    const int64_t dim = layout::wrap_dim(dim_in, rank + 1, "stack");
    std::vector<int64_t> shape = in[0].sizes().vec();
    shape.insert(shape.begin() + dim, static_cast<int64_t>(in.size()));
    if (dim < rank) return std::vector<Tensor>{cat_body(in, dim, "stack").view(shape)};  // as PyTorch stacks: cat, then a view
    std::vector<Tensor> unsqueezed;
    for (const Tensor& t : in) unsqueezed.push_back(t.unsqueeze(dim));
    return std::vector<Tensor>{cat_body(unsqueezed, dim, "stack")};
  };
  return dispatch::run_op(dispatch::op_info(OpId::stack), tensors, body, true)[0];
}

std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim_in) {
  auto body = [&](std::span<const Tensor> in) {
    detail::check_defined(in[0], "split", "self");
    LG_CHECK_INDEX(in[0].dim() > 0, "[split] expects at least a 1-dimensional tensor");
    const int64_t dim = layout::wrap_dim(dim_in, in[0].dim(), "split");
    const int64_t n = in[0].size(dim);
    LG_CHECK(split_size > 0 || (split_size == 0 && n == 0), "[split] split_size can only be 0 if dimension size is 0, but got split_size ",
             split_size, " for dimension ", dim, " of size ", n);
    std::vector<int64_t> sizes;
    if (split_size == 0) sizes.push_back(0);
    for (int64_t s = 0; s < n; s += split_size) sizes.push_back(std::min(split_size, n - s));
    return narrow_views(in[0], dim, sizes);
  };
  return dispatch::run_op(dispatch::op_info(OpId::split), std::span<const Tensor>(&t, 1), body, true);
}

std::vector<Tensor> split_with_sizes(const Tensor& t, IntArrayRef split_sizes, int64_t dim_in) {
  const std::vector<int64_t> sizes = split_sizes.vec();
  auto body = [&](std::span<const Tensor> in) {
    detail::check_defined(in[0], "split_with_sizes", "self");
    LG_CHECK_INDEX(in[0].dim() > 0, "[split_with_sizes] expects at least a 1-dimensional tensor");
    const int64_t dim = layout::wrap_dim(dim_in, in[0].dim(), "split_with_sizes");
    int64_t total = 0;
    bool within = true;  // the sum so far is at most the dim's size: past it the sum can only fail, and could pass int64
    for (int64_t s : sizes) {
      LG_CHECK(s >= 0, "[split_with_sizes] split sizes must be non-negative, but got ", IntArrayRef(sizes));
      within = within && s <= in[0].size(dim) - total;
      if (within) total += s;
    }
    LG_CHECK(within && total == in[0].size(dim), "[split_with_sizes] expects split_sizes to sum exactly to ", in[0].size(dim),
             " (input tensor's size at dimension ", dim, "), but got split_sizes ", IntArrayRef(sizes));
    return narrow_views(in[0], dim, sizes);
  };
  return dispatch::run_op(dispatch::op_info(OpId::split), std::span<const Tensor>(&t, 1), body, true);
}

std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim_in) {
  auto body = [&](std::span<const Tensor> in) {
    detail::check_defined(in[0], "chunk", "self");
    LG_CHECK_INDEX(in[0].dim() > 0, "[chunk] expects at least a 1-dimensional tensor");
    LG_CHECK(chunks > 0, "[chunk] number of chunks must be greater than 0, but got ", chunks);
    const int64_t dim = layout::wrap_dim(dim_in, in[0].dim(), "chunk");
    const int64_t n = in[0].size(dim), each = n == 0 ? 0 : (n - 1) / chunks + 1;  // ceil, without n + chunks
    std::vector<int64_t> sizes;
    if (each == 0) sizes.push_back(0);  // PyTorch returns one empty chunk for an empty dim
    for (int64_t s = 0; each > 0 && s < n; s += each) sizes.push_back(std::min(each, n - s));
    return narrow_views(in[0], dim, sizes);
  };
  return dispatch::run_op(dispatch::op_info(OpId::chunk), std::span<const Tensor>(&t, 1), body, true);
}

}  // namespace lg
