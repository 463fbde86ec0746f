// Storage lifetime (the CPU allocator is src/core/cpu_allocator.cpp).
#include <layoutguard/storage.h>

#include <cstdlib>
#include <new>

#include <layoutguard/error.h>

namespace lg {

Storage::Storage(size_t nbytes, Allocator& allocator) : impl_(std::make_shared<Impl>()) {
  impl_->data = allocator.allocate(nbytes);
  impl_->nbytes = nbytes;
  impl_->device = allocator.device();
  Allocator* source = &allocator;
  impl_->deleter = [source](void* p) { source->deallocate(p); };
}

Storage::Storage(void* data, size_t nbytes, Device device, Deleter deleter)
    : impl_(std::make_shared<Impl>()) {
  impl_->data = data;
  impl_->nbytes = nbytes;
  impl_->device = device;
  impl_->deleter = std::move(deleter);
}

uint64_t Storage::Impl::next_id() {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

Storage::Impl::~Impl() {
  if (deleter && data) deleter(data);
}

}  // namespace lg
