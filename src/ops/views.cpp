// The view family, each a dispatched op: new sizes/strides/offset over the same storage
// (docs/memory-format.md, "Views change strides, and so can change the format"). Only reshape
// and flatten may copy, and only when no view exists.
#include <algorithm>
#include <string>

#include <layoutguard/tensor.h>

#include "core/checked_arith.h"
#include "core/tensor_internal.h"
#include "dispatch/dispatcher.h"

namespace lg {

using detail::make_view;
using dispatch::OpId;

Tensor Tensor::view(IntArrayRef new_sizes) const {
  auto body = [&]() -> Tensor {
    const std::vector<int64_t> shape = layout::infer_size(new_sizes, numel(), "view");
    std::optional<std::vector<int64_t>> st = layout::view_strides(sizes(), strides(), shape);
    LG_CHECK(st.has_value(), "[view] view size ", IntArrayRef(shape),
             " is not compatible with the input ", describe_layout(*this),
             " (at least one dimension spans across two contiguous subspaces); use reshape() instead");
    return make_view(*this, shape, std::move(*st), storage_offset());
  };
  return dispatch::run(OpId::view, body, *this);
}

Tensor Tensor::reshape(IntArrayRef new_sizes) const {
  auto body = [&]() -> Tensor {
    const std::vector<int64_t> shape = layout::infer_size(new_sizes, numel(), "reshape");
    if (auto st = layout::view_strides(sizes(), strides(), shape))
      return make_view(*this, shape, std::move(*st), storage_offset());
    // No view exists: ATen copies into a plain contiguous buffer and views that.
    return clone(MemoryFormat::Contiguous).view(shape);
  };
  return dispatch::run(OpId::reshape, body, *this);
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  auto body = [&]() -> Tensor {
    // A 0-dim tensor has dims -1 and 0 to name (as a 1-dim one), like PyTorch.
    const int64_t start = layout::wrap_dim(start_dim, std::max<int64_t>(dim(), 1), "flatten");
    const int64_t end = layout::wrap_dim(end_dim, std::max<int64_t>(dim(), 1), "flatten");
    if (dim() == 0) return reshape({1});
    LG_CHECK(start <= end, "[flatten] start_dim (", start_dim, ") cannot come after end_dim (",
             end_dim, ")");
    if (start == end) return *this;
    std::vector<int64_t> shape(sizes().begin(), sizes().begin() + start);
    int64_t merged = 1;
    // A zero-size dim outside [start, end] lets the merged product pass int64.
    for (int64_t i = start; i <= end; ++i)
      merged = detail::checked_mul(merged, size(i), "[flatten] sizes ", sizes(), " merged from dim ", start, " to ", end);
    shape.push_back(merged);
    shape.insert(shape.end(), sizes().begin() + end + 1, sizes().end());
    return reshape(shape);
  };
  return dispatch::run(OpId::flatten, body, *this);
}

Tensor Tensor::permute(IntArrayRef dims) const {
  auto body = [&]() -> Tensor {
    LG_CHECK(static_cast<int64_t>(dims.size()) == dim(), "[permute] number of dims ", dims,
             " does not match the tensor's rank ", dim());
    std::vector<int64_t> new_sizes(dim()), new_strides(dim());
    std::vector<bool> seen(dim(), false);
    for (int64_t i = 0; i < dim(); ++i) {
      const int64_t d = layout::wrap_dim(dims[i], dim(), "permute");
      LG_CHECK(!seen[d], "[permute] repeated dim ", dims[i], " in dims ", dims);
      seen[d] = true;
      new_sizes[i] = size(d);
      new_strides[i] = stride(d);
    }
    return make_view(*this, std::move(new_sizes), std::move(new_strides), storage_offset());
  };
  return dispatch::run(OpId::permute, body, *this);
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  auto body = [&]() -> Tensor {
    const int64_t a = layout::wrap_dim(dim0, dim(), "transpose");
    const int64_t b = layout::wrap_dim(dim1, dim(), "transpose");
    std::vector<int64_t> new_sizes = sizes().vec(), new_strides = strides().vec();
    if (dim() > 0) {
      std::swap(new_sizes[a], new_sizes[b]);
      std::swap(new_strides[a], new_strides[b]);
    }
    return make_view(*this, std::move(new_sizes), std::move(new_strides), storage_offset());
  };
  return dispatch::run(OpId::transpose, body, *this);
}

Tensor Tensor::squeeze() const {
  auto body = [&]() -> Tensor {
    std::vector<int64_t> new_sizes, new_strides;
    for (int64_t i = 0; i < dim(); ++i) {
      if (size(i) == 1) continue;
      new_sizes.push_back(size(i));
      new_strides.push_back(stride(i));
    }
    return make_view(*this, std::move(new_sizes), std::move(new_strides), storage_offset());
  };
  return dispatch::run(OpId::squeeze, body, *this);
}

Tensor Tensor::squeeze(int64_t d) const {
  auto body = [&]() -> Tensor {
    const int64_t w = layout::wrap_dim(d, dim(), "squeeze");
    std::vector<int64_t> new_sizes = sizes().vec(), new_strides = strides().vec();
    if (dim() > 0 && size(w) == 1) {
      new_sizes.erase(new_sizes.begin() + w);
      new_strides.erase(new_strides.begin() + w);
    }
    return make_view(*this, std::move(new_sizes), std::move(new_strides), storage_offset());
  };
  return dispatch::run(OpId::squeeze, body, *this);
}

Tensor Tensor::unsqueeze(int64_t d) const {
  auto body = [&]() -> Tensor {
    const int64_t w = layout::wrap_dim(d, dim() + 1, "unsqueeze");
    LG_CHECK(dim() + 1 <= kMaxDims, "[unsqueeze] the result would have rank ", dim() + 1,
             "; layoutguard supports tensors of rank at most ", kMaxDims);
    std::vector<int64_t> new_sizes = sizes().vec(), new_strides = strides().vec();
    // ATen's choice for the new dim's stride; it is why CL.unsqueeze(2) looks channels_last_3d.
    const int64_t st = w < dim() ? detail::checked_mul(size(w), stride(w), "[unsqueeze] the new dim's stride, size times "
                                                       "stride of dim ", w, " of sizes ", sizes(), " strides ", strides())
                                 : 1;
    new_sizes.insert(new_sizes.begin() + w, 1);
    new_strides.insert(new_strides.begin() + w, st);
    return make_view(*this, std::move(new_sizes), std::move(new_strides), storage_offset());
  };
  return dispatch::run(OpId::unsqueeze, body, *this);
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  auto body = [&]() -> Tensor {
    LG_CHECK_INDEX(dim() > 0, "[select] cannot be applied to a 0-dim tensor");
    const int64_t w = layout::wrap_dim(d, dim(), "select");
    const int64_t n = size(w);
    LG_CHECK_INDEX(index >= -n && index < n, "[select] index ", index,
                   " is out of bounds for dimension ", d, " with size ", n);
    const int64_t i = index < 0 ? index + n : index;
    std::vector<int64_t> new_sizes = sizes().vec(), new_strides = strides().vec();
    new_sizes.erase(new_sizes.begin() + w);
    new_strides.erase(new_strides.begin() + w);
    // An empty tensor may hold any strides: the new offset is not bounded by the storage.
    const int64_t offset = detail::checked_add(
        storage_offset(), detail::checked_mul(i, stride(w), "[select] index times stride of dim ", w),
        "[select] the view's storage offset");
    return make_view(*this, std::move(new_sizes), std::move(new_strides), offset);
  };
  return dispatch::run(OpId::select, body, *this);
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  auto body = [&]() -> Tensor {
    LG_CHECK_INDEX(dim() > 0, "[narrow] cannot be applied to a 0-dim tensor");
    const int64_t w = layout::wrap_dim(d, dim(), "narrow");
    const int64_t n = size(w);
    LG_CHECK_INDEX(start >= -n && start <= n, "[narrow] start (", start,
                   ") is out of range for dimension ", d, " of size ", n);
    const int64_t s = start < 0 ? start + n : start;
    // length <= n - s rather than s + length <= n: the sum can pass int64.
    LG_CHECK(length >= 0, "[narrow] received length ", length, "; required a non-negative length");
    LG_CHECK(length <= n - s, "[narrow] start (", s, ") + length (", length, ") exceeds dimension ", d, " of size ", n);
    return slice(w, s, s + length, 1);
  };
  return dispatch::run(OpId::narrow, body, *this);
}

Tensor Tensor::slice(int64_t d, std::optional<int64_t> start, std::optional<int64_t> end,
                     int64_t step) const {
  auto body = [&]() -> Tensor {
    LG_CHECK_INDEX(dim() > 0, "[slice] cannot be applied to a 0-dim tensor");
    const int64_t w = layout::wrap_dim(d, dim(), "slice");
    LG_CHECK(step > 0, "[slice] step must be positive (got ", step, ")");
    const int64_t n = size(w);
    // Python slice semantics: negative bounds count from the end, then clamp into [0, n].
    auto clamp_bound = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
    const int64_t s = clamp_bound(start.value_or(0));
    const int64_t e = std::max(s, clamp_bound(end.value_or(n)));
    std::vector<int64_t> new_sizes = sizes().vec(), new_strides = strides().vec();
    // (e - s + step - 1) / step without the sum, which passes int64 for a step near its top.
    new_sizes[w] = e == s ? 0 : (e - s - 1) / step + 1;
    // stride * step, as in PyTorch. Beyond int64 it is only an error when the size is at least
    // 2; one element (or none) is never stepped over, and keeps the plain stride.
    if (__builtin_mul_overflow(stride(w), step, &new_strides[w])) {
      LG_CHECK(new_sizes[w] <= 1, "[slice] step ", step, " times the stride ", stride(w), " of dimension ", d,
               " is beyond int64");
      new_strides[w] = stride(w);
    }
    const int64_t offset = detail::checked_add(
        storage_offset(), detail::checked_mul(s, stride(w), "[slice] start times stride of dim ", w),
        "[slice] the view's storage offset");
    return make_view(*this, std::move(new_sizes), std::move(new_strides), offset);
  };
  return dispatch::run(OpId::slice, body, *this);
}

Tensor Tensor::expand(IntArrayRef target) const {
  auto body = [&]() -> Tensor {
    const int64_t rank = static_cast<int64_t>(target.size());
    LG_CHECK(rank >= dim(), "[expand] the number of sizes provided (", rank,
             ") must be greater or equal to the number of dimensions in the tensor (", dim(), ")");
    LG_CHECK(rank <= kMaxDims, "[expand] the result would have rank ", rank,
             "; layoutguard supports tensors of rank at most ", kMaxDims);
    std::vector<int64_t> new_sizes(rank), new_strides(rank);
    // ATen's inferExpandGeometry, innermost first: new leading dims of size 1 get the stride
    // that a contiguous outer dim would have; broadcast dims get stride 0.
    for (int64_t i = rank - 1; i >= 0; --i) {
      const int64_t d = dim() - (rank - i);
      int64_t sz = d >= 0 ? size(d) : 1;
      int64_t st = d >= 0 ? stride(d)
                   : i + 1 < rank ? detail::checked_mul(new_sizes[i + 1], new_strides[i + 1], "[expand] a new leading dim's "
                                                        "stride for target sizes ", target)
                                  : 1;
      int64_t want = target[i];
      if (want == -1) {
        LG_CHECK(d >= 0, "[expand] the expanded size of the tensor (-1) isn't allowed in a leading, "
                 "non-existing dimension ", i);
        want = sz;
      }
      LG_CHECK(want >= 0, "[expand] invalid size ", want, " in target sizes ", target);
      if (sz != want) {
        LG_CHECK(sz == 1, "[expand] the expanded size of the tensor (", want,
                 ") must match the existing size (", sz, ") at non-singleton dimension ", i,
                 "; target sizes ", target, ", tensor sizes ", sizes());
        sz = want;
        st = 0;
      }
      new_sizes[i] = sz;
      new_strides[i] = st;
    }
    layout::checked_numel(new_sizes, "expand");
    return make_view(*this, std::move(new_sizes), std::move(new_strides), storage_offset());
  };
  return dispatch::run(OpId::expand, body, *this);
}

Tensor Tensor::as_strided(IntArrayRef new_sizes, IntArrayRef new_strides,
                          std::optional<int64_t> offset) const {
  auto body = [&]() -> Tensor {
    layout::checked_numel(new_sizes, "as_strided");
    const int64_t off = offset.value_or(storage_offset());
    LG_CHECK(off >= 0, "[as_strided] storage offset must be non-negative (got ", off, ")");
    const int64_t needed = layout::required_storage_elements(new_sizes, new_strides, "as_strided");
    const int64_t available = static_cast<int64_t>(storage().nbytes() / itemsize());
    // off <= available - needed rather than off + needed <= available: the sum can pass int64.
    int64_t total = 0;
    const bool beyond_int64 = __builtin_add_overflow(off, needed, &total);
    LG_CHECK(needed == 0 || (needed <= available && off <= available - needed), "[as_strided] sizes ", new_sizes,
             ", strides ", new_strides, " and storage offset ", off, " need ",
             beyond_int64 ? std::string("more than int64 can count") : std::to_string(total),
             " elements, but the storage holds ", available, " elements of ", dtype());
    return make_view(*this, new_sizes.vec(), new_strides.vec(), off);
  };
  return dispatch::run(OpId::as_strided, body, *this);
}

}  // namespace lg
