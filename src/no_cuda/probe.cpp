// lg::cuda queries in a build without CUDA: no devices, ever.
#include <layoutguard/cuda.h>
#include <layoutguard/error.h>

#include "core/tensor_internal.h"

namespace lg::cuda {

bool is_available() { return false; }
int device_count() { return 0; }
std::string probe_report() { return "built without CUDA (nvcc not found at configure time, or -Dcuda=disabled)"; }
void synchronize() {}
void set_sync_debug(bool) {}
bool sync_debug() { return false; }
void set_allow_tf32(bool) {}
bool allow_tf32() { return false; }
void set_matmul_allow_tf32(bool) {}
bool matmul_allow_tf32() { return false; }
void set_cudnn_benchmark(bool) {}
bool cudnn_benchmark() { return false; }
void set_cudnn_batch_norm(bool) {}
bool cudnn_batch_norm() { return false; }
bool caching_enabled() { return false; }
CacheStats cache_stats(Device device) {
  LG_CHECK(device.is_cuda(), "[cuda::cache_stats] received device ", device, "; required a CUDA device");
  lg::detail::check_backend_device(device, "cuda::cache_stats");
  return {};  // not reached
}
size_t empty_cache() { return 0; }
void* stream(Device device) {
  LG_CHECK(device.is_cuda(), "[cuda::stream] received device ", device, "; required a CUDA device");
  lg::detail::check_backend_device(device, "cuda::stream");
  return nullptr;  // not reached
}

}  // namespace lg::cuda

namespace lg::detail {

void check_backend_device(Device device, std::string_view op) {
  throw NotCompiledError(str("[", op, "] received device ", device,
                             "; layoutguard was built without CUDA (configure with nvcc on PATH "
                             "and -Dcuda=enabled); use the cpu device"));
}

Allocator& backend_allocator(Device device) {
  check_backend_device(device, "allocate");
  return cpu_allocator();  // not reached
}

}  // namespace lg::detail
