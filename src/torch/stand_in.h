// layoutguard tensors that describe torch tensors' layouts and hold no data: what the guard's
// check, reports and events read (sizes, strides, offset, dtype, device). Never read through.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/util/SmallVector.h>

#include <layoutguard/tensor.h>

namespace lg::torch_bridge {

class StandIns {
 public:
  // A torch tensor that is undefined, not strided (sparse, mkldnn), of a dtype layoutguard
  // does not have (int8, int16, complex, quantized), on a device other than cpu or cuda, of
  // a rank over kMaxDims, or with symbolic sizes (torch.compile tracing) becomes an undefined
  // stand-in: the check passes over it.
  StandIns(std::span<const at::Tensor* const> inputs, std::span<const at::Tensor* const> outputs);

  std::span<const Tensor> inputs() const { return {inputs_.data(), inputs_.size()}; }
  std::span<const Tensor> outputs() const { return {outputs_.data(), outputs_.size()}; }
  // The first defined input's device (cpu when there is none), as hooks::OpCall has it.
  Device device() const;

 private:
  std::vector<Tensor> inputs_, outputs_;
};

// layoutguard's dtype for a torch dtype, if it has one.
std::optional<DType> lg_dtype_of(c10::ScalarType t);

// One stand-in (undefined for the cases above).
Tensor stand_in(const at::Tensor& t);

// A torch tensor's geometry, kept without the tensor (and its memory): a stand-in later.
struct Geometry {
  c10::SmallVector<int64_t, 5> sizes, strides;
  int64_t offset = 0;
  c10::ScalarType dtype = c10::ScalarType::Undefined;
  c10::Device device = c10::Device(c10::kCPU);

  explicit Geometry(const at::Tensor& t);  // t readable()
  Tensor stand_in() const;                 // undefined for the cases above
};

// A torch tensor's sizes and strides as layoutguard's geometry functions take them (no copy).
inline IntArrayRef sizes_of(const at::Tensor& t) { return IntArrayRef(t.sizes().data(), t.sizes().size()); }
inline IntArrayRef strides_of(const at::Tensor& t) { return IntArrayRef(t.strides().data(), t.strides().size()); }

}  // namespace lg::torch_bridge
