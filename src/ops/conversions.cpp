// The conversion ops of Tensor (contiguous, to, clone) and the in-place writers (copy_,
// fill_), each a dispatched op with ATen's choice of output strides (docs/memory-format.md:
// "`to(fmt)` versus `contiguous(fmt)`" and "Preserve: `clone()`, `to(dtype)` and the `*_like`
// factories").
#include <layoutguard/factories.h>
#include <layoutguard/tensor.h>

#include "core/log.h"
#include "core/enum_checks.h"
#include "core/tensor_internal.h"
#include "ops/ops_internal.h"
#include "dispatch/dispatcher.h"
#include "dispatch/kernel_table.h"

namespace lg {

using dispatch::OpId;

Tensor Tensor::contiguous(MemoryFormat fmt) const {
  auto body = [&] {
    if (is_contiguous(fmt)) return *this;
    LG_CHECK(fmt != MemoryFormat::Preserve,
             "[contiguous] preserve memory format is unsupported by the contiguous operator "
             "(received ", describe_layout(*this), ")");
    Tensor out = detail::empty_like_for(*this, options(), fmt, "contiguous");
    out.copy_(*this);
    return out;
  };
  return dispatch::run(OpId::contiguous, body, *this);
}

Tensor Tensor::to(MemoryFormat fmt, bool copy) const { return to(TensorOptions(), copy, fmt); }
Tensor Tensor::to(DType dt, bool copy, MemoryFormat fmt) const {
  return to(TensorOptions(dt), copy, fmt);
}
Tensor Tensor::to(Device dev, bool copy, MemoryFormat fmt) const {
  return to(TensorOptions(dev), copy, fmt);
}

Tensor Tensor::to(TensorOptions options, bool copy, MemoryFormat fmt) const {
  auto body = [&] { return to_impl(options, copy, fmt); };
  return dispatch::run(OpId::to, body, *this);
}

Tensor Tensor::to_impl(TensorOptions options, bool copy, MemoryFormat fmt) const {
  const DType dt = options.has_dtype() ? options.dtype() : dtype();
  // Before the shortcuts below, which would hand back *this for a value no enumerator has.
  lg::detail::check_dtype(dt, "to");
  lg::detail::check_memory_format(fmt, "to");
  const Device dev = options.has_device() ? options.device() : device();
  detail::check_device_supported(dev, "to");
  // ATen's to_will_alias: the *suggested* format decides, not contiguity, so a
  // non-dense NHWC slice .to(channels_last) comes back as itself.
  if (dt == dtype() && dev == device() && !copy &&
      (fmt == MemoryFormat::Preserve || suggest_memory_format() == fmt))
    return *this;
  const TensorOptions out_options = TensorOptions().dtype(dt).device(dev);
  Tensor out = detail::empty_like_for(*this, out_options, fmt, "to");
  if (logging::logger().should_log(spdlog::level::debug))
    logging::logger().debug("[to] copying {} into {}", describe_layout(*this), describe_layout(out));
  out.copy_(*this);
  return out;
}

Tensor Tensor::clone(MemoryFormat fmt) const {
  auto body = [&] {
    Tensor out = detail::empty_like_for(*this, options(), fmt, "clone");
    out.copy_(*this);
    return out;
  };
  return dispatch::run(OpId::clone, body, *this);
}

const Tensor& Tensor::copy_(const Tensor& src) const {
  auto body = [&] { return copy_impl(src); };
  dispatch::run(OpId::copy_, body, *this, src);
  return *this;
}

Tensor Tensor::copy_impl(const Tensor& src) const {
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
  // src itself when it has the destination's sizes: an equal expanded view would cost a trip
  // through the dispatcher on every copy (bench/host_instructions).
  const auto broadcast = [&](const Tensor& t) { return t.sizes() == sizes() ? t : t.expand(sizes()); };
  Tensor source = broadcast(src);
  // Reading and writing the same bytes in one pass could read already-written values.
  if (detail::ranges_overlap(*this, source)) source = broadcast(src.clone());
  // A copy that touches a device runs on the device's backend, whichever side it is on.
  const Device kernel_device = device().is_cpu() ? src.device() : device();
  dispatch::kernel_for<OpId::copy_>(kernel_device)(*this, source);
  bump_version();
  return *this;
}

const Tensor& Tensor::fill_(const Scalar& value) const {
  auto body = [&] {
    detail::check_defined(*this, "fill_", "self");
    detail::check_device_supported(device(), "fill_");
    detail::check_no_internal_overlap(*this, "fill_");
    detail::check_scalar_fits(value, dtype(), "fill_", "value");
    if (numel() > 0) {
      dispatch::kernel_for<OpId::fill_>(device())(*this, value);
      bump_version();
    }
    return *this;
  };
  dispatch::run(OpId::fill_, body, *this);
  return *this;
}

}  // namespace lg
