// Storage: a reference-counted block of device memory that tensors view.
//
// Tensors and their views share one Storage; the memory is released (through the deleter the
// allocator or from_blob supplied) when the last of them goes away.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include <layoutguard/device.h>

namespace lg {

// Frees memory obtained from an Allocator or handed over through from_blob.
using Deleter = std::function<void(void*)>;

// Device memory source. allocate() returns memory aligned to at least `alignment()` bytes, or
// throws lg::Error with the size asked for; it never returns null for a non-zero size.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t nbytes) = 0;
  virtual void deallocate(void* ptr) = 0;
  virtual size_t alignment() const = 0;
  virtual Device device() const = 0;
};

// The process-wide CPU allocator: 64-byte aligned (a cache line and an AVX-512 vector).
// Freed blocks of 128 KiB and more are cached (up to 1 GiB) and handed out again for requests of
// nearly their size, which spares large fresh tensors their page faults. Sanitizer builds do
// not cache.
Allocator& cpu_allocator();

// What the CPU allocator's cache has done since the process started.
struct CpuCacheStats {
  size_t fresh = 0;         // large blocks taken from the system
  size_t reuses = 0;        // large blocks served from the cache
  size_t cached_bytes = 0;  // bytes held for reuse right now
};
CpuCacheStats cpu_cache_stats();
// Whether this build caches (false under AddressSanitizer/ThreadSanitizer).
bool cpu_cache_enabled();
// Returns every cached block to the system (like torch.cuda.empty_cache, for the CPU).
void release_cached_cpu_memory();

class Storage {
 public:
  Storage() = default;
  // nbytes fresh bytes from `allocator` (uninitialised).
  Storage(size_t nbytes, Allocator& allocator);
  // Wraps memory the caller owns; `deleter` (may be empty: never freed) runs at release.
  Storage(void* data, size_t nbytes, Device device, Deleter deleter);

  bool defined() const { return impl_ != nullptr; }
  void* data() const { return impl_ ? impl_->data : nullptr; }
  size_t nbytes() const { return impl_ ? impl_->nbytes : 0; }
  Device device() const { return impl_ ? impl_->device : kCPU; }
  // How many tensors (and other Storage handles) share this block.
  long use_count() const { return impl_.use_count(); }
  bool is_alias_of(const Storage& other) const { return impl_ && impl_ == other.impl_; }
  // Observes the block without keeping it alive (caches drop entries of freed storage).
  std::weak_ptr<const void> watch() const { return impl_; }
  // A process-unique number for this block (never reused, unlike its address): caches key on it.
  uint64_t id() const { return impl_ ? impl_->id : 0; }
  // Bumped by every op that writes into existing memory (copy_, fill_, in-place and out= forms),
  // so caches of derived data (packed convolution weights) know when they are stale. Writes
  // through data_ptr() are invisible to it: call bump_version() after them.
  uint64_t version() const { return impl_ ? impl_->version.load(std::memory_order_acquire) : 0; }
  void bump_version() const {
    if (impl_) impl_->version.fetch_add(1, std::memory_order_acq_rel);
  }

 private:
  struct Impl {
    void* data = nullptr;
    size_t nbytes = 0;
    Device device = kCPU;
    Deleter deleter;
    uint64_t id = next_id();
    std::atomic<uint64_t> version{0};
    ~Impl();
    static uint64_t next_id();
  };
  std::shared_ptr<Impl> impl_;
};

}  // namespace lg
