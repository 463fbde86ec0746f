// The CUDA allocator: stream-ordered blocks (cudaMallocAsync on the device's one stream, out of
// its default memory pool) with freed blocks kept on the host for reuse.
//
// Why a cache above the pool: the pool already reuses memory, but every tensor paid a
// cudaMallocAsync and a cudaFreeAsync (and cudaSetDevice calls) to get at it -- about 1.3 us of
// host time on an H100 or H200 host, where a whole relu of a 12.8 MB float16
// tensor (alloc, launch, free) took 8.3 us to enqueue against 5.8 us for cudaMemcpy to move it
// on the device: small ops were bound by the host. A cached block is handed out without
// calling CUDA.
//
// Why reuse is safe without events: every layoutguard kernel, copy and library call on a device
// runs on that device's one stream (runtime.h), so work queued with a reused block runs after
// all the work queued with its previous owner, as with cudaFreeAsync + cudaMallocAsync.
//
// Out of memory: the cached blocks go back to the pool and the request is tried again, then
// the pool trims its unused memory and the request is tried a last time (fresh()).
// LAYOUTGUARD_CUDA_CACHE=0 turns the cache off (as PYTORCH_NO_CUDA_MEMORY_CACHING=1 does), so
// that compute-sanitizer sees every free and every request at its exact size.
#include <array>
#include <mutex>

#include <layoutguard/cuda.h>
#include <layoutguard/error.h>

#include "core/block_cache.h"
#include "core/env_flag.h"
#include "core/tensor_internal.h"
#include "cuda/runtime.h"

namespace lg::cuda {
namespace detail {
namespace {

constexpr size_t kGranule = 512;                       // cached requests round up to this
constexpr size_t kMaxCachedBytes = size_t{1} << 30;   // per device

class StreamOrderedAllocator final : public Allocator {
 public:
  explicit StreamOrderedAllocator(int index)
      : index_(index), caching_(caching_enabled()), stream_(stream_for(Device::cuda(index))) {}

  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    if (!caching_) return fresh(nbytes, nbytes);
    const size_t rounded = lg::detail::round_up_block(nbytes, kGranule, "cuda allocator");
    return cache_.take_or(rounded, [&] { return fresh(rounded, nbytes); });
  }

  void deallocate(void* ptr) override {
    if (ptr == nullptr) return;
    if (caching_ && cache_.give_back(ptr)) return;
    release(ptr);
  }

  size_t alignment() const override { return 256; }
  Device device() const override { return Device::cuda(index_); }

  size_t empty_cache() { return cache_.release_all(); }
  CacheStats stats() const {
    const lg::detail::BlockCache::Stats s = cache_.stats();
    return CacheStats{s.fresh, s.reuses, s.cached_bytes};
  }

 private:
  // A block of `nbytes` from the pool for a request of `requested` bytes. Out of memory: the
  // cached blocks go back to the pool and the request is tried again; then, as the pool keeps
  // what it gets back, the pool gives its unused memory to the driver (after the stream has
  // finished with the freed blocks) and the request is tried a last time.
  void* fresh(size_t nbytes, size_t requested) {
    const Device device = Device::cuda(index_);
    cudaStream_t stream = stream_for(device);
    void* p = nullptr;
    cudaError_t err = cudaMallocAsync(&p, nbytes, stream);
    size_t released = 0;
    if (err == cudaErrorMemoryAllocation && caching_) {
      cudaGetLastError();
      released = cache_.release_all();
      if (released > 0) err = cudaMallocAsync(&p, nbytes, stream);
    }
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      cudaMemPool_t pool = nullptr;
      if (cudaStreamSynchronize(stream) == cudaSuccess && cudaDeviceGetDefaultMemPool(&pool, index_) == cudaSuccess &&
          cudaMemPoolTrimTo(pool, 0) == cudaSuccess)
        err = cudaMallocAsync(&p, nbytes, stream);
      else
        cudaGetLastError();
    }
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      size_t free_bytes = 0, total_bytes = 0;
      cudaMemGetInfo(&free_bytes, &total_bytes);
      throw OutOfMemoryError(lg::detail::str("[cuda allocator] out of memory on ", device, ": tried to allocate ", requested,
                                             " bytes (", requested >> 20, " MiB); the device has ", free_bytes >> 20,
                                             " MiB free of ", total_bytes >> 20, " MiB",
                                             released > 0 ? lg::detail::str(" after returning ", released >> 20,
                                                                            " MiB of cached blocks to the pool")
                                                          : std::string()));
    }
    check(err, "cudaMallocAsync", "cuda allocator");
    return p;
  }

  // Never throws (BlockCache calls it under its lock, and deallocate runs in destructors).
  void release(void* ptr) noexcept {
    // At process exit the runtime may already be gone; the memory goes with it.
    if (cudaSetDevice(index_) != cudaSuccess || cudaFreeAsync(ptr, stream_) != cudaSuccess) cudaGetLastError();
  }

  const int index_;
  const bool caching_;
  const cudaStream_t stream_;  // the device's one stream (runtime.h)
  lg::detail::BlockCache cache_{kMaxCachedBytes, [this](void* p) { release(p); }};
};

// The allocators made so far (never destroyed: storages outlive statics).
std::array<StreamOrderedAllocator*, kMaxDevices> g_allocators{};
std::mutex g_allocators_mutex;

StreamOrderedAllocator& allocator_of(int index) {
  std::lock_guard<std::mutex> lock(g_allocators_mutex);
  auto& a = g_allocators[static_cast<size_t>(index)];
  if (a == nullptr) a = new StreamOrderedAllocator(index);
  return *a;
}

}  // namespace

Allocator& device_allocator(int index) {
  check_index(Device::cuda(index), "cuda allocator");
  return allocator_of(index);
}

}  // namespace detail

bool caching_enabled() {
  static const bool on = lg::detail::env_flag("LAYOUTGUARD_CUDA_CACHE", true);
  return on;
}

CacheStats cache_stats(Device device) {
  LG_CHECK(device.is_cuda(), "[cuda::cache_stats] received device ", device, "; required a CUDA device");
  detail::check_index(device, "cuda::cache_stats");
  return detail::allocator_of(device.index()).stats();
}

size_t empty_cache() {
  size_t released = 0;
  const int count = device_count();
  for (int i = 0; i < count && i < detail::kMaxDevices; ++i) {
    detail::StreamOrderedAllocator* a = nullptr;
    {
      std::lock_guard<std::mutex> lock(detail::g_allocators_mutex);
      a = detail::g_allocators[static_cast<size_t>(i)];
    }
    if (a != nullptr) released += a->empty_cache();
  }
  return released;
}

}  // namespace lg::cuda
