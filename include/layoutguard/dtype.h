// Element types: the DType enum, its constants, and the 16-bit float storage types.
//
// Half (IEEE binary16) and BFloat16 are storage types: arithmetic converts them to float,
// computes there and rounds back (round to nearest, ties to even), as CPU kernels in ATen do.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string_view>
#include <type_traits>

namespace lg {

enum class DType : int8_t { Float32, Float16, BFloat16, Float64, Int64, Int32, UInt8, Bool };

inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat16 = DType::Float16;
inline constexpr DType kBFloat16 = DType::BFloat16;
inline constexpr DType kFloat64 = DType::Float64;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kInt32 = DType::Int32;
inline constexpr DType kUInt8 = DType::UInt8;
inline constexpr DType kBool = DType::Bool;
inline constexpr int kNumDTypes = 8;

namespace detail {

// The shell shared by the 16-bit float storage types: 16 raw bits that convert to and from
// float through Codec (round to nearest, ties to even).
template <typename Codec>
struct Float16Storage {
  uint16_t bits = 0;

  Float16Storage() = default;
  Float16Storage(float value) : bits(Codec::from_float(value)) {}  // NOLINT: like a float
  operator float() const { return Codec::to_float(bits); }         // NOLINT
  static constexpr Float16Storage from_bits(uint16_t b) {
    Float16Storage h;
    h.bits = b;
    return h;
  }
};

// IEEE 754 binary16.
struct HalfCodec {
  static uint16_t from_float(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    const uint32_t mag = x & 0x7fffffffu;
    if (mag >= 0x7f800000u)  // inf stays inf; every NaN becomes the quiet NaN
      return static_cast<uint16_t>(sign | (mag > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (mag >= 0x477ff000u)  // >= 65520 rounds past the largest half (65504)
      return static_cast<uint16_t>(sign | 0x7c00u);
    if (mag < 0x38800000u) {  // below 2^-14: a half subnormal (or zero), in units of 2^-24
      const float scaled = std::bit_cast<float>(mag) * 16777216.0f;  // exact: power of two
      return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled)));
    }
    // Normal: rebias the exponent (127 -> 15) and round the 13 dropped bits to nearest even.
    const uint32_t odd = (mag >> 13) & 1u;
    return static_cast<uint16_t>(sign | ((mag + 0xc8000fffu + odd) >> 13));
  }
  static float to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
      const float f = static_cast<float>(mant) * (1.0f / 16777216.0f);
      return sign ? -f : f;
    }
    if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
    return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
  }
};

// bfloat16: the upper half of a float32.
struct BFloat16Codec {
  static uint16_t from_float(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x0040u);
    return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
  }
  static float to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }
};

}  // namespace detail

using Half = detail::Float16Storage<detail::HalfCodec>;
using BFloat16 = detail::Float16Storage<detail::BFloat16Codec>;

// Size of one element in bytes.
constexpr size_t itemsize(DType d) {
  switch (d) {
    case DType::Float64:
    case DType::Int64: return 8;
    case DType::Float32:
    case DType::Int32: return 4;
    case DType::Float16:
    case DType::BFloat16: return 2;
    case DType::UInt8:
    case DType::Bool: return 1;
  }
  return 0;
}

constexpr bool is_floating_point(DType d) {
  return d == DType::Float32 || d == DType::Float64 || d == DType::Float16 || d == DType::BFloat16;
}

// "float32", "float16", "bfloat16", "float64", "int64", "int32", "uint8", "bool" (PyTorch's
// torch.<name> spelling).
std::string_view dtype_name(DType d);
std::ostream& operator<<(std::ostream& out, DType d);

// The C++ type that stores one element of a DType, and back.
template <DType D> struct dtype_cpp;
template <> struct dtype_cpp<DType::Float32> { using type = float; };
template <> struct dtype_cpp<DType::Float16> { using type = Half; };
template <> struct dtype_cpp<DType::BFloat16> { using type = BFloat16; };
template <> struct dtype_cpp<DType::Float64> { using type = double; };
template <> struct dtype_cpp<DType::Int64> { using type = int64_t; };
template <> struct dtype_cpp<DType::Int32> { using type = int32_t; };
template <> struct dtype_cpp<DType::UInt8> { using type = uint8_t; };
template <> struct dtype_cpp<DType::Bool> { using type = bool; };

template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<Half> { static constexpr DType value = DType::Float16; };
template <> struct dtype_of<BFloat16> { static constexpr DType value = DType::BFloat16; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };

template <typename T>
concept Element = requires { dtype_of<T>::value; };

// Calls fn(std::type_identity<T>{}) with T the element type of d.
template <typename Fn>
decltype(auto) visit_dtype(DType d, Fn&& fn) {
  switch (d) {
    case DType::Float32: return fn(std::type_identity<float>{});
    case DType::Float16: return fn(std::type_identity<Half>{});
    case DType::BFloat16: return fn(std::type_identity<BFloat16>{});
    case DType::Float64: return fn(std::type_identity<double>{});
    case DType::Int64: return fn(std::type_identity<int64_t>{});
    case DType::Int32: return fn(std::type_identity<int32_t>{});
    case DType::UInt8: return fn(std::type_identity<uint8_t>{});
    case DType::Bool: break;
  }
  return fn(std::type_identity<bool>{});
}

}  // namespace lg
