// The CUDA runtime as the rest of the CUDA backend sees it: checked calls, one stream per
// device, the stream-ordered allocator. Only src/cuda includes this header.
#pragma once

#include <map>
#include <mutex>
#include <string_view>

#include <cuda_runtime_api.h>

#include <layoutguard/device.h>
#include <layoutguard/storage.h>
#include <layoutguard/tensor.h>

namespace lg::cuda::detail {

// Devices past this index are refused (check_index); per-device tables have this many slots.
inline constexpr int kMaxDevices = 64;

// Throws lg::DeviceError "[op] CUDA call `expr` failed: <name> (<description>)" unless err is
// cudaSuccess (clearing the runtime's sticky last error first).
void check(cudaError_t err, const char* expr, std::string_view op);

// Throws lg::DeviceError unless device names a visible CUDA device.
void check_index(Device device, std::string_view op);

// Makes device current on this thread and returns its stream (created on first use, non-blocking
// with respect to the legacy default stream). Every layoutguard kernel, copy and allocation on a
// device runs on this one stream, so work on a device is ordered without extra events.
cudaStream_t stream_for(Device device);

// A library handle (cuDNN, cuBLAS) of `device`, made on first use by create(stream) for the
// device's stream and kept for the process. Each call site (each `create` type) has its own.
template <typename Handle, typename Create>
Handle per_device_handle(Device device, Create&& create) {
  static std::mutex mutex;
  static std::map<int, Handle> handles;
  cudaStream_t stream = stream_for(device);
  std::lock_guard<std::mutex> lock(mutex);
  Handle& h = handles[device.index()];
  if (h == nullptr) h = create(stream);
  return h;
}

// After a kernel launch: the launch error, and with lg::cuda::set_sync_debug(true) the
// kernel's own errors (synchronising, like CUDA_LAUNCH_BLOCKING=1).
void check_launch(cudaError_t launch_result, const char* what, std::string_view op, Device device);

// dst = src on one device (any strides and dtypes; src may be broadcast): src/cuda/copy.cpp.
void copy_on_device(const Tensor& dst, const Tensor& src);

// The allocator of device `index` (src/cuda/allocator.cpp): cudaMallocAsync on the device's
// stream, out of the device's default memory pool, with freed blocks kept for reuse on the host.
Allocator& device_allocator(int index);

}  // namespace lg::cuda::detail

#define LG_CUDA_CHECK(expr, op) ::lg::cuda::detail::check((expr), #expr, (op))
