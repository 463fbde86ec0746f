// Freed memory blocks kept for reuse, with the policy both allocators share (the CPU
// allocator's large blocks, the CUDA allocator's every block): a request takes a cached block
// of at least its size and at most 8/7 of it, so a small tensor never pins a large block; past
// the cap, the blocks freed longest ago go back to their source first. Thread-safe.
//
// Why the oldest first: releasing the largest first kept a previous model's blocks forever --
// MobileNetV2 after two ResNets in one process found none of its sizes cached, and its largest
// activations, bigger than anything cached, were released at every call (40 % slower than the
// same model alone).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>

namespace lg::detail {

// `nbytes` rounded up to a multiple of `granule`; an Error from `who` if that overflows.
size_t round_up_block(size_t nbytes, size_t granule, const char* who);

class BlockCache {
 public:
  struct Stats {
    size_t fresh = 0;         // blocks taken from the source (track)
    size_t reuses = 0;        // blocks served from the cache (take)
    size_t cached_bytes = 0;  // bytes held for reuse now
  };

  // `release` returns a block to the source (called with the cache's lock held, from
  // give_back past the cap and from release_all); it must not throw.
  BlockCache(size_t max_cached_bytes, std::function<void(void*)> release)
      : max_cached_bytes_(max_cached_bytes), release_(std::move(release)) {}
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // A cached block for a request of `nbytes` (already rounded by the caller), now live; nullptr
  // when none fits.
  void* take(size_t nbytes);
  // Records a block of `nbytes` fresh from the source as live, so give_back keeps it.
  void track(void* ptr, size_t nbytes);
  // take(nbytes), or else fresh() (a new block of `nbytes` from the source) tracked.
  template <typename Fresh>
  void* take_or(size_t nbytes, Fresh&& fresh) {
    if (void* p = take(nbytes)) return p;
    void* p = fresh();
    track(p, nbytes);
    return p;
  }
  // Keeps a live block for reuse and trims to the cap. False when `ptr` is not one of this
  // cache's blocks, or is larger than the cap (which would empty the cache to keep it): the
  // caller returns it to the source itself. A block given back twice stays cached once (true):
  // handing the source a block the cache still holds would let two owners share it.
  bool give_back(void* ptr);
  // Returns every cached block to the source; the bytes released.
  size_t release_all();
  Stats stats() const;

 private:
  struct Cached {
    void* ptr;
    uint64_t freed_at;  // key in by_age_
  };
  using BySize = std::multimap<size_t, Cached>;

  void trim(size_t limit);  // the lock held

  const size_t max_cached_bytes_;
  const std::function<void(void*)> release_;
  mutable std::mutex mutex_;
  BySize free_;                                  // cached blocks by size
  std::map<uint64_t, BySize::iterator> by_age_;  // the same blocks, oldest free first
  uint64_t frees_ = 0;
  struct Tracked {
    size_t size;
    bool cached;  // in free_ now, not handed out
  };
  std::unordered_map<void*, Tracked> tracked_;  // every block of this cache, handed out or cached
  size_t cached_bytes_ = 0;
  Stats stats_;
};

}  // namespace lg::detail
