// A stand-in for libcudart.so.13 that runs no kernel: one "device" whose memory is host memory,
// copies done with memcpy, launches that return at once, events that report zero time. Loaded
// in place of the real runtime (scripts/host-overhead puts its folder first on
// LD_LIBRARY_PATH, with LD_BIND_NOW so a runtime symbol missing here fails at load), it lets
// bench/host_instructions count layoutguard's own host path per CUDA op -- dispatch, the guard,
// geometry, the allocator, the launcher -- on a machine without a GPU, with the runtime's and
// the driver's share taken out. (Programs linking cudart_static, such as bench/cuda_overhead,
// keep their own runtime calls on the real one.)
//
// Only the probe kernel (src/cuda/kernels/probe.cu: one int stored) is carried out, so that
// lg::cuda::is_available() answers as on a device. Nothing computed under this stub is a
// result: every kernel's output is whatever the allocation held.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include <cuda_runtime_api.h>

namespace {

std::mutex g_mutex;
std::map<const void*, std::string>& kernel_names() {  // host stub address -> device name
  static std::map<const void*, std::string> names;
  return names;
}
thread_local cudaError_t g_last_error = cudaSuccess;
thread_local dim3 g_grid, g_block;
thread_local size_t g_shared = 0;
thread_local void* g_stream = nullptr;
std::atomic<int> g_stream_count{0};

cudaError_t fail(cudaError_t err) { return g_last_error = err; }

void* host_block(size_t bytes) { return std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256); }

}  // namespace

extern "C" {

// Registration of the kernels nvcc compiled: kept to know a launch's kernel by name.
void** __cudaRegisterFatBinary(void*) {
  static void* handle = nullptr;
  return &handle;
}
void __cudaRegisterFatBinaryEnd(void**) {}
void __cudaUnregisterFatBinary(void**) {}
void __cudaRegisterFunction(void**, const char* host_fun, char*, const char* device_name, int, uint3*, uint3*, dim3*,
                            dim3*, int*) {
  std::lock_guard lock(g_mutex);
  kernel_names()[host_fun] = device_name;
}
void __cudaRegisterVar(void**, char*, char*, const char*, int, size_t, int, int) {}

unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, void* stream) {
  g_grid = grid;
  g_block = block;
  g_shared = shared;
  g_stream = stream;
  return 0;
}
cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block, size_t* shared, void* stream) {
  *grid = g_grid;
  *block = g_block;
  *shared = g_shared;
  *static_cast<void**>(stream) = g_stream;
  return cudaSuccess;
}
cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* fun) {
  *kernel = reinterpret_cast<cudaKernel_t>(const_cast<void*>(fun));
  return cudaSuccess;
}
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t, cudaStream_t) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x * block.y * block.z == 0 || block.x * block.y * block.z > 1024)
    return fail(cudaErrorInvalidConfiguration);
  std::string name;
  {
    std::lock_guard lock(g_mutex);
    const auto it = kernel_names().find(reinterpret_cast<const void*>(kernel));
    if (it == kernel_names().end()) return fail(cudaErrorInvalidDeviceFunction);
    name = it->second;
  }
  // The probe kernel, write_value(int* out, int value): the one kernel carried out.
  if (name.find("write_value") != std::string::npos)
    **static_cast<int**>(args[0]) = *static_cast<int*>(args[1]);
  return cudaSuccess;
}
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                                    cudaStream_t stream) {
  return __cudaLaunchKernel(kernel, grid, block, args, shared, stream);
}

cudaError_t cudaRuntimeGetVersion(int* version) {
  *version = CUDART_VERSION;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (device != 0) return fail(cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  std::strncpy(prop->name, "layoutguard host stub (kernels do not run)", sizeof(prop->name) - 1);
  prop->major = 9;
  prop->minor = 0;
  prop->totalGlobalMem = size_t{16} << 30;
  prop->multiProcessorCount = 1;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice); }
cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
  *free_bytes = size_t{8} << 30;
  *total = size_t{16} << 30;
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** ptr, size_t bytes) {
  *ptr = host_block(bytes);
  return *ptr ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}
cudaError_t cudaFree(void* ptr) {
  std::free(ptr);
  return cudaSuccess;
}
cudaError_t cudaMallocAsync(void** ptr, size_t bytes, cudaStream_t) { return cudaMalloc(ptr, bytes); }
cudaError_t cudaFreeAsync(void* ptr, cudaStream_t) { return cudaFree(ptr); }
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int) {
  static int the_pool = 0;
  *pool = reinterpret_cast<cudaMemPool_t>(&the_pool);
  return cudaSuccess;
}
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, cudaMemPoolAttr, void*) { return cudaSuccess; }
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t, size_t) { return cudaSuccess; }

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind) {
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpy(dst, src, bytes, kind);
}
cudaError_t cudaMemcpyPeerAsync(void* dst, int, const void* src, int, size_t bytes, cudaStream_t) {
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned) {
  *stream = reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(++g_stream_count) * 16);
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  *event = reinterpret_cast<cudaEvent_t>(host_block(16));
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  std::free(event);
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t) {
  *ms = 0.0f;
  return cudaSuccess;
}

cudaError_t cudaGetLastError() {
  const cudaError_t err = g_last_error;
  g_last_error = cudaSuccess;
  return err;
}
cudaError_t cudaPeekAtLastError() { return g_last_error; }
const char* cudaGetErrorName(cudaError_t err) {
  return err == cudaSuccess ? "cudaSuccess" : "cudaError (host stub)";
}
const char* cudaGetErrorString(cudaError_t err) {
  return err == cudaSuccess ? "no error" : "error reported by the layoutguard host stub";
}

}  // extern "C"
