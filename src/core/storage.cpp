// Storage lifetime and the CPU allocator.
#include <layoutguard/storage.h>

#include <cstdlib>
#include <new>

#include <layoutguard/error.h>

namespace lg {
namespace {

class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    // aligned_alloc wants a size that is a multiple of the alignment.
    const size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
    LG_CHECK(rounded >= nbytes, "[cpu allocator] cannot allocate ", nbytes, " bytes");
    void* p = std::aligned_alloc(kAlignment, rounded);
    LG_CHECK(p != nullptr, "[cpu allocator] out of memory: tried to allocate ", nbytes, " bytes");
    return p;
  }
  void deallocate(void* ptr) override { std::free(ptr); }
  size_t alignment() const override { return kAlignment; }
  Device device() const override { return kCPU; }

 private:
  static constexpr size_t kAlignment = 64;
};

}  // namespace

Allocator& cpu_allocator() {
  static CpuAllocator allocator;
  return allocator;
}

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
