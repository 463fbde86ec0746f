// Checked CUDA calls and per-device streams (the allocator is src/cuda/allocator.cpp).
#include "cuda/runtime.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>

#include <layoutguard/cuda.h>
#include <layoutguard/error.h>

#include "core/tensor_internal.h"

namespace lg::cuda {
namespace detail {
namespace {

std::atomic<bool> g_sync_debug{false};

struct DeviceState {
  std::once_flag once;
  cudaStream_t stream = nullptr;
};
std::array<DeviceState, kMaxDevices>& states() {
  static std::array<DeviceState, kMaxDevices> s;
  return s;
}

}  // namespace

void check_index(Device device, std::string_view op) {
  const int count = device_count();
  if (device.index() < 0 || device.index() >= count || device.index() >= kMaxDevices)
    throw DeviceError(lg::detail::str("[", op, "] received device ", device, ", but ", count == 0 ? "no" : "only ",
                                      count == 0 ? std::string() : std::to_string(count), count == 1 ? " CUDA device is" : " CUDA devices are",
                                      " visible (", probe_report(), ")"));
}

void check(cudaError_t err, const char* expr, std::string_view op) {
  if (err == cudaSuccess) return;
  cudaGetLastError();
  throw DeviceError(lg::detail::str("[", op, "] CUDA call `", expr, "` failed: ", cudaGetErrorName(err), " (",
                                    cudaGetErrorString(err), ")"));
}

cudaStream_t stream_for(Device device) {
  check_index(device, "cuda");
  DeviceState& s = states()[static_cast<size_t>(device.index())];
  check(cudaSetDevice(device.index()), "cudaSetDevice", "cuda");
  std::call_once(s.once, [&] {
    check(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", "cuda");
    // Keep freed memory in the pool (a caching allocator); the default threshold returns it to
    // the driver at every synchronisation.
    cudaMemPool_t pool = nullptr;
    check(cudaDeviceGetDefaultMemPool(&pool, device.index()), "cudaDeviceGetDefaultMemPool", "cuda");
    uint64_t keep = std::numeric_limits<uint64_t>::max();
    check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute", "cuda");
  });
  return s.stream;
}

void check_launch(cudaError_t launch_result, const char* what, std::string_view op, Device device) {
  check(launch_result, what, op);
  if (g_sync_debug.load(std::memory_order_relaxed))
    check(cudaStreamSynchronize(stream_for(device)), "cudaStreamSynchronize (sync debug)", op);
}

}  // namespace detail

void synchronize() {
  for (int i = 0; i < device_count(); ++i)
    detail::check(cudaStreamSynchronize(detail::stream_for(Device::cuda(i))), "cudaStreamSynchronize", "synchronize");
}

void* stream(Device device) {
  LG_CHECK(device.is_cuda(), "[cuda::stream] received device ", device, "; required a CUDA device");
  detail::check_index(device, "cuda::stream");
  return detail::stream_for(device);
}

void set_sync_debug(bool on) { detail::g_sync_debug.store(on, std::memory_order_relaxed); }

namespace {
// PyTorch's defaults: TF32 for cuDNN convolutions (cudnn_conv.cpp reads it), not for cuBLAS
// products (cublas_gemm.cpp).
std::atomic<bool> g_allow_tf32{true};
std::atomic<bool> g_matmul_allow_tf32{false};
std::atomic<bool> g_cudnn_benchmark{false};
// On by default: the CUDA suite passes with it on and off on an H100, and cuDNN's
// training-phase node took 0.34-0.45x of our kernels' time at batch 256 (docs/performance.md).
std::atomic<bool> g_cudnn_batch_norm{true};
}  // namespace
void set_allow_tf32(bool on) { g_allow_tf32.store(on, std::memory_order_relaxed); }
bool allow_tf32() { return g_allow_tf32.load(std::memory_order_relaxed); }
void set_matmul_allow_tf32(bool on) { g_matmul_allow_tf32.store(on, std::memory_order_relaxed); }
bool matmul_allow_tf32() { return g_matmul_allow_tf32.load(std::memory_order_relaxed); }
void set_cudnn_benchmark(bool on) { g_cudnn_benchmark.store(on, std::memory_order_relaxed); }
bool cudnn_benchmark() { return g_cudnn_benchmark.load(std::memory_order_relaxed); }
void set_cudnn_batch_norm(bool on) { g_cudnn_batch_norm.store(on, std::memory_order_relaxed); }
bool cudnn_batch_norm() { return g_cudnn_batch_norm.load(std::memory_order_relaxed); }
bool sync_debug() { return detail::g_sync_debug.load(std::memory_order_relaxed); }

}  // namespace lg::cuda

namespace lg::detail {

void check_backend_device(Device device, std::string_view op) { cuda::detail::check_index(device, op); }

Allocator& backend_allocator(Device device) { return cuda::detail::device_allocator(device.index()); }

}  // namespace lg::detail
