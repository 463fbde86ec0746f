// TensorOptions: dtype and device of a tensor to create; float32 on the CPU unless set.
#pragma once

#include <optional>

#include <layoutguard/device.h>
#include <layoutguard/dtype.h>

namespace lg {

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(DType d) : dtype_(d) {}    // NOLINT: lets lg::zeros({2}, lg::kInt64) read well
  TensorOptions(Device d) : device_(d) {}  // NOLINT
  TensorOptions(DeviceType t) : device_(Device(t)) {}  // NOLINT

  // Builder style: lg::TensorOptions().dtype(lg::kFloat16).device(lg::kCPU).
  TensorOptions dtype(DType d) const {
    TensorOptions o = *this;
    o.dtype_ = d;
    return o;
  }
  TensorOptions device(Device d) const {
    TensorOptions o = *this;
    o.device_ = d;
    return o;
  }

  DType dtype() const { return dtype_.value_or(kFloat32); }
  Device device() const { return device_.value_or(kCPU); }
  bool has_dtype() const { return dtype_.has_value(); }
  bool has_device() const { return device_.has_value(); }

 private:
  std::optional<DType> dtype_;
  std::optional<Device> device_;
};

}  // namespace lg
