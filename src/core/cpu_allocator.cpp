// The CPU allocator: 64-byte aligned blocks, with freed blocks of 128 KiB and more kept for reuse.
//
// Why a cache: glibc serves large blocks with mmap and returns them to the kernel on free, so
// every large fresh tensor pays one page fault per 4 KiB page on first touch. A batch-16
// ResNet activation (32-50 MB) then costs 10-25 ms of faults, more than the convolution that
// writes it (bench/cpu_ops measured 37 GFLOPS instead of ~100 for a 64->256 1x1 layer).
// Reusing a freed block of nearly the same size removes the faults. The cache started at 1 MiB;
// batch-1 activations between 128 KiB (glibc's mmap threshold) and 1 MiB still faulted on every
// call: relu6 of a 576x14x14 map took 93 us instead of 13, and caching them made ResNet-50,
// MobileNetV2 and DenseNet-121 at batch 1 run 9-17 % faster.
//
// The reuse policy (at most 8/7 of the request, the oldest freed released first past 1 GiB) is
// core/block_cache.h's, shared with the CUDA allocator. Sanitizer builds skip the cache so
// AddressSanitizer still sees every free.
#include <layoutguard/storage.h>

#include <cstdlib>

#include <layoutguard/error.h>

#include "core/block_cache.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LG_CPU_CACHE_ENABLED 0
#else
#define LG_CPU_CACHE_ENABLED 1
#endif

namespace lg {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kCacheMinBytes = size_t{128} << 10;
// Cached sizes round up to whole pages below 1 MiB and to 64 KiB above.
inline size_t cache_granule(size_t nbytes) {
  return nbytes >= (size_t{1} << 20) ? size_t{64} << 10 : size_t{4} << 10;
}
constexpr size_t kMaxCachedBytes = size_t{1} << 30;

void* aligned_or_throw(size_t rounded, size_t nbytes) {
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr)
    throw OutOfMemoryError(detail::str("[cpu allocator] out of host memory: tried to allocate ", nbytes, " bytes"));
  return p;
}

class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    const size_t granule = nbytes >= kCacheMinBytes ? cache_granule(nbytes) : kAlignment;
    const size_t rounded = detail::round_up_block(nbytes, granule, "cpu allocator");
    if (!LG_CPU_CACHE_ENABLED || rounded < kCacheMinBytes) return aligned_or_throw(rounded, nbytes);
    return cache_.take_or(rounded, [&] { return aligned_or_throw(rounded, nbytes); });
  }

  void deallocate(void* ptr) override {
    if (ptr == nullptr) return;
    if (LG_CPU_CACHE_ENABLED && cache_.give_back(ptr)) return;
    std::free(ptr);
  }

  size_t alignment() const override { return kAlignment; }
  Device device() const override { return kCPU; }

  void release_cached() { cache_.release_all(); }

  CpuCacheStats stats() const {
    const detail::BlockCache::Stats s = cache_.stats();
    return CpuCacheStats{s.fresh, s.reuses, s.cached_bytes};
  }

 private:
  detail::BlockCache cache_{kMaxCachedBytes, [](void* p) { std::free(p); }};
};

CpuAllocator& the_cpu_allocator() {
  // Never destroyed: storages freed during static destruction still find it.
  static CpuAllocator* allocator = new CpuAllocator();
  return *allocator;
}

}  // namespace

Allocator& cpu_allocator() { return the_cpu_allocator(); }

void release_cached_cpu_memory() { the_cpu_allocator().release_cached(); }

CpuCacheStats cpu_cache_stats() { return the_cpu_allocator().stats(); }

bool cpu_cache_enabled() { return LG_CPU_CACHE_ENABLED != 0; }

}  // namespace lg
