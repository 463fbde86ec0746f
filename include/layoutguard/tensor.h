// lg::Tensor: a strided view (sizes, strides, storage offset, dtype) of a shared Storage.
//
// Memory-format semantics are PyTorch's, stride for stride: the format of a tensor is never
// stored, only derived from its strides (see layout.h), and every conversion below chooses the
// output strides with ATen's rules. Copying a Tensor handle is cheap and aliases the same data,
// like at::Tensor.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <layoutguard/device.h>
#include <layoutguard/dtype.h>
#include <layoutguard/error.h>
#include <layoutguard/int_array_ref.h>
#include <layoutguard/layout.h>
#include <layoutguard/scalar.h>
#include <layoutguard/storage.h>
#include <layoutguard/tensor_options.h>

namespace lg {

namespace detail {

// The state behind a Tensor handle. Layout flags are recomputed whenever sizes or strides
// change, so the predicates on Tensor are loads, not walks.
class TensorImpl {
 public:
  TensorImpl(Storage storage, DType dtype, std::vector<int64_t> sizes,
             std::vector<int64_t> strides, int64_t storage_offset);

  const Storage& storage() const { return storage_; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& sizes() const { return sizes_; }
  const std::vector<int64_t>& strides() const { return strides_; }
  int64_t storage_offset() const { return storage_offset_; }
  int64_t numel() const { return numel_; }
  const layout::Flags& flags() const { return flags_; }

 private:
  Storage storage_;
  DType dtype_;
  std::vector<int64_t> sizes_;
  std::vector<int64_t> strides_;
  int64_t storage_offset_;
  int64_t numel_;
  layout::Flags flags_;
};

// Raises TypeError "[data_ptr] expected element type float32 but the tensor holds float16".
[[noreturn]] void throw_data_ptr_type_mismatch(DType requested, DType held);

}  // namespace detail

class Tensor {
 public:
  // An undefined tensor: defined() is false and every other accessor throws.
  Tensor() = default;
  explicit Tensor(std::shared_ptr<detail::TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }

  // ---- Metadata ----
  int64_t dim() const { return static_cast<int64_t>(impl().sizes().size()); }
  IntArrayRef sizes() const { return impl().sizes(); }
  IntArrayRef strides() const { return impl().strides(); }
  // Wraps negative d; IndexError when out of range.
  int64_t size(int64_t d) const;
  int64_t stride(int64_t d) const;
  int64_t numel() const { return impl().numel(); }
  int64_t storage_offset() const { return impl().storage_offset(); }
  DType dtype() const { return impl().dtype(); }
  Device device() const { return impl().storage().device(); }
  TensorOptions options() const { return TensorOptions().dtype(dtype()).device(device()); }
  size_t itemsize() const { return lg::itemsize(dtype()); }
  // numel() * itemsize(): the bytes of the elements, not of the storage.
  size_t nbytes() const { return static_cast<size_t>(numel()) * itemsize(); }
  bool is_floating_point() const { return lg::is_floating_point(dtype()); }
  const Storage& storage() const { return impl().storage(); }
  // The storage's write counter (Storage::version): in-place ops bump it; after writing through
  // data_ptr(), call bump_version() so cached derived data (packed conv weights) is rebuilt.
  uint64_t version() const { return storage().version(); }
  void bump_version() const { storage().bump_version(); }
  // Same handle state (the object identity PyTorch's `is` tests).
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }
  // Shares memory with other (views of each other, or one the same tensor).
  bool is_alias_of(const Tensor& other) const;
  long use_count() const { return impl_.use_count(); }

  // ---- Layout predicates (never throw; a wrong rank answers false) ----
  bool is_contiguous(MemoryFormat fmt = MemoryFormat::Contiguous) const;
  bool is_non_overlapping_and_dense() const { return impl().flags().non_overlapping_and_dense; }
  MemoryFormat suggest_memory_format(bool exact_match = false) const;
  // Dims outermost first as letters: "abcd" for NCHW, "acdb" for NHWC.
  std::string dim_order() const { return layout::dim_order(sizes(), strides()); }

  // ---- Data access ----
  // Address of element (0,...,0), storage offset applied. TypeError when T does not match
  // dtype(); void gives the untyped address.
  template <typename T>
  T* data_ptr() const {
    if constexpr (!std::is_void_v<T>) {
      if (dtype_of<std::remove_cv_t<T>>::value != dtype()) [[unlikely]]
        detail::throw_data_ptr_type_mismatch(dtype_of<std::remove_cv_t<T>>::value, dtype());
    }
    return static_cast<T*>(raw_data_ptr());
  }
  void* data_ptr() const { return raw_data_ptr(); }
  // The single element as a Scalar / converted to T; ValueError unless numel() == 1.
  Scalar item() const;
  template <Element T>
  T item() const {
    return item().to<T>();
  }

  // ---- Conversions (ATen semantics; see docs/memory-format.md) ----
  // Returns *this when is_contiguous(fmt); otherwise a copy in fmt. Preserve is an error.
  Tensor contiguous(MemoryFormat fmt = MemoryFormat::Contiguous) const;
  // Returns *this when dtype and device are unchanged, copy is false and
  // suggest_memory_format() == fmt (or fmt is Preserve) -- so the result may be non-dense.
  // Otherwise a copy: Preserve keeps the strides (dense) or the dim order (non-dense); a
  // concrete format gets its generator strides.
  Tensor to(MemoryFormat fmt, bool copy = false) const;
  Tensor to(DType dtype, bool copy = false, MemoryFormat fmt = MemoryFormat::Preserve) const;
  Tensor to(Device device, bool copy = false, MemoryFormat fmt = MemoryFormat::Preserve) const;
  Tensor to(TensorOptions options, bool copy = false,
            MemoryFormat fmt = MemoryFormat::Preserve) const;
  Tensor cpu() const { return to(kCPU); }
  Tensor cuda(int index = 0) const { return to(Device::cuda(index)); }
  // Always a copy. Preserve keeps dense strides exactly and densifies others in their order.
  Tensor clone(MemoryFormat fmt = MemoryFormat::Preserve) const;
  // Writes src (broadcast to this shape, converted to this dtype) into this tensor, in place.
  const Tensor& copy_(const Tensor& src) const;
  // Sets every element to value (converted to dtype()).
  const Tensor& fill_(const Scalar& value) const;
  const Tensor& zero_() const { return fill_(0); }

  // ---- Views: share storage; only sizes, strides and offset change ----
  // -1 in sizes is inferred. ValueError when no view with these sizes exists.
  Tensor view(IntArrayRef sizes) const;
  // A view when one exists, else a contiguous copy viewed with sizes.
  Tensor reshape(IntArrayRef sizes) const;
  // Merges dims start..end (inclusive); a view when possible, else a copy (as reshape).
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  // Drops every size-1 dim / dim d if its size is 1 (otherwise returns the same layout).
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  // Inserts a size-1 dim at d (d in [-dim()-1, dim()]) with stride size(d)*stride(d), or 1 at
  // the end.
  Tensor unsqueeze(int64_t dim) const;
  // Removes dim, keeping element `index` of it (negative counts from the end).
  Tensor select(int64_t dim, int64_t index) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  // Python's t[..., start:end:step] along dim; start/end clamp as in Python, step > 0.
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  // Broadcasts size-1 dims (stride 0) and prepends new dims; -1 keeps a size.
  Tensor expand(IntArrayRef sizes) const;
  // Any sizes and non-negative strides that stay within the storage.
  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides,
                    std::optional<int64_t> storage_offset = std::nullopt) const;

  // ---- Internals for the library's own layers ----
  const detail::TensorImpl& impl() const {
    if (!impl_) [[unlikely]]
      throw_undefined();
    return *impl_;
  }
  const std::shared_ptr<detail::TensorImpl>& impl_ptr() const { return impl_; }

 private:
  void* raw_data_ptr() const;
  // The bodies of to() and copy_(), run by the dispatcher.
  Tensor to_impl(TensorOptions options, bool copy, MemoryFormat fmt) const;
  Tensor copy_impl(const Tensor& src) const;
  [[noreturn]] static void throw_undefined();
  std::shared_ptr<detail::TensorImpl> impl_;
};

// The layout line of a tensor alone:
// "float32 cpu (2,3,4,5):(60,1,15,3) order=acdb channels_last".
std::string describe_layout(const Tensor& t);
// Layout line, then the values (summarised with "..." past 1000 elements).
std::ostream& operator<<(std::ostream& out, const Tensor& t);

}  // namespace lg
