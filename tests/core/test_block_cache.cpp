// The reuse policy both allocators share (core/block_cache.h), on made-up addresses: which
// cached block a request takes, which blocks go first past the cap, and what is not cached.
// Also the checked environment switch (core/env_flag.h) that turns the CUDA cache off.
#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include <layoutguard/layoutguard.h>

#include "core/block_cache.h"
#include "core/env_flag.h"
#include "support/guard_testing.h"

namespace {

void* address(uintptr_t n) { return reinterpret_cast<void*>(n * 4096); }

}  // namespace

TEST_SUITE("tensor") {

TEST_CASE("block cache: a request takes a cached block of at least its size and at most 8/7 of it") {
  std::vector<void*> released;
  lg::detail::BlockCache cache(1 << 20, [&](void* p) { released.push_back(p); });
  CHECK(cache.take(800) == nullptr);
  cache.track(address(1), 800);
  cache.track(address(2), 4096);
  CHECK(cache.stats().fresh == 2);
  CHECK(cache.give_back(address(1)));
  CHECK(cache.give_back(address(2)));
  CHECK(cache.stats().cached_bytes == 4896);
  CHECK(cache.take(801) == nullptr);        // 4096 is more than 8/7 of 801; 800 is too small
  CHECK(cache.take(3584) == address(2));    // 4096 - 4096 / 8 = 3584: just fits
  CHECK(cache.take(700) == address(1));     // 800 - 100 = 700
  CHECK(cache.take(700) == nullptr);        // both are live again
  CHECK(cache.stats().reuses == 2);
  CHECK(cache.stats().cached_bytes == 0);
  CHECK(released.empty());
  // A block handed out again goes back to the cache again.
  CHECK(cache.give_back(address(2)));
  CHECK(cache.take(4000) == address(2));
}

TEST_CASE("block cache: a block it did not hand out is not kept, and one given back twice is cached once") {
  std::vector<void*> released;
  lg::detail::BlockCache cache(1 << 20, [&](void* p) { released.push_back(p); });
  CHECK_FALSE(cache.give_back(address(7)));
  cache.track(address(3), 1024);
  CHECK(cache.give_back(address(3)));
  // True: the caller must not return to the source a block the cache still holds.
  CHECK(cache.give_back(address(3)));
  CHECK(cache.stats().cached_bytes == 1024);
  CHECK(cache.take(1024) == address(3));
  CHECK(cache.take(1024) == nullptr);  // handed out once, not twice
  CHECK(released.empty());
}

TEST_CASE("block cache: a block larger than the cap goes back to its source and leaves the cached ones") {
  std::vector<void*> released;
  lg::detail::BlockCache cache(3000, [&](void* p) { released.push_back(p); });
  cache.track(address(1), 1000);
  cache.track(address(2), 4000);
  CHECK(cache.give_back(address(1)));
  CHECK_FALSE(cache.give_back(address(2)));  // the caller releases it
  CHECK(released.empty());
  CHECK(cache.stats().cached_bytes == 1000);
  CHECK(cache.take(1000) == address(1));
  CHECK_FALSE(cache.give_back(address(2)));  // forgotten: not a block of the cache any more
}

TEST_CASE("block cache: a release that throws leaves the cache consistent") {
  int calls = 0;
  lg::detail::BlockCache cache(1 << 20, [&](void*) {
    ++calls;
    throw std::runtime_error("source gone");
  });
  cache.track(address(1), 1000);
  cache.give_back(address(1));
  CHECK_THROWS(cache.release_all());
  CHECK(calls == 1);
  CHECK(cache.stats().cached_bytes == 0);
  CHECK(cache.take(1000) == nullptr);
  CHECK(cache.release_all() == 0);  // not released a second time
  CHECK(calls == 1);
}

TEST_CASE("block cache: past its cap the blocks freed longest ago go back first, and release_all returns the rest") {
  std::vector<void*> released;
  lg::detail::BlockCache cache(3000, [&](void* p) { released.push_back(p); });
  for (uintptr_t i = 1; i <= 4; ++i) cache.track(address(i), 1000);
  cache.give_back(address(2));
  cache.give_back(address(4));
  cache.give_back(address(1));
  CHECK(released.empty());
  cache.give_back(address(3));  // 4000 bytes: address 2, freed first, goes
  CHECK(released == std::vector<void*>{address(2)});
  CHECK(cache.stats().cached_bytes == 3000);
  CHECK(cache.release_all() == 3000);
  CHECK(released == std::vector<void*>{address(2), address(4), address(1), address(3)});
  CHECK(cache.stats().cached_bytes == 0);
  CHECK(cache.release_all() == 0);
  CHECK(cache.take(1000) == nullptr);
}

}  // TEST_SUITE("tensor")

TEST_SUITE("errors") {

TEST_CASE("an environment switch takes 1/true and 0/false, defaults when unset or empty, and names the variable otherwise") {
  const char* name = "LAYOUTGUARD_TEST_SWITCH";
  {
    lg::testing::EnvVar unset(name, nullptr);
    CHECK(lg::detail::env_flag(name, true));
    CHECK_FALSE(lg::detail::env_flag(name, false));
  }
  for (const char* on : {"1", "true"}) {
    lg::testing::EnvVar v(name, on);
    CHECK(lg::detail::env_flag(name, false));
  }
  for (const char* off : {"0", "false"}) {
    lg::testing::EnvVar v(name, off);
    CHECK_FALSE(lg::detail::env_flag(name, true));
  }
  {
    lg::testing::EnvVar empty(name, "");
    CHECK(lg::detail::env_flag(name, true));
  }
  for (const char* bad : {"yes", "2", "off", " 1"}) {
    CAPTURE(bad);
    lg::testing::EnvVar v(name, bad);
    try {
      (void)lg::detail::env_flag(name, true);
      FAIL("expected ConfigError");
    } catch (const lg::ConfigError& e) {
      const std::string what = e.what();
      CHECK(what.find(std::string(name) + "='" + bad + "'") != std::string::npos);
      CHECK(what.find("allowed values: 1 or true (on), 0 or false (off), or unset (on)") != std::string::npos);
    }
  }
}

TEST_CASE("cuda::cache_stats refuses a device that is not CUDA, and one this process cannot use") {
  CHECK_THROWS_WITH_AS((void)lg::cuda::cache_stats(lg::kCPU), doctest::Contains("required a CUDA device"), lg::Error);
  if (lg::cuda::device_count() == 0) {
    // Built without CUDA: NotCompiledError; built with it but no device here: DeviceError.
    CHECK_THROWS_AS((void)lg::cuda::cache_stats(lg::Device::cuda(0)), lg::Error);
    CHECK(lg::cuda::empty_cache() == 0);
  }
  CHECK_THROWS_AS((void)lg::cuda::cache_stats(lg::Device::cuda(63)), lg::Error);
}

}  // TEST_SUITE("errors")
