// CUDA queries. In a build without CUDA they answer "no device", and anything that needs a
// device raises lg::NotCompiledError.
#pragma once

#include <cstddef>
#include <string>

#include <layoutguard/device.h>

namespace lg::cuda {

// True when the CUDA backend is compiled in and at least one device answers (the probe kernel
// ran on device 0).
bool is_available();
// Number of visible CUDA devices (0 without a driver, a device or a CUDA build).
int device_count();
// One line for humans: build, runtime and the devices seen, e.g.
// "CUDA 13.0 runtime, 1 device: NVIDIA H100 80GB HBM3 (sm_90)".
std::string probe_report();

// Waits for the work layoutguard queued on every device (one stream per device). Returns at once
// without devices.
void synchronize();
// The stream (a cudaStream_t, as void* so that this header needs no CUDA headers) on which
// layoutguard runs all its work on `device`. A custom op's CUDA kernel (lg::register_op)
// launches on it: it then runs after the ops that made its inputs and before those that read
// its outputs, and the allocator may reuse the blocks it frees, without events. ValueError for
// a CPU device, DeviceError for a device that is not visible, NotCompiledError without CUDA.
void* stream(Device device = Device::cuda(0));
// Debugging aid: every kernel launch then waits for its kernel and reports the kernel's own
// errors at the op that launched it, as CUDA_LAUNCH_BLOCKING=1 does for a whole process.
void set_sync_debug(bool on);
bool sync_debug();

// Whether float32 cuDNN convolutions may run on TF32 tensor cores (10-bit mantissa), like
// torch.backends.cudnn.allow_tf32: on by default, as in PyTorch.
void set_allow_tf32(bool on);
bool allow_tf32();
// Whether float32 matrix products (mm, bmm, addmm, linear, matmul on cuBLAS) may run on TF32,
// like torch.backends.cuda.matmul.allow_tf32: off by default, as in PyTorch since 1.12, so that
// float32 products match a strict float32 reference.
void set_matmul_allow_tf32(bool on);
bool matmul_allow_tf32();

// cuDNN benchmark mode, like torch.backends.cudnn.benchmark: off by default. When on, the first
// convolution of each new (shapes, strides, dtypes, parameters) key times every engine
// configuration cuDNN offers for it, on the call's own tensors, and keeps the fastest; later
// calls with that key reuse the choice. The first call of a key is slower (tens of
// milliseconds); pays off when the same shapes repeat, as in inference loops.
void set_cudnn_benchmark(bool on);
bool cudnn_benchmark();

// Whether batch_norm runs on cuDNN's norm-forward graph node (training and evaluation) where
// cuDNN has an engine for the call -- float16, bfloat16 or float32 input, dense NCHW or
// channels-last -- rather than on layoutguard's own kernels, which take every other call
// either way. On by default. With cuDNN 9.19 on an H100 the node takes training-mode calls
// (2.2-2.9x faster than our kernels on ResNet-50's shapes) and builds no plan for evaluation,
// which our kernels then run at memory bandwidth (docs/design.md, "Batch norm on cuDNN").
void set_cudnn_batch_norm(bool on);
bool cudnn_batch_norm();

// The CUDA allocator keeps freed blocks on the host and hands them out again for requests of
// nearly their size (at most 8/7 of it), up to 1 GiB per device, the blocks freed longest ago
// returned to the device's memory pool first -- like PyTorch's caching allocator, it spares
// each new tensor a cudaMallocAsync and a cudaFreeAsync. Reuse needs no synchronisation: all
// layoutguard work on a device runs on one stream. Out of memory, the cache goes back to the
// pool and the request is tried again. LAYOUTGUARD_CUDA_CACHE=0 in the environment turns it
// off (compute-sanitizer then sees every free and every exact size); another value than 0, 1,
// false, true or empty raises ConfigError from every CUDA allocation, caching_enabled() and
// cache_stats(), until the variable is fixed.
bool caching_enabled();
struct CacheStats {
  size_t fresh = 0;         // blocks taken from the memory pool while caching
  size_t reuses = 0;        // blocks served from the cache
  size_t cached_bytes = 0;  // bytes held for reuse now
};
// The cache of one visible CUDA device (DeviceError for others; a build without CUDA:
// NotCompiledError). Blocks larger than the 1 GiB cap are not cached; a request that finds the
// device out of memory returns the cache, then the pool's unused memory, before giving up.
CacheStats cache_stats(Device device = Device::cuda(0));
// Returns every cached block of every device to its memory pool, like torch.cuda.empty_cache();
// the bytes returned (0 without devices).
size_t empty_cache();

// A marker in a device's queue of layoutguard work, for timing it on the device, like
// torch.cuda.Event(enable_timing=True). record() places it behind everything layoutguard has
// queued on the device so far (every kernel and copy there runs on one stream); query() says,
// without waiting, whether the device has reached it; synchronize() waits until it has.
// elapsed_ms(end) is the device time from this event to `end` (both recorded, same device;
// it waits for `end`). A build without CUDA throws NotCompiledError on construction, and a
// device that is not visible gives DeviceError.
class Event {
 public:
  explicit Event(Device device = Device::cuda(0));
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void record();
  bool query() const;
  void synchronize() const;
  double elapsed_ms(const Event& end) const;
  Device device() const { return device_; }
  bool recorded() const { return recorded_; }

 private:
  Device device_;
  void* handle_ = nullptr;  // cudaEvent_t
  bool recorded_ = false;
};

}  // namespace lg::cuda
