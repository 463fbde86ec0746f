// The CUDA allocator's cache of freed blocks on a GPU: a block comes back for a request of
// nearly its size and not for a much smaller one, work queued with a block's previous owner
// cannot touch the next one's values, empty_cache() returns everything, and
// LAYOUTGUARD_CUDA_CACHE=0 (as under compute-sanitizer in scripts/gpu-check) caches nothing.
// The cases that run no kernel also run without a GPU, on bench/host_stub's runtime
// (tests/tools/check_cuda_allocator_on_stub.sh, in CI).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include <layoutguard/layoutguard.h>

TEST_SUITE("cuda") {

namespace {
const lg::TensorOptions kOnGpu = lg::TensorOptions().device(lg::Device::cuda(0));
constexpr size_t kMiB = size_t{1} << 20;
}  // namespace

TEST_CASE("cuda allocator: a freed block is handed out again for a request of nearly its size, not for a small one") {
  lg::cuda::empty_cache();
  CHECK(lg::cuda::cache_stats().cached_bytes == 0);
  const lg::cuda::CacheStats before = lg::cuda::cache_stats();
  void* first = nullptr;
  { first = lg::empty({1 << 20}, kOnGpu).data_ptr(); }  // 4 MiB, freed at once
  if (!lg::cuda::caching_enabled()) {
    MESSAGE("the cache is off (LAYOUTGUARD_CUDA_CACHE=0): checking that nothing is kept");
    CHECK(lg::cuda::cache_stats().cached_bytes == 0);
    CHECK(lg::cuda::cache_stats().reuses == before.reuses);
    CHECK(lg::cuda::empty_cache() == 0);
    return;
  }
  CHECK(lg::cuda::cache_stats().cached_bytes == 4 * kMiB);
  CHECK(lg::cuda::cache_stats().fresh == before.fresh + 1);
  {
    const lg::Tensor again = lg::empty({(1 << 20) - 1000}, kOnGpu);
    CHECK(again.data_ptr() == first);
    CHECK(lg::cuda::cache_stats().reuses == before.reuses + 1);
    CHECK(lg::cuda::cache_stats().cached_bytes == 0);
  }
  {
    const lg::Tensor small = lg::empty({1 << 16}, kOnGpu);  // 256 KiB: not out of the cached 4 MiB block
    CHECK(small.data_ptr() != first);
    CHECK(lg::cuda::cache_stats().cached_bytes == 4 * kMiB);
  }
  CHECK(lg::cuda::cache_stats().cached_bytes == 4 * kMiB + 256 * 1024);
  CHECK(lg::cuda::empty_cache() == 4 * kMiB + 256 * 1024);
  CHECK(lg::cuda::cache_stats().cached_bytes == 0);
}

TEST_CASE("cuda allocator: out of memory returns the cached blocks to the pool and tries again") {
  lg::cuda::empty_cache();
  { (void)lg::empty({1 << 20}, kOnGpu); }  // 4 MiB, cached when the cache is on
  const size_t cached = lg::cuda::cache_stats().cached_bytes;
  CHECK(cached == (lg::cuda::caching_enabled() ? 4 * kMiB : 0));
  try {
    (void)lg::empty({int64_t{1} << 46}, kOnGpu);  // 256 TiB
    FAIL("expected OutOfMemoryError");
  } catch (const lg::OutOfMemoryError& e) {
    const std::string what = e.what();
    CHECK(what.find("tried to allocate 281474976710656 bytes") != std::string::npos);
    CHECK((what.find("after returning 4 MiB of cached blocks to the pool") != std::string::npos) == (cached > 0));
  }
  CHECK(lg::cuda::cache_stats().cached_bytes == 0);
}

TEST_CASE("cuda allocator: work queued with a block's previous owner does not reach its next owner") {
  // The first owner's copy is still queued when its tensor is freed; the next owner writes its
  // own values after it and must read back exactly those. With all work of a device on one
  // stream this holds by construction: the case is there for the day a second stream, or a
  // kernel on another device's stream (copy.cpp's cross-device path once was), breaks it.
  const lg::Tensor source = lg::full({64, 64, 56, 56}, 3.0f).to(kOnGpu);
  void* block = nullptr;
  {
    lg::Tensor first = lg::empty({64, 64, 56, 56}, kOnGpu, lg::MemoryFormat::ChannelsLast);
    for (int i = 0; i < 4; ++i) first.copy_(source);  // NCHW -> NHWC, a few hundred microseconds
    block = first.data_ptr();
  }
  lg::Tensor next = lg::zeros({64, 64, 56, 56}, kOnGpu);
  if (lg::cuda::caching_enabled()) CHECK(next.data_ptr() == block);
  lg::add_(next, 1.0);
  const lg::Tensor back = next.cpu();
  CHECK(lg::sum(lg::eq(back, 1.0)).item().to<int64_t>() == back.numel());
}

TEST_CASE("cuda allocator: the 256-byte alignment holds for cached sizes") {
  for (int64_t n : {1, 3, 129, 1000, 4097}) {
    CAPTURE(n);
    const lg::Tensor a = lg::empty({n}, kOnGpu.dtype(lg::kUInt8)), b = lg::empty({n}, kOnGpu.dtype(lg::kUInt8));
    CHECK(reinterpret_cast<uintptr_t>(a.data_ptr()) % 256 == 0);
    CHECK(reinterpret_cast<uintptr_t>(b.data_ptr()) % 256 == 0);
    CHECK(a.data_ptr() != b.data_ptr());
  }
}

}  // TEST_SUITE("cuda")
