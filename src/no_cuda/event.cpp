// lg::cuda::Event in a build without CUDA: there is no device work to mark, so making one is
// an error (after the same device-type check as the CUDA build); the other members cannot be
// reached, since no Event can exist.
#include <layoutguard/cuda.h>
#include <layoutguard/error.h>

#include "core/tensor_internal.h"

namespace lg::cuda {

Event::Event(Device device) : device_(device) {
  LG_CHECK(device.type() == DeviceType::CUDA, "[cuda::Event] received device ", device,
           ", but an event marks work on a CUDA device; use Device::cuda(i)");
  lg::detail::check_backend_device(device, "cuda::Event");
}
Event::~Event() = default;
Event::Event(Event&& other) noexcept : device_(other.device_) {}
Event& Event::operator=(Event&&) noexcept { return *this; }
void Event::record() { lg::detail::check_backend_device(device_, "cuda::Event::record"); }
bool Event::query() const {
  lg::detail::check_backend_device(device_, "cuda::Event::query");
  return true;
}
void Event::synchronize() const { lg::detail::check_backend_device(device_, "cuda::Event::synchronize"); }
double Event::elapsed_ms(const Event&) const {
  lg::detail::check_backend_device(device_, "cuda::Event::elapsed_ms");
  return 0.0;
}

}  // namespace lg::cuda
