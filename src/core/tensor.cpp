// Tensor metadata and element access, and the core's shared checks (device, overlap). The op
// methods (conversions, copies, views) live in src/ops and go through the dispatcher.
#include <layoutguard/tensor.h>

#include <layoutguard/config.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/checked_arith.h"
#include "core/enum_checks.h"
#include "core/tensor_internal.h"

namespace lg {
namespace detail {

TensorImpl::TensorImpl(Storage storage, DType dtype, std::vector<int64_t> sizes,
                       std::vector<int64_t> strides, int64_t storage_offset)
    : storage_(std::move(storage)),
      dtype_(dtype),
      sizes_(std::move(sizes)),
      strides_(std::move(strides)),
      storage_offset_(storage_offset),
      numel_(1),
      flags_(layout::compute_flags(sizes_, strides_)) {
  // An empty tensor's other sizes may multiply past int64 in some orders: (0, 2^32, 2^62) is a
  // valid tensor, its transpose (2^32, 2^62, 0) too (the tensor fuzzer's finding). Nonzero
  // sizes were checked where they were made, so their product fits; checked all the same.
  if (std::find(sizes_.begin(), sizes_.end(), 0) != sizes_.end()) {
    numel_ = 0;
    return;
  }
  for (int64_t s : sizes_) numel_ = checked_mul(numel_, s, "[tensor] sizes ", IntArrayRef(sizes_), " count elements");
}

Tensor make_tensor(Storage storage, DType dtype, std::vector<int64_t> sizes,
                   std::vector<int64_t> strides, int64_t storage_offset) {
  return Tensor(std::make_shared<TensorImpl>(std::move(storage), dtype, std::move(sizes),
                                             std::move(strides), storage_offset));
}

Tensor make_view(const Tensor& t, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                 int64_t storage_offset) {
  return make_tensor(t.storage(), t.dtype(), std::move(sizes), std::move(strides), storage_offset);
}

Tensor view_as_5d(const Tensor& t) {
  LG_ASSERT(t.dim() >= 2 && t.dim() <= 5, "view_as_5d takes ranks 2 to 5");
  if (t.dim() == 5) return t;
  std::vector<int64_t> sizes = t.sizes().vec(), strides = t.strides().vec();
  for (size_t at = 2; sizes.size() < 5; ++at) {
    const int64_t stride = at < sizes.size() ? sizes[at] * strides[at] : 1;
    sizes.insert(sizes.begin() + static_cast<std::ptrdiff_t>(at), 1);
    strides.insert(strides.begin() + static_cast<std::ptrdiff_t>(at), stride);
  }
  return make_view(t, std::move(sizes), std::move(strides), t.storage_offset());
}

void check_device_supported(Device device, std::string_view op) {
  if (!device.is_cpu()) check_backend_device(device, op);
}

void check_scalar_fits(const Scalar& value, DType dtype, std::string_view op, std::string_view what) {
  if (dtype == kBool || dtype == kFloat64) return;
  const double v = value.to_double();
  double lowest = 0, highest = 0;
  switch (dtype) {
    case DType::Float32: highest = static_cast<double>(std::numeric_limits<float>::max()); break;
    case DType::Float16: highest = 65504.0; break;
    case DType::BFloat16: highest = 3.3895313892515355e38; break;
    case DType::Int64: lowest = -9223372036854775808.0, highest = 9223372036854775807.0; break;
    case DType::Int32: lowest = INT32_MIN, highest = INT32_MAX; break;
    case DType::UInt8: lowest = -255, highest = 255; break;
    default: return;
  }
  if (is_floating_point(dtype)) {
    lowest = -highest;
    if (!std::isfinite(v)) return;
  } else if (dtype == kUInt8 && value.is_floating_point()) {
    lowest = 0;  // only integer values wrap
  } else if (value.is_integral() && dtype == kInt64) {
    return;  // every int64 fits; the doubles above only bound floating values
  }
  // int64's top (2^63 - 1) is 2^63 as a double, so a floating value must stay below that.
  const bool fits = std::isfinite(v) && v >= lowest && v <= highest && (dtype != kInt64 || v < 9223372036854775808.0);
  LG_CHECK(fits, "[", op, "] ", what, " ", value, " cannot be converted to dtype ", dtype,
           " without overflow; required a value in [", lowest, ", ", highest, "]",
           is_floating_point(dtype) ? " or infinity or NaN" : "", dtype == kUInt8 ? " (negative values wrap)" : "");
}

void check_defined(const Tensor& t, std::string_view op, std::string_view what) {
  LG_CHECK(t.defined(), "[", op, "] received an undefined tensor as ", what,
           "; required a defined tensor");
}

void check_no_internal_overlap(const Tensor& t, std::string_view op) {
  // Like ATen's has_internal_overlap: dense (and empty) tensors cannot overlap; otherwise only
  // the certain case, a stride-0 dim of size > 1, is an error.
  if (t.is_non_overlapping_and_dense()) return;
  for (int64_t i = 0; i < t.dim(); ++i)
    LG_CHECK(!(t.stride(i) == 0 && t.size(i) > 1), "[", op,
             "] unsupported operation: more than one element of the written-to tensor ",
             describe_layout(t), " refers to a single memory location (stride 0 in dim ", i,
             "); clone() the tensor before writing to it");
}

bool ranges_overlap(const Tensor& a, const Tensor& b) {
  if (!a.storage().is_alias_of(b.storage()) || a.numel() == 0 || b.numel() == 0) return false;
  auto range = [](const Tensor& t) {
    const auto* begin = static_cast<const char*>(t.data_ptr());
    const int64_t n = layout::required_storage_elements(t.sizes(), t.strides(), "overlap");
    return std::pair{begin, begin + n * static_cast<int64_t>(t.itemsize())};
  };
  const auto [a0, a1] = range(a);
  const auto [b0, b1] = range(b);
  return a0 < b1 && b0 < a1;
}

void throw_data_ptr_type_mismatch(DType requested, DType held) {
  throw TypeError(str("[data_ptr] expected element type ", requested, " but the tensor holds ",
                      held, "; call data_ptr<T>() with the tensor's element type"));
}

}  // namespace detail

void Tensor::throw_undefined() {
  throw ValueError("[Tensor] the tensor is undefined (default-constructed); required a defined tensor");
}

int64_t Tensor::size(int64_t d) const {
  LG_CHECK_INDEX(dim() > 0, "[size] dimension specified as ", d, " but the tensor has no dimensions");
  return sizes()[layout::wrap_dim(d, dim(), "size")];
}

int64_t Tensor::stride(int64_t d) const {
  LG_CHECK_INDEX(dim() > 0, "[stride] dimension specified as ", d, " but the tensor has no dimensions");
  return strides()[layout::wrap_dim(d, dim(), "stride")];
}

bool Tensor::is_alias_of(const Tensor& other) const {
  return defined() && other.defined() && storage().is_alias_of(other.storage());
}

bool Tensor::is_contiguous(MemoryFormat fmt) const {
  const layout::Flags& f = impl().flags();
  switch (fmt) {
    case MemoryFormat::ChannelsLast: return f.channels_last_contiguous;
    case MemoryFormat::ChannelsLast3d: return f.channels_last_3d_contiguous;
    case MemoryFormat::Contiguous:
    case MemoryFormat::Preserve: return f.contiguous;
  }
  lg::detail::check_memory_format(fmt, "is_contiguous");  // reached by no enumerator: raises
  return f.contiguous;
}

MemoryFormat Tensor::suggest_memory_format(bool exact_match) const {
  const layout::Flags& f = impl().flags();
  if (!exact_match) {
    if (f.channels_last_like) return MemoryFormat::ChannelsLast;
    if (f.channels_last_3d_like) return MemoryFormat::ChannelsLast3d;
    return MemoryFormat::Contiguous;
  }
  return layout::suggest_memory_format(sizes(), strides(), true);
}

void* Tensor::raw_data_ptr() const {
  auto* base = static_cast<char*>(storage().data());
  if (base == nullptr) return nullptr;
  return base + storage_offset() * static_cast<int64_t>(itemsize());
}

Scalar Tensor::item() const {
  LG_CHECK(numel() == 1, "[item] a tensor with ", numel(), " elements (sizes ", sizes(),
           ") cannot be converted to a scalar; required exactly one element");
  detail::check_device_supported(device(), "item");
  if (!device().is_cpu()) return cpu().item();  // device memory is read through a copy
  return visit_dtype(dtype(), [&]<typename T>(std::type_identity<T>) {
    return Scalar(*static_cast<const T*>(data_ptr()));
  });
}

}  // namespace lg
