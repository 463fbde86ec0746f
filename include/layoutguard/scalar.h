// Scalar: one number of any kind (bool, integer or floating), as fill values and item() results.
#pragma once

#include <concepts>
#include <cstdint>
#include <iosfwd>

#include <layoutguard/dtype.h>

namespace lg {

class Scalar {
 public:
  enum class Kind : int8_t { Bool, Int, Double };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::Bool), i_(v ? 1 : 0) {}  // NOLINT: implicit like a number
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  Scalar(T v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {}  // NOLINT
  template <std::floating_point T>
  Scalar(T v) : kind_(Kind::Double), d_(static_cast<double>(v)) {}  // NOLINT
  Scalar(Half v) : Scalar(static_cast<float>(v)) {}                // NOLINT
  Scalar(BFloat16 v) : Scalar(static_cast<float>(v)) {}            // NOLINT

  Kind kind() const { return kind_; }
  bool is_boolean() const { return kind_ == Kind::Bool; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_floating_point() const { return kind_ == Kind::Double; }

  double to_double() const { return kind_ == Kind::Double ? d_ : static_cast<double>(i_); }
  int64_t to_int64() const;  // floating values are truncated toward zero, saturating
  bool to_bool() const { return kind_ == Kind::Double ? d_ != 0.0 : i_ != 0; }

  // The value converted to the element type T with the same rules as a tensor cast.
  template <Element T>
  T to() const {
    if constexpr (std::same_as<T, bool>) return to_bool();
    else if constexpr (std::same_as<T, double>) return to_double();
    else if constexpr (std::same_as<T, float> || std::same_as<T, Half> || std::same_as<T, BFloat16>)
      return T(static_cast<float>(to_double()));
    else if constexpr (std::same_as<T, uint8_t>) return static_cast<uint8_t>(to_int64());  // wraps
    else return static_cast<T>(to_int64());
  }

  // The dtype a factory picks for this value when none is given: bool, int64 or float32.
  DType default_dtype() const;

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

std::ostream& operator<<(std::ostream& out, const Scalar& s);

}  // namespace lg
