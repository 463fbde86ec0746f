// Factories: empty, empty_strided, zeros/ones/full, arange, from_blob and the *_like family.
#include <layoutguard/factories.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/enum_checks.h"
#include "core/tensor_internal.h"
#include "core/wide_int.h"
#include "ops/ops_internal.h"

namespace lg {
namespace {

// Bytes for `elements` items of dtype, or a ValueError naming op when that overflows.
size_t checked_nbytes(int64_t elements, DType dtype, std::string_view op) {
  int64_t bytes = 0;
  LG_CHECK(!__builtin_mul_overflow(elements, static_cast<int64_t>(itemsize(dtype)), &bytes), "[",
           op, "] ", elements, " elements of ", dtype, " need more bytes than int64 can count");
  return static_cast<size_t>(bytes);
}

Tensor allocate(IntArrayRef sizes, std::vector<int64_t> strides, const TensorOptions& options,
                std::string_view op) {
  detail::check_dtype(options.dtype(), op);
  detail::check_device_supported(options.device(), op);
  layout::checked_numel(sizes, op);
  const int64_t elements = layout::required_storage_elements(sizes, strides, op);
  Storage storage(checked_nbytes(elements, options.dtype(), op),
                  options.device().is_cpu() ? cpu_allocator() : detail::backend_allocator(options.device()));
  // A bool holding any byte but 0 or 1 is undefined behaviour to read in C++, and every CPU
  // kernel reads bools as bool: uninitialised bool memory is therefore zeroed (the fuzzer found
  // clone() of a fresh empty bool tensor loading 190 as a bool).
  if (options.dtype() == DType::Bool && options.device().is_cpu() && storage.nbytes() > 0)
    std::memset(storage.data(), 0, storage.nbytes());
  return detail::make_tensor(std::move(storage), options.dtype(), sizes.vec(), std::move(strides), 0);
}

TensorOptions merge(const Tensor& t, const TensorOptions& options) {
  return TensorOptions()
      .dtype(options.has_dtype() ? options.dtype() : t.dtype())
      .device(options.has_device() ? options.device() : t.device());
}

}  // namespace

Tensor empty(IntArrayRef sizes, TensorOptions options, MemoryFormat fmt) {
  return allocate(sizes, layout::strides_for(sizes, fmt, "empty"), options, "empty");
}

namespace detail {

Tensor empty_like_for(const Tensor& t, const TensorOptions& options, MemoryFormat fmt,
                      std::string_view op) {
  check_defined(t, op, "input");
  const TensorOptions merged = merge(t, options);
  if (fmt != MemoryFormat::Preserve)
    return allocate(t.sizes(), layout::strides_for(t.sizes(), fmt, op), merged, op);
  return allocate(t.sizes(), layout::preserved_strides(t.sizes(), t.strides()), merged, op);
}

}  // namespace detail

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, TensorOptions options) {
  return allocate(sizes, strides.vec(), options, "empty_strided");
}

Tensor zeros(IntArrayRef sizes, TensorOptions options) {
  Tensor t = empty(sizes, options);
  t.fill_(0);
  return t;
}

Tensor ones(IntArrayRef sizes, TensorOptions options) {
  Tensor t = empty(sizes, options);
  t.fill_(1);
  return t;
}

Tensor full(IntArrayRef sizes, const Scalar& fill_value, TensorOptions options) {
  if (!options.has_dtype()) options = options.dtype(fill_value.default_dtype());
  Tensor t = empty(sizes, options);
  t.fill_(fill_value);
  return t;
}

Tensor arange(const Scalar& end, TensorOptions options) { return arange(0, end, 1, options); }

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions options) {
  const bool integral = !start.is_floating_point() && !end.is_floating_point() &&
                        !step.is_floating_point();
  if (!options.has_dtype()) options = options.dtype(integral ? kInt64 : kFloat32);
  LG_CHECK(options.dtype() != kBool, "[arange] received dtype bool; required a numeric dtype (as in PyTorch, where "
           "arange is not implemented for bool)");
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  LG_CHECK(st != 0.0, "[arange] step must be nonzero");
  LG_CHECK(std::isfinite(s) && std::isfinite(e), "[arange] unsupported range: ", start, " -> ", end);
  LG_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), "[arange] upper bound and lower bound (",
           start, ", ", end, ") are inconsistent with step sign (", step, ")");
  int64_t n;
  if (integral) {
    // ceil((b - a) / k) in 128 bits: b - a alone can pass int64 (arange(INT64_MIN, INT64_MAX)).
    const detail::WideInt a = start.to_int64(), b = end.to_int64(), k = step.to_int64();
    const detail::WideInt count = (b - a + k - (k > 0 ? 1 : -1)) / k;
    LG_CHECK(count <= std::numeric_limits<int64_t>::max(), "[arange] the range ", start, " -> ", end, " by ", step,
             " has more elements than int64 can count");
    n = static_cast<int64_t>(count);
  } else {
    const double count = std::ceil((e - s) / st);
    LG_CHECK(count < 9.0e18, "[arange] the range ", start, " -> ", end, " by ", step,
             " has too many elements");
    n = static_cast<int64_t>(count);
  }
  // Values are written on the host; a device tensor receives them in one copy.
  if (!options.device().is_cpu()) {
    detail::check_device_supported(options.device(), "arange");
    return arange(start, end, step, options.device(kCPU)).to(options.device());
  }
  Tensor t = empty({n}, options);
  visit_dtype(t.dtype(), [&]<typename T>(std::type_identity<T>) {
    T* data = t.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) {
      // start + i * step in 128 bits: an element past the last one may not fit in int64.
      const Scalar v = integral ? Scalar(static_cast<int64_t>(start.to_int64() + detail::WideInt(i) * step.to_int64()))
                                : Scalar(s + i * st);
      data[i] = v.to<T>();
    }
  });
  return t;
}

Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions options) {
  layout::checked_numel(sizes, "from_blob");  // before the strides are derived from the sizes
  return from_blob(data, sizes, layout::contiguous_strides(sizes), Deleter(), options);
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions options) {
  return from_blob(data, sizes, strides, Deleter(), options);
}

Tensor from_blob(void* data, IntArrayRef sizes, const Deleter& deleter, TensorOptions options) {
  layout::checked_numel(sizes, "from_blob");
  return from_blob(data, sizes, layout::contiguous_strides(sizes), deleter, options);
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const Deleter& deleter,
                 TensorOptions options) {
  const int64_t numel = layout::checked_numel(sizes, "from_blob");
  detail::check_dtype(options.dtype(), "from_blob");
  detail::check_device_supported(options.device(), "from_blob");
  LG_CHECK(data != nullptr || numel == 0, "[from_blob] received a null data pointer for sizes ",
           sizes, " (", numel, " elements); required the address of the caller's memory");
  const int64_t elements = layout::required_storage_elements(sizes, strides, "from_blob");
  Storage storage(data, checked_nbytes(elements, options.dtype(), "from_blob"), options.device(),
                  deleter);
  return detail::make_tensor(std::move(storage), options.dtype(), sizes.vec(), strides.vec(), 0);
}

Tensor empty_like(const Tensor& t, MemoryFormat fmt) { return empty_like(t, TensorOptions(), fmt); }

Tensor empty_like(const Tensor& t, TensorOptions options, MemoryFormat fmt) {
  return detail::empty_like_for(t, options, fmt, "empty_like");
}

Tensor zeros_like(const Tensor& t, MemoryFormat fmt) { return zeros_like(t, TensorOptions(), fmt); }
Tensor zeros_like(const Tensor& t, TensorOptions options, MemoryFormat fmt) {
  return full_like(t, 0, options, fmt);
}

Tensor ones_like(const Tensor& t, MemoryFormat fmt) { return ones_like(t, TensorOptions(), fmt); }
Tensor ones_like(const Tensor& t, TensorOptions options, MemoryFormat fmt) {
  return full_like(t, 1, options, fmt);
}

Tensor full_like(const Tensor& t, const Scalar& fill_value, MemoryFormat fmt) {
  return full_like(t, fill_value, TensorOptions(), fmt);
}
Tensor full_like(const Tensor& t, const Scalar& fill_value, TensorOptions options, MemoryFormat fmt) {
  Tensor out = empty_like(t, options, fmt);
  out.fill_(fill_value);
  return out;
}

}  // namespace lg
