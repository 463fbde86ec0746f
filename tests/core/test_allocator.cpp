// The CPU allocator: alignment, and the cache that hands large freed blocks out again (off in
// sanitizer builds, where the test says so and checks that nothing is cached).
#include <doctest/doctest.h>

#include <cstdint>

#include "support/tensor_testing.h"

TEST_SUITE("tensor") {

TEST_CASE("cpu allocator: 64-byte alignment for small and large tensors") {
  for (int64_t n : {1, 17, 1000, 1 << 20, (1 << 22) + 3}) {
    const lg::Tensor t = lg::empty({n});
    CHECK(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64 == 0);
  }
}

TEST_CASE("cpu allocator: a freed large block is reused for a request of nearly its size, not for a small one") {
  lg::release_cached_cpu_memory();
  CHECK(lg::cpu_cache_stats().cached_bytes == 0);
  if (!lg::cpu_cache_enabled()) {
    MESSAGE("skipping the reuse checks: this is a sanitizer build, where the CPU cache is off");
    { const lg::Tensor t = lg::empty({1 << 20}); }
    CHECK(lg::cpu_cache_stats().cached_bytes == 0);
    return;
  }
  const lg::CpuCacheStats before = lg::cpu_cache_stats();
  void* first = nullptr;
  {
    const lg::Tensor t = lg::empty({1 << 20});  // 4 MiB
    first = t.data_ptr();
  }
  CHECK(lg::cpu_cache_stats().cached_bytes >= (size_t{4} << 20));
  {
    const lg::Tensor small = lg::empty({1 << 19});  // 2 MiB: below 7/8 of the block, gets its own
    CHECK(small.data_ptr() != first);
  }
  {
    const lg::Tensor again = lg::empty({(1 << 20) - 1000});  // nearly 4 MiB: the cached block
    CHECK(again.data_ptr() == first);
    CHECK(again.numel() == (1 << 20) - 1000);
  }
  const lg::CpuCacheStats after = lg::cpu_cache_stats();
  CHECK(after.reuses >= before.reuses + 1);
  CHECK(after.fresh >= before.fresh + 1);
  lg::release_cached_cpu_memory();
  CHECK(lg::cpu_cache_stats().cached_bytes == 0);
  // From 128 KiB on (glibc's mmap threshold, where a fresh block faults in every page): a
  // 576 x 14 x 14 batch-1 activation (441 KiB) is cached and reused; 64 KiB is left to malloc.
  void* mid = nullptr;
  {
    const lg::Tensor t = lg::empty({576 * 14 * 14});
    mid = t.data_ptr();
  }
  CHECK(lg::cpu_cache_stats().cached_bytes >= size_t{576 * 14 * 14 * 4});
  {
    const lg::Tensor again = lg::empty({576 * 14 * 14});
    CHECK(again.data_ptr() == mid);
  }
  lg::release_cached_cpu_memory();
  { const lg::Tensor small = lg::empty({1 << 14}); }  // 64 KiB
  CHECK(lg::cpu_cache_stats().cached_bytes == 0);
}

TEST_CASE("cpu allocator: past its 1 GiB cap the cache releases the blocks freed longest ago") {
  lg::release_cached_cpu_memory();
  if (!lg::cpu_cache_enabled()) {
    MESSAGE("skipping: this is a sanitizer build, where the CPU cache is off");
    return;
  }
  // Freed in this order: 300 MiB, 600 MiB, 200 MiB (1.1 GiB, untouched pages: address space
  // only). The oldest, 300 MiB, goes; the 600 MiB block, the largest, stays for reuse.
  constexpr int64_t kMiB = int64_t{1} << 18;  // floats per MiB
  void* six_hundred = nullptr;
  {
    lg::Tensor a = lg::empty({300 * kMiB}), b = lg::empty({600 * kMiB}), c = lg::empty({200 * kMiB});
    six_hundred = b.data_ptr();
    a = lg::Tensor();
    b = lg::Tensor();
    c = lg::Tensor();
  }
  CHECK(lg::cpu_cache_stats().cached_bytes == (size_t{800} << 20));
  {
    const lg::Tensor again = lg::empty({600 * kMiB});
    CHECK(again.data_ptr() == six_hundred);
  }
  lg::release_cached_cpu_memory();
  CHECK(lg::cpu_cache_stats().cached_bytes == 0);
}

TEST_CASE("cpu allocator: values written through a reused block are the new tensor's own") {
  { lg::Tensor t = lg::full({1 << 20}, 7.0); }
  const lg::Tensor z = lg::zeros({1 << 20});
  CHECK(lg::testing::value_at(z, {12345}) == 0.0);
  CHECK(lg::testing::value_at(z, {(1 << 20) - 1}) == 0.0);
}

}
