// The CPU allocator: 64-byte aligned blocks, with freed blocks of 128 KiB and more kept for reuse.
//
// Why a cache: glibc serves large blocks with mmap and returns them to the kernel on free, so
// every large fresh tensor pays one page fault per 4 KiB page on first touch. A batch-16
// ResNet activation (32-50 MB) then costs 10-25 ms of faults, more than the convolution that
// writes it (bench/cpu_ops measured 37 GFLOPS instead of ~100 for a 64->256 1x1 layer).
// Reusing a freed block of nearly the same size removes the faults. The cache started at 1 MiB;
// batch-1 activations between 128 KiB (glibc's mmap threshold) and 1 MiB still faulted on every
// call: relu6 of a 576x14x14 map took 93 us instead of 13, and caching them made ResNet-50,
// MobileNetV2 and DenseNet-121 at batch 1 run 9-17 % faster (session 12).
//
// Blocks are reused only for requests of at least 7/8 of their size, so a small tensor never
// pins a huge block. The cache holds at most kMaxCachedBytes; past that the blocks freed longest
// ago are released first. (Releasing the largest first kept a previous model's blocks forever:
// MobileNetV2 after two ResNets in one process found none of its sizes cached, and its largest
// activations, bigger than anything cached, were the ones released -- every call faulted them
// in again, 40 % slower than the same model alone.) Sanitizer builds skip the cache so
// AddressSanitizer still sees every free.
#include <layoutguard/storage.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>

#include <layoutguard/error.h>

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
  LG_CHECK(p != nullptr, "[cpu allocator] out of memory: tried to allocate ", nbytes, " bytes");
  return p;
}

class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    const size_t granule = nbytes >= kCacheMinBytes ? cache_granule(nbytes) : kAlignment;
    const size_t rounded = (nbytes + granule - 1) / granule * granule;
    LG_CHECK(rounded >= nbytes, "[cpu allocator] cannot allocate ", nbytes, " bytes");
    if (!LG_CPU_CACHE_ENABLED || rounded < kCacheMinBytes) return aligned_or_throw(rounded, nbytes);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = free_.lower_bound(rounded);
      if (it != free_.end() && it->first - it->first / 8 <= rounded) {
        void* p = it->second.ptr;
        cached_bytes_ -= it->first;
        live_[p] = it->first;
        by_age_.erase(it->second.freed_at);
        free_.erase(it);
        ++stats_.reuses;
        return p;
      }
    }
    void* p = aligned_or_throw(rounded, nbytes);
    std::lock_guard<std::mutex> lock(mutex_);
    live_[p] = rounded;
    ++stats_.fresh;
    return p;
  }

  void deallocate(void* ptr) override {
    if (ptr == nullptr) return;
    if (LG_CPU_CACHE_ENABLED) {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = live_.find(ptr);
      if (it != live_.end()) {
        const size_t size = it->second;
        live_.erase(it);
        const uint64_t freed_at = frees_++;
        by_age_.emplace(freed_at, free_.emplace(size, Cached{ptr, freed_at}));
        cached_bytes_ += size;
        trim(kMaxCachedBytes);
        return;
      }
    }
    std::free(ptr);
  }

  size_t alignment() const override { return kAlignment; }
  Device device() const override { return kCPU; }

  void release_cached() {
    std::lock_guard<std::mutex> lock(mutex_);
    trim(0);
  }

  CpuCacheStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    CpuCacheStats s = stats_;
    s.cached_bytes = cached_bytes_;
    return s;
  }

 private:
  struct Cached {
    void* ptr;
    uint64_t freed_at;  // key in by_age_
  };
  using BySize = std::multimap<size_t, Cached>;

  // Frees the cached blocks freed longest ago until at most `limit` bytes stay cached (mutex
  // held).
  void trim(size_t limit) {
    while (cached_bytes_ > limit && !by_age_.empty()) {
      const auto oldest = by_age_.begin();
      const BySize::iterator block = oldest->second;
      cached_bytes_ -= block->first;
      std::free(block->second.ptr);
      free_.erase(block);
      by_age_.erase(oldest);
    }
  }

  std::mutex mutex_;
  BySize free_;                             // cached blocks by size
  std::map<uint64_t, BySize::iterator> by_age_;  // the same blocks, oldest free first
  uint64_t frees_ = 0;
  std::unordered_map<void*, size_t> live_;  // large blocks handed out, with their size
  size_t cached_bytes_ = 0;
  CpuCacheStats stats_;
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
