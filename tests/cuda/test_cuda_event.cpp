// lg::cuda::Event on a GPU: it marks the device's layoutguard queue, query() and synchronize()
// see the work before it finish, elapsed_ms() gives the device time between two marks (spans
// between ordered marks add up), and misuse gives clear errors.
#include <doctest/doctest.h>

#include <string>

#include <layoutguard/layoutguard.h>

TEST_SUITE("cuda") {

TEST_CASE("cuda::Event times device work and reports its progress") {
  const lg::Device gpu = lg::Device::cuda(0);
  const lg::Tensor x = lg::randn({64, 64, 56, 56}).to(gpu).contiguous(lg::MemoryFormat::ChannelsLast);
  lg::cuda::Event start(gpu), small(gpu), large(gpu);
  CHECK(start.device() == gpu);
  CHECK_FALSE(start.recorded());
  CHECK(start.query());  // nothing recorded: nothing to wait for
  start.record();
  (void)lg::relu(x);
  small.record();
  for (int i = 0; i < 20; ++i) (void)lg::relu(x);
  large.record();
  large.synchronize();
  CHECK(large.query());
  CHECK(small.query());  // recorded before `large`, on the same queue
  const double one = start.elapsed_ms(small), twenty = small.elapsed_ms(large);
  CAPTURE(one);
  CAPTURE(twenty);
  CHECK(one > 0.0);
  CHECK(twenty > 0.0);
  // No comparison of the two durations: under compute-sanitizer the first relu (module load,
  // instrumentation) took longer than the next twenty (seen on an H200). The marks' order is
  // what the events promise, so spans between them add up.
  // Moving keeps the mark; the moved-from event refuses use.
  lg::cuda::Event moved(std::move(large));
  CHECK(moved.recorded());
  CHECK(start.elapsed_ms(moved) == doctest::Approx(one + twenty).epsilon(1e-3));
  CHECK(start.elapsed_ms(moved) >= twenty);
  CHECK_THROWS_AS(large.record(), lg::ValueError);
}

TEST_CASE("cuda::Event misuse: unrecorded events, other devices") {
  lg::cuda::Event a, b;
  a.record();
  try {
    (void)a.elapsed_ms(b);
    FAIL("expected an exception");
  } catch (const lg::ValueError& e) {
    CHECK(std::string(e.what()).find("an end event that was never recorded") != std::string::npos);
  }
  CHECK_THROWS_AS(lg::cuda::Event(lg::Device::cuda(lg::cuda::device_count())), lg::DeviceError);
}

}  // TEST_SUITE
