// Element types: names, sizes, and the 16-bit float conversions (checked exhaustively against
// the compiler's own _Float16 where it has one).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include <layoutguard/layoutguard.h>

TEST_SUITE("dtype") {

TEST_CASE("dtype names and sizes follow PyTorch") {
  CHECK(lg::dtype_name(lg::kFloat32) == "float32");
  CHECK(lg::dtype_name(lg::kBFloat16) == "bfloat16");
  CHECK(lg::dtype_name(lg::kBool) == "bool");
  CHECK(lg::itemsize(lg::kFloat16) == 2);
  CHECK(lg::itemsize(lg::kInt64) == 8);
  CHECK(lg::itemsize(lg::kUInt8) == 1);
  CHECK(lg::is_floating_point(lg::kBFloat16));
  CHECK_FALSE(lg::is_floating_point(lg::kInt32));
  std::ostringstream out;
  out << lg::kFloat64 << ' ' << lg::MemoryFormat::ChannelsLast3d << ' ' << lg::kCPU;
  CHECK(out.str() == "float64 channels_last_3d cpu");
}

TEST_CASE("every half value survives a round trip through float") {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const lg::Half h = lg::Half::from_bits(static_cast<uint16_t>(bits));
    const float f = h;
    if (std::isnan(f)) continue;
    CAPTURE(bits);
    REQUIRE(lg::Half(f).bits == bits);
  }
}

#if defined(__FLT16_MAX__)
TEST_CASE("float to half rounds exactly like the compiler's _Float16 (nearest even)") {
  std::mt19937 rng(11);
  auto check = [](float f) {
    const _Float16 ref = static_cast<_Float16>(f);
    const uint16_t ref_bits = std::bit_cast<uint16_t>(ref);
    CAPTURE(f);
    REQUIRE(lg::Half(f).bits == ref_bits);
  };
  for (int i = 0; i < 200000; ++i) {
    float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (std::isnan(f)) continue;
    check(f);
  }
  // Halfway cases and the edges of the range.
  for (float f : {65504.0f, 65519.0f, 65520.0f, 1e-8f, 2.98e-8f, 5.96e-8f, 6.1035e-5f, 1.0f + 1.0f / 2048,
                  1.0f + 3.0f / 2048, -0.0f, std::numeric_limits<float>::infinity()})
    check(f);
}
#endif

TEST_CASE("bfloat16 keeps the top 16 bits, rounding to nearest even") {
  CHECK(static_cast<float>(lg::BFloat16(1.0f)) == 1.0f);
  CHECK(lg::BFloat16(1.0f + 1.0f / 256).bits == lg::BFloat16(1.0f).bits);            // tie -> even
  CHECK(lg::BFloat16(1.0f + 3.0f / 256).bits == lg::BFloat16(1.0f).bits + 2);        // tie -> even (up)
  CHECK(lg::BFloat16(1.0f + 1.0f / 128 + 1.0f / 1024).bits == lg::BFloat16(1.0f).bits + 1);
  CHECK(std::isnan(static_cast<float>(lg::BFloat16(std::nanf("")))));
  CHECK(std::isinf(static_cast<float>(lg::BFloat16(std::numeric_limits<float>::infinity()))));
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const float f = lg::BFloat16::from_bits(static_cast<uint16_t>(bits));
    if (!std::isnan(f)) REQUIRE(lg::BFloat16(f).bits == bits);
  }
}

TEST_CASE("tensor casts truncate floats, saturate at int64 and wrap narrow integers") {
  lg::Tensor f = lg::arange(-3, 4).to(lg::kFloat32);
  f.fill_(-1.5);
  CHECK(f.to(lg::kInt64).select(0, 0).item<int64_t>() == -1);
  CHECK(f.to(lg::kUInt8).select(0, 0).item<int64_t>() == 255);
  CHECK(f.to(lg::kBool).select(0, 0).item<bool>());
  lg::Tensor nan = lg::full({2}, std::nan(""), lg::kFloat64);
  CHECK(nan.to(lg::kInt32).select(0, 1).item<int64_t>() == 0);
  lg::Tensor huge = lg::full({1}, 1e300, lg::kFloat64);
  CHECK(huge.to(lg::kInt64).item<int64_t>() == std::numeric_limits<int64_t>::max());
  CHECK(std::isinf(huge.to(lg::kFloat16).item<float>()));
  lg::Tensor b = lg::full({3}, true);
  CHECK(b.dtype() == lg::kBool);
  CHECK(b.to(lg::kFloat16).select(0, 2).item<float>() == 1.0f);
  CHECK(lg::full({1}, 0.25, lg::kBFloat16).to(lg::kFloat64).item<double>() == 0.25);
}

TEST_CASE("Scalar keeps its kind and picks the factory default dtype") {
  CHECK(lg::Scalar(3).is_integral());
  CHECK(lg::Scalar(3.5f).is_floating_point());
  CHECK(lg::Scalar(true).is_boolean());
  CHECK(lg::Scalar(7).default_dtype() == lg::kInt64);
  CHECK(lg::Scalar(7.0).default_dtype() == lg::kFloat32);
  CHECK(lg::Scalar(false).default_dtype() == lg::kBool);
  CHECK(lg::Scalar(2.9).to_int64() == 2);
  CHECK(lg::Scalar(lg::Half(0.5f)).to_double() == 0.5);
  CHECK(lg::Scalar(-1).to<uint8_t>() == 255);
}

}  // TEST_SUITE
