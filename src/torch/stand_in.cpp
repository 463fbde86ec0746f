// Stand-ins: a torch tensor's layout as a layoutguard tensor (see stand_in.h).
#include "torch/stand_in.h"

#include <optional>

#include <layoutguard/layout.h>

#include "core/tensor_internal.h"
#include "torch/intercepted_call.h"

namespace lg::torch_bridge {

std::optional<DType> lg_dtype_of(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Float: return kFloat32;
    case c10::ScalarType::Half: return kFloat16;
    case c10::ScalarType::BFloat16: return kBFloat16;
    case c10::ScalarType::Double: return kFloat64;
    case c10::ScalarType::Long: return kInt64;
    case c10::ScalarType::Int: return kInt32;
    case c10::ScalarType::Byte: return kUInt8;
    case c10::ScalarType::Bool: return kBool;
    default: return std::nullopt;
  }
}

namespace {

std::optional<Device> device_of(const c10::Device& d) {
  if (d.is_cpu()) return Device::cpu();
  if (d.is_cuda()) return Device::cuda(d.index());
  return std::nullopt;
}

// The address every stand-in's storage names. Nothing reads or writes through it: the guard
// only looks at geometry (the bridge's shadow=1 compares the torch tensors themselves).
alignas(64) unsigned char g_nowhere[64];

// A stand-in of this geometry, dtype and device (undefined where layoutguard has no such).

Tensor make_stand_in(IntArrayRef sizes, IntArrayRef strides, int64_t offset, c10::ScalarType torch_dtype,
                     const c10::Device& torch_device) {
  const std::optional<DType> dtype = lg_dtype_of(torch_dtype);
  const std::optional<Device> device = device_of(torch_device);
  if (!dtype || !device || sizes.size() > static_cast<size_t>(kMaxDims)) return {};
  const int64_t elements = layout::required_storage_elements(sizes, strides, "layoutguard_torch") + offset;
  Storage storage(g_nowhere, static_cast<size_t>(elements) * itemsize(*dtype), *device, Deleter());
  return detail::make_tensor(std::move(storage), *dtype, sizes.vec(), strides.vec(), offset);
}

}  // namespace

Tensor stand_in(const at::Tensor& t) {
  if (!readable(t)) return {};
  return make_stand_in(sizes_of(t), strides_of(t), t.storage_offset(), t.scalar_type(), t.device());
}

Geometry::Geometry(const at::Tensor& t)
    : sizes(t.sizes().begin(), t.sizes().end()),
      strides(t.strides().begin(), t.strides().end()),
      offset(t.storage_offset()),
      dtype(t.scalar_type()),
      device(t.device()) {}

Tensor Geometry::stand_in() const {
  return make_stand_in(IntArrayRef(sizes.data(), sizes.size()), IntArrayRef(strides.data(), strides.size()), offset,
                       dtype, device);
}

StandIns::StandIns(std::span<const at::Tensor* const> inputs, std::span<const at::Tensor* const> outputs) {
  inputs_.reserve(inputs.size());
  for (const at::Tensor* t : inputs) inputs_.push_back(stand_in(*t));
  outputs_.reserve(outputs.size());
  for (const at::Tensor* t : outputs) outputs_.push_back(stand_in(*t));
}

Device StandIns::device() const {
  for (const Tensor& t : inputs_)
    if (t.defined()) return t.device();
  return Device::cpu();
}

}  // namespace lg::torch_bridge
