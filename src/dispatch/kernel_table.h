// The kernel table: per op and device, the one function that computes it, filled once by
// register_cpu_kernels and register_cuda_kernels. Only src/dispatch and the backends' register
// functions include this header.
#pragma once

#include <array>
#include <span>
#include <string_view>

#include <layoutguard/device.h>
#include <layoutguard/scalar.h>
#include <layoutguard/tensor.h>

#include "dispatch/kernel_signatures.h"
#include "dispatch/op_id.h"

namespace lg::dispatch {

inline constexpr size_t kNumDeviceTypes = 2;

// The C++ type of each computing op's kernel. Ops without a specialisation (views, composite
// conversions) have no kernel: their work is metadata or other ops. The parameter structs and
// the specialisations of the other families live in dispatch/kernel_signatures.h.
template <OpId id> struct KernelSignature;
template <> struct KernelSignature<OpId::copy_> {
  // dst[i] = src[i] (src already broadcast to dst's sizes, no overlap, dst writable)
  using type = void (*)(const Tensor& dst, const Tensor& src);
};
template <> struct KernelSignature<OpId::fill_> {
  using type = void (*)(const Tensor& dst, const Scalar& value);
};

// Scalar arguments of a pointwise kernel; which fields an op reads is listed with its functor in
// src/cpu/pointwise_*.cpp.
struct PointwiseParams {
  double alpha = 1.0;   // add/sub alpha, leaky_relu slope, elu alpha
  double beta = 1.0;    // elu scale
  double gamma = 1.0;   // elu input_scale
  double lo = 0.0, hi = 0.0;  // clamp bounds
  bool has_lo = false, has_hi = false;
  bool flag = false;    // gelu: tanh approximation
};

// Every Pointwise-family op: out[i] = f(inputs[0][i], ...). The inputs are already broadcast to
// out's sizes (stride 0 where broadcast) and share one dtype (the compute dtype); out has that
// dtype too, except for comparisons (bool) and where (inputs[0] is the bool condition).
using PointwiseKernel = void (*)(const Tensor& out, std::span<const Tensor> inputs,
                                 const PointwiseParams& params);

struct KernelSlot {
  void (*fn)() = nullptr;  // the typed kernel, stored type-erased; see get<id>()
  std::string_view name;
};

class KernelTable {
 public:
  template <OpId id>
  void set(DeviceType device, typename KernelSignature<id>::type fn, std::string_view name) {
    slots_[static_cast<size_t>(id)][static_cast<size_t>(device)] = {reinterpret_cast<void (*)()>(fn), name};
  }
  void set_pointwise(OpId id, DeviceType device, PointwiseKernel fn, std::string_view name) {
    slots_[static_cast<size_t>(id)][static_cast<size_t>(device)] = {reinterpret_cast<void (*)()>(fn), name};
  }
  template <OpId id>
  typename KernelSignature<id>::type get(DeviceType device) const {
    return reinterpret_cast<typename KernelSignature<id>::type>(slot(id, device).fn);
  }
  const KernelSlot& slot(OpId id, DeviceType device) const {
    return slots_[static_cast<size_t>(id)][static_cast<size_t>(device)];
  }

 private:
  std::array<std::array<KernelSlot, kNumDeviceTypes>, kNumOps> slots_{};
};

// The table, filled on first use by the backends' register functions.
const KernelTable& kernel_table();

void note_kernel(std::string_view name);  // dispatch/dispatcher.h
// NotImplementedError naming op and device.
[[noreturn]] void throw_no_kernel(OpId id, Device device);

// Looks up op's kernel for device, records its name for the current call's hooks, and throws
// NotImplementedError (naming op and device) when there is none.
template <OpId id>
typename KernelSignature<id>::type kernel_for(Device device) {
  const KernelSlot& slot = kernel_table().slot(id, device.type());
  if (slot.fn == nullptr) [[unlikely]]
    throw_no_kernel(id, device);
  note_kernel(slot.name);
  return reinterpret_cast<typename KernelSignature<id>::type>(slot.fn);
}
// The same for ops that share one kernel type Fn (the upsampling ops, the reductions), chosen
// at run time; Fn must be KernelSignature<id>::type.
template <typename Fn>
Fn kernel_as(OpId id, Device device) {
  const KernelSlot& slot = kernel_table().slot(id, device.type());
  if (slot.fn == nullptr) [[unlikely]]
    throw_no_kernel(id, device);
  note_kernel(slot.name);
  return reinterpret_cast<Fn>(slot.fn);
}
// The same for a Pointwise-family op.
PointwiseKernel pointwise_kernel_for(OpId id, Device device);

}  // namespace lg::dispatch

namespace lg {
// One per backend, each in its own translation unit.
void register_cpu_kernels(dispatch::KernelTable& table);
void register_cuda_kernels(dispatch::KernelTable& table);
}  // namespace lg
