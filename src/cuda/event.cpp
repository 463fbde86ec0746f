// lg::cuda::Event on the CUDA runtime: a cudaEvent_t recorded on the device's one layoutguard
// stream (runtime.h), so it lands behind every kernel and copy layoutguard queued there.
#include <utility>

#include <layoutguard/cuda.h>
#include <layoutguard/error.h>

#include "cuda/runtime.h"

namespace lg::cuda {
namespace {

cudaEvent_t raw(void* handle) { return static_cast<cudaEvent_t>(handle); }

void check_alive(const void* handle, std::string_view op) {
  LG_CHECK(handle != nullptr, "[", op, "] received an event that was moved from; use the event it was moved to");
}

}  // namespace

Event::Event(Device device) : device_(device) {
  LG_CHECK(device.type() == DeviceType::CUDA, "[cuda::Event] received device ", device,
           ", but an event marks work on a CUDA device; use Device::cuda(i)");
  detail::check_index(device, "cuda::Event");
  (void)detail::stream_for(device);  // makes the device current for the create call
  cudaEvent_t event = nullptr;
  LG_CUDA_CHECK(cudaEventCreate(&event), "cuda::Event");
  handle_ = event;
}

Event::~Event() {
  if (handle_ != nullptr) (void)cudaEventDestroy(raw(handle_));  // nothing to report to in a destructor
}

Event::Event(Event&& other) noexcept
    : device_(other.device_), handle_(std::exchange(other.handle_, nullptr)), recorded_(other.recorded_) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) (void)cudaEventDestroy(raw(handle_));
    device_ = other.device_;
    handle_ = std::exchange(other.handle_, nullptr);
    recorded_ = other.recorded_;
  }
  return *this;
}

void Event::record() {
  check_alive(handle_, "cuda::Event::record");
  LG_CUDA_CHECK(cudaEventRecord(raw(handle_), detail::stream_for(device_)), "cuda::Event::record");
  recorded_ = true;
}

bool Event::query() const {
  check_alive(handle_, "cuda::Event::query");
  if (!recorded_) return true;  // as cudaEventQuery: nothing recorded, nothing to wait for
  const cudaError_t state = cudaEventQuery(raw(handle_));
  if (state == cudaErrorNotReady) {
    (void)cudaGetLastError();  // "not yet" is an answer, not an error to leave behind
    return false;
  }
  LG_CUDA_CHECK(state, "cuda::Event::query");
  return true;
}

void Event::synchronize() const {
  check_alive(handle_, "cuda::Event::synchronize");
  if (recorded_) LG_CUDA_CHECK(cudaEventSynchronize(raw(handle_)), "cuda::Event::synchronize");
}

double Event::elapsed_ms(const Event& end) const {
  check_alive(handle_, "cuda::Event::elapsed_ms");
  check_alive(end.handle_, "cuda::Event::elapsed_ms");
  LG_CHECK(recorded_ && end.recorded_, "[cuda::Event::elapsed_ms] received ",
           recorded_ ? "an end event" : "a start event", " that was never recorded; call record() on both first");
  LG_CHECK(device_ == end.device_, "[cuda::Event::elapsed_ms] received events of ", device_, " and ", end.device_,
           ", but both must mark work on one device");
  end.synchronize();
  float ms = 0;
  LG_CUDA_CHECK(cudaEventElapsedTime(&ms, raw(handle_), raw(end.handle_)), "cuda::Event::elapsed_ms");
  return ms;
}

}  // namespace lg::cuda
