// The vectorised float32 <-> float16/bfloat16 row casts (src/cpu/cast_row.h) against the scalar
// codecs of dtype.h, bit for bit: every float16 and bfloat16 value, four million float32
// values spread over all exponents, the rounding boundaries, NaNs with payloads mixed into
// vector steps, and every length and offset around the 8-lane step. Then the tensor copy
// paths that use them (dense casts and the NCHW <-> NHWC tiles with ragged edges) against an
// element-by-element reference.
#include <algorithm>
#include <bit>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <layoutguard/layoutguard.h>

#include "cpu/cast_row.h"

namespace {

using lg::BFloat16;
using lg::Half;

template <typename T>
uint32_t bits_of(T v) {
  if constexpr (sizeof(T) == 4) return std::bit_cast<uint32_t>(v);
  else return v.bits;
}

// Casts `src` with cast_row at every offset 0..8 and length, and compares each result's bits
// with the scalar codec's.
template <typename D, typename S>
void check_against_scalar(const std::vector<S>& src) {
  std::vector<D> got(src.size()), want(src.size());
  lg::cpu::cast_row(got.data(), src.data(), static_cast<int64_t>(src.size()));
  lg::cpu::cast_row_scalar(want.data(), src.data(), static_cast<int64_t>(src.size()));
  size_t mismatches = 0, first = 0;
  for (size_t i = 0; i < src.size(); ++i)
    if (bits_of(got[i]) != bits_of(want[i]) && mismatches++ == 0) first = i;
  CAPTURE(first);
  CAPTURE(bits_of(src[first]));
  CAPTURE(bits_of(got[first]));
  CAPTURE(bits_of(want[first]));
  CHECK(mismatches == 0);
}

// Short rows at odd offsets: the vector steps and the scalar tail meet at every position, and
// nothing past n is written.
template <typename D, typename S>
void check_lengths_and_offsets(const std::vector<S>& src) {
  REQUIRE(src.size() >= 48);
  for (int64_t offset = 0; offset <= 8; ++offset) {
    for (int64_t n = 0; n <= 33; ++n) {
      std::vector<D> got(48, D(-7.0f)), want(48, D(-7.0f));
      lg::cpu::cast_row(got.data() + offset, src.data() + offset, n);
      lg::cpu::cast_row_scalar(want.data() + offset, src.data() + offset, n);
      bool same = true;
      for (size_t i = 0; i < got.size(); ++i) same = same && bits_of(got[i]) == bits_of(want[i]);
      CAPTURE(offset);
      CAPTURE(n);
      CHECK(same);
    }
  }
}

// Four million floats over the whole bit space (a prime stride hits every exponent and
// mantissa pattern class), plus the values where rounding or classification changes.
std::vector<float> float_probe() {
  std::vector<float> v;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 1021) v.push_back(std::bit_cast<float>(static_cast<uint32_t>(b)));
  const uint32_t specials[] = {
      0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,  // zeros, infinities
      0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fa5a5a5u, 0xffffffffu, 0x7fffffffu,  // NaNs
      0x00000001u, 0x807fffffu,  // float subnormals
      0x477fe000u, 0x477fefffu, 0x477ff000u, 0x477ff001u, 0x477fffffu,  // around half's largest
      0x33800000u, 0x33000000u, 0x33000001u, 0x32ffffffu, 0x387fc000u, 0x38800000u,  // half subnormals
      0x3f801000u, 0x3f803000u, 0x3f800fffu, 0x3f801001u,  // half ties to even
      0x3f808000u, 0x3f818000u, 0x3f807fffu, 0x3f808001u,  // bfloat16 ties to even
      0x7f7fffffu, 0xff7fffffu,  // largest floats: bfloat16 rounds them to infinity
  };
  for (uint32_t s : specials) v.push_back(std::bit_cast<float>(s));
  // NaNs inside otherwise ordinary 8-lane steps.
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  for (int i = 0; i < 64; ++i) v.push_back(i % 9 == 4 ? std::bit_cast<float>(0x7f812345u + i) : dist(gen));
  return v;
}

template <typename H>
std::vector<H> every_16_bit_value() {
  std::vector<H> v(1u << 16);
  for (uint32_t b = 0; b < v.size(); ++b) v[b] = H::from_bits(static_cast<uint16_t>(b));
  return v;
}

// cast_transpose against its scalar version for every tile size up to 10x10 and the 32x32 tile,
// with leading dimensions wider than the tile; destination elements outside the tile must keep
// their sentinel. `pool` supplies the source values (NaNs included).
template <typename D, typename S>
void check_transpose(const std::vector<S>& pool) {
  size_t failures = 0;
  for (int64_t rows : {0, 1, 3, 4, 5, 8, 9, 10, 32}) {
    for (int64_t cols : {0, 1, 2, 4, 7, 8, 10, 32}) {
      const int64_t src_stride = cols + 3, dst_stride = rows + 5;
      std::vector<S> src(static_cast<size_t>(std::max<int64_t>(rows, 1) * src_stride));
      for (size_t k = 0; k < src.size(); ++k) src[k] = pool[(k * 7919 + static_cast<size_t>(rows * 31 + cols)) % pool.size()];
      std::vector<D> got(static_cast<size_t>(std::max<int64_t>(cols, 1) * dst_stride), D(-7.0f)), want = got;
      lg::cpu::cast_transpose(got.data(), dst_stride, src.data(), src_stride, rows, cols);
      lg::cpu::cast_transpose_scalar(want.data(), dst_stride, src.data(), src_stride, rows, cols);
      for (size_t k = 0; k < got.size(); ++k) {
        if (bits_of(got[k]) != bits_of(want[k]) && failures++ == 0) {
          MESSAGE("first mismatch: rows " << rows << ", cols " << cols << ", element " << k << ": got "
                                          << bits_of(got[k]) << ", want " << bits_of(want[k]));
        }
      }
    }
  }
  CHECK(failures == 0);
}

}  // namespace

TEST_SUITE("ops") {

TEST_CASE("transposing casts (NCHW <-> NHWC tiles) equal the scalar codec for every tile size") {
  std::vector<float> floats = float_probe();
  // Keep the probe's tail (specials and NaN-laced values) and a spread of the rest.
  floats.erase(floats.begin(), floats.end() - 4096);
  SUBCASE("float32 -> float16") { check_transpose<Half>(floats); }
  SUBCASE("float32 -> bfloat16") { check_transpose<BFloat16>(floats); }
  SUBCASE("float16 -> float32") { check_transpose<float>(every_16_bit_value<Half>()); }
  SUBCASE("bfloat16 -> float32") { check_transpose<float>(every_16_bit_value<BFloat16>()); }
}

TEST_CASE("row casts to float16 and bfloat16 give the scalar codec's bits for every input") {
  if (!lg::cpu::vector_casts_supported())
    MESSAGE("this CPU has no AVX2/F16C: cast_row takes the scalar codec, so only that path is checked");
  const std::vector<float> floats = float_probe();
  SUBCASE("float32 -> float16") {
    check_against_scalar<Half>(floats);
    check_lengths_and_offsets<Half>(floats);
  }
  SUBCASE("float32 -> bfloat16") {
    check_against_scalar<BFloat16>(floats);
    check_lengths_and_offsets<BFloat16>(floats);
  }
  SUBCASE("float16 -> float32, all 65536 values") {
    const auto halves = every_16_bit_value<Half>();
    check_against_scalar<float>(halves);
    // A stretch holding NaNs (0x7c01..) and infinities in the same steps as finite values.
    const std::vector<Half> near_infinity(halves.begin() + 0x7bf0, halves.begin() + 0x7c30);
    check_lengths_and_offsets<float>(near_infinity);
  }
  SUBCASE("bfloat16 -> float32, all 65536 values") {
    const auto bfloats = every_16_bit_value<BFloat16>();
    check_against_scalar<float>(bfloats);
    check_lengths_and_offsets<float>(std::vector<BFloat16>(bfloats.begin() + 0x7f70, bfloats.begin() + 0x7fb0));
  }
}

TEST_CASE("copy_ between float32 and 16-bit floats equals the element-wise cast in every layout pairing") {
  using lg::MemoryFormat;
  // Channel and pixel counts that leave ragged 32-element tiles and 8-lane steps, and C=3
  // inputs that take the (de)interleaving path: 110 pixels (less than one 256-pixel block, a
  // ragged 4-pixel step) and 323 (a whole block and a ragged one).
  const std::vector<std::vector<int64_t>> shapes = {
      {2, 37, 9, 7}, {1, 64, 33, 35}, {3, 3, 10, 11}, {2, 3, 17, 19}, {1, 8, 8, 8}};
  for (const auto& shape : shapes) {
    for (lg::DType half_type : {lg::kFloat16, lg::kBFloat16}) {
      for (MemoryFormat from : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast}) {
        for (MemoryFormat to : {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast}) {
          const std::string dims = std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + "x" +
                                   std::to_string(shape[2]) + "x" + std::to_string(shape[3]);
          CAPTURE(dims);
          CAPTURE(half_type);
          CAPTURE(from);
          CAPTURE(to);
          lg::Tensor f = lg::randn(shape).contiguous(from);
          float* fp = static_cast<float*>(f.data_ptr());
          fp[5] = std::bit_cast<float>(0x7fa00001u);  // a signalling NaN with a payload
          fp[f.numel() - 2] = 70000.0f;               // overflows float16
          // float32 -> 16-bit, then back, each against a per-element cast through the codec.
          lg::Tensor h = lg::empty(shape, half_type, to);
          h.copy_(f);
          lg::Tensor back = lg::empty(shape, lg::kFloat32, from);
          back.copy_(h);
          const lg::Tensor f_cl = f.contiguous(), h_cl = h.contiguous(), back_cl = back.contiguous();
          const float* fv = static_cast<const float*>(f_cl.data_ptr());
          const float* bv = static_cast<const float*>(back_cl.data_ptr());
          const uint16_t* hv = static_cast<const uint16_t*>(h_cl.data_ptr());
          size_t wrong_down = 0, wrong_up = 0;
          for (int64_t i = 0; i < f.numel(); ++i) {
            const uint16_t want = half_type == lg::kFloat16 ? Half(fv[i]).bits : BFloat16(fv[i]).bits;
            const float up = half_type == lg::kFloat16 ? static_cast<float>(Half::from_bits(hv[i]))
                                                       : static_cast<float>(BFloat16::from_bits(hv[i]));
            wrong_down += hv[i] != want;
            wrong_up += std::bit_cast<uint32_t>(bv[i]) != std::bit_cast<uint32_t>(up);
          }
          CHECK(wrong_down == 0);
          CHECK(wrong_up == 0);
        }
      }
    }
  }
}

}  // TEST_SUITE
