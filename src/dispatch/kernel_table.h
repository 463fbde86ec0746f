// The kernel table: per op and device, the one function that computes it, filled once by
// register_cpu_kernels and register_cuda_kernels. Only src/dispatch and the backends' register
// functions include this header.
#pragma once

#include <array>
#include <span>
#include <string_view>

#include <layoutguard/device.h>
#include <layoutguard/error.h>
#include <layoutguard/scalar.h>
#include <layoutguard/tensor.h>

#include "dispatch/kernel_signatures.h"
#include "dispatch/op_id.h"
#include "dispatch/pointwise_math.h"

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

// Every Pointwise-family op: out[i] = f(inputs[0][i], ...). The inputs are already broadcast to
// out's sizes (stride 0 where broadcast) and share one dtype (the compute dtype); out has that
// dtype too, except for comparisons (bool) and where (inputs[0] is the bool condition).
using PointwiseKernel = void (*)(const Tensor& out, std::span<const Tensor> inputs,
                                 const PointwiseParams& params);

// One address per kernel type, stored beside each kernel so that the one cast back can check it.
template <typename Fn>
inline constexpr char kKernelTypeTag = 0;

// A kernel stored type-erased, with the type it was registered as: as<Fn>() is the only way
// back, and it checks the type, so a lookup with the wrong signature is an internal error
// rather than a call through the wrong function type.
class KernelSlot {
 public:
  KernelSlot() = default;
  template <typename Fn>
  KernelSlot(Fn fn, std::string_view name)
      : fn_(reinterpret_cast<void (*)()>(fn)), type_(&kKernelTypeTag<Fn>), name_(name) {}

  bool empty() const { return fn_ == nullptr; }
  std::string_view name() const { return name_; }
  template <typename Fn>
  Fn as(OpId id) const {
    LG_ASSERT(type_ == &kKernelTypeTag<Fn>, "the kernel of ", op_name(id), " was registered with another signature");
    return reinterpret_cast<Fn>(fn_);
  }

 private:
  void (*fn_)() = nullptr;
  const char* type_ = nullptr;
  std::string_view name_;
};

class KernelTable {
 public:
  // A Pointwise-family op's kernel is a PointwiseKernel; every other op's is
  // KernelSignature<id>::type.
  template <OpId id>
  void set(DeviceType device, typename KernelSignature<id>::type fn, std::string_view name) {
    static_assert(op_family(id) != OpFamily::Pointwise, "pointwise kernels are registered with set_pointwise");
    slots_[static_cast<size_t>(id)][static_cast<size_t>(device)] = KernelSlot(fn, name);
  }
  void set_pointwise(OpId id, DeviceType device, PointwiseKernel fn, std::string_view name) {
    LG_ASSERT(op_family(id) == OpFamily::Pointwise, op_name(id), " is not a pointwise op");
    slots_[static_cast<size_t>(id)][static_cast<size_t>(device)] = KernelSlot(fn, name);
  }
  // Unchecked for presence and not noted: for backends calling another op's kernel inside
  // their own (a copy inside cat), whose kernel name the call keeps.
  template <OpId id>
  typename KernelSignature<id>::type get(DeviceType device) const {
    return slot(id, device).as<typename KernelSignature<id>::type>(id);
  }
  const KernelSlot& slot(OpId id, DeviceType device) const {
    return slots_[static_cast<size_t>(id)][static_cast<size_t>(device)];
  }

 private:
  std::array<std::array<KernelSlot, kNumDeviceTypes>, kNumOps> slots_{};
};

// The table, filled on first use by the backends' register functions.
const KernelTable& kernel_table();

// The one lookup the ops use: op's kernel slot for device, its kernel name noted for the
// current call's hooks (OpCall::kernel); NotImplementedError naming op and device when there is
// none. kernel_for, kernel_as and pointwise_kernel_for are typed casts of it.
const KernelSlot& kernel_slot(OpId id, Device device);

template <OpId id>
typename KernelSignature<id>::type kernel_for(Device device) {
  return kernel_slot(id, device).as<typename KernelSignature<id>::type>(id);
}
// For ops that share one kernel type Fn (the upsampling ops, the reductions), chosen at run
// time; a Fn other than the registered type is an internal error.
template <typename Fn>
Fn kernel_as(OpId id, Device device) {
  return kernel_slot(id, device).as<Fn>(id);
}
inline PointwiseKernel pointwise_kernel_for(OpId id, Device device) {
  return kernel_slot(id, device).as<PointwiseKernel>(id);
}

}  // namespace lg::dispatch

namespace lg {
// One per backend, each in its own translation unit.
void register_cpu_kernels(dispatch::KernelTable& table);
void register_cuda_kernels(dispatch::KernelTable& table);
}  // namespace lg
