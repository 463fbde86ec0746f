// Tensor metadata, element access and the conversions (contiguous, to, clone, copy_, fill_),
// with ATen's choice of output strides (spec §2).
#include <layoutguard/factories.h>
#include <layoutguard/tensor.h>

#include <layoutguard/config.h>

#include "core/copy.h"
#include "core/log.h"
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
  for (int64_t s : sizes_) numel_ *= s;
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

void check_device_supported(Device device, std::string_view op) {
  if (device.is_cpu()) return;
#if LG_HAVE_CUDA
  throw NotImplementedError(str("[", op, "] received device ", device,
                                "; CUDA tensors are not implemented yet in this version "
                                "(the CUDA build only probes for devices); use the cpu device"));
#else
  throw NotCompiledError(str("[", op, "] received device ", device,
                             "; layoutguard was built without CUDA (configure with nvcc on PATH "
                             "and -Dcuda=enabled); use the cpu device"));
#endif
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
    case MemoryFormat::Preserve: break;
  }
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
  return visit_dtype(dtype(), [&]<typename T>(std::type_identity<T>) {
    return Scalar(*static_cast<const T*>(data_ptr()));
  });
}

Tensor Tensor::contiguous(MemoryFormat fmt) const {
  if (is_contiguous(fmt)) return *this;
  LG_CHECK(fmt != MemoryFormat::Preserve,
           "[contiguous] preserve memory format is unsupported by the contiguous operator "
           "(received ", describe_layout(*this), ")");
  Tensor out = detail::empty_like_for(*this, options(), fmt, "contiguous");
  out.copy_(*this);
  return out;
}

Tensor Tensor::to(MemoryFormat fmt, bool copy) const { return to(TensorOptions(), copy, fmt); }
Tensor Tensor::to(DType dt, bool copy, MemoryFormat fmt) const {
  return to(TensorOptions(dt), copy, fmt);
}
Tensor Tensor::to(Device dev, bool copy, MemoryFormat fmt) const {
  return to(TensorOptions(dev), copy, fmt);
}

Tensor Tensor::to(TensorOptions options, bool copy, MemoryFormat fmt) const {
  const DType dt = options.has_dtype() ? options.dtype() : dtype();
  const Device dev = options.has_device() ? options.device() : device();
  detail::check_device_supported(dev, "to");
  // ATen's to_will_alias: the *suggested* format decides, not contiguity (spec §2.3), so a
  // non-dense NHWC slice .to(channels_last) comes back as itself.
  if (dt == dtype() && dev == device() && !copy &&
      (fmt == MemoryFormat::Preserve || suggest_memory_format() == fmt))
    return *this;
  const TensorOptions out_options = TensorOptions().dtype(dt).device(dev);
  Tensor out = detail::empty_like_for(*this, out_options, fmt, "to");
  if (log::logger().should_log(spdlog::level::debug))
    log::logger().debug("[to] copying {} into {}", describe_layout(*this), describe_layout(out));
  out.copy_(*this);
  return out;
}

Tensor Tensor::clone(MemoryFormat fmt) const {
  Tensor out = detail::empty_like_for(*this, options(), fmt, "clone");
  out.copy_(*this);
  return out;
}

const Tensor& Tensor::copy_(const Tensor& src) const {
  detail::check_defined(*this, "copy_", "self");
  detail::check_defined(src, "copy_", "src");
  detail::check_device_supported(device(), "copy_");
  detail::check_device_supported(src.device(), "copy_");
  LG_CHECK(src.dim() <= dim(), "[copy_] src ", describe_layout(src),
           " cannot be broadcast to the destination sizes ", sizes());
  for (int64_t i = 1; i <= src.dim(); ++i) {
    const int64_t s = src.size(-i), d = size(-i);
    LG_CHECK(s == d || s == 1, "[copy_] src sizes ", src.sizes(),
             " cannot be broadcast to the destination sizes ", sizes(), " (dim ", -i, ": ", s,
             " vs ", d, ")");
  }
  if (is_same(src)) return *this;
  detail::check_no_internal_overlap(*this, "copy_");
  if (numel() == 0) return *this;
  Tensor source = src.expand(sizes());
  // Reading and writing the same bytes in one pass could read already-written values.
  if (detail::ranges_overlap(*this, source)) source = src.clone().expand(sizes());
  detail::copy_elements_cpu(*this, source);
  return *this;
}

const Tensor& Tensor::fill_(const Scalar& value) const {
  detail::check_defined(*this, "fill_", "self");
  detail::check_device_supported(device(), "fill_");
  detail::check_no_internal_overlap(*this, "fill_");
  if (numel() == 0) return *this;
  // One element of our dtype, broadcast over every position: the copy loop does the rest.
  Tensor one = empty({}, options());
  visit_dtype(dtype(), [&]<typename T>(std::type_identity<T>) {
    *static_cast<T*>(one.data_ptr()) = value.to<T>();
  });
  detail::copy_elements_cpu(*this, one.expand(sizes()));
  return *this;
}

}  // namespace lg
