// The shared reuse policy of the allocators (block_cache.h).
#include "core/block_cache.h"

#include <layoutguard/error.h>

namespace lg::detail {

size_t round_up_block(size_t nbytes, size_t granule, const char* who) {
  const size_t rounded = (nbytes + granule - 1) / granule * granule;
  LG_CHECK(rounded >= nbytes, "[", who, "] cannot allocate ", nbytes, " bytes");
  return rounded;
}

void* BlockCache::take(size_t nbytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = free_.lower_bound(nbytes);
  if (it == free_.end() || it->first - it->first / 8 > nbytes) return nullptr;
  void* p = it->second.ptr;
  cached_bytes_ -= it->first;
  tracked_[p].cached = false;
  by_age_.erase(it->second.freed_at);
  free_.erase(it);
  ++stats_.reuses;
  return p;
}

void BlockCache::track(void* ptr, size_t nbytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  tracked_[ptr] = Tracked{nbytes, false};
  ++stats_.fresh;
}

bool BlockCache::give_back(void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = tracked_.find(ptr);
  if (it == tracked_.end()) return false;
  if (it->second.cached) return true;
  const size_t size = it->second.size;
  if (size > max_cached_bytes_) {
    tracked_.erase(it);
    return false;
  }
  it->second.cached = true;
  const uint64_t freed_at = frees_++;
  by_age_.emplace(freed_at, free_.emplace(size, Cached{ptr, freed_at}));
  cached_bytes_ += size;
  trim(max_cached_bytes_);
  return true;
}

size_t BlockCache::release_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t before = cached_bytes_;
  trim(0);
  return before;
}

BlockCache::Stats BlockCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Stats s = stats_;
  s.cached_bytes = cached_bytes_;
  return s;
}

void BlockCache::trim(size_t limit) {
  while (cached_bytes_ > limit && !by_age_.empty()) {
    // Forgotten first, then released: the cache is consistent whatever the source does.
    const auto oldest = by_age_.begin();
    const BySize::iterator block = oldest->second;
    void* ptr = block->second.ptr;
    cached_bytes_ -= block->first;
    tracked_.erase(ptr);
    free_.erase(block);
    by_age_.erase(oldest);
    release_(ptr);
  }
}

}  // namespace lg::detail
