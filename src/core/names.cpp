// Printable names of the small value types: dtypes, devices, scalars and int arrays.
#include <charconv>
#include <ostream>
#include <sstream>

#include <layoutguard/device.h>
#include <layoutguard/dtype.h>
#include <layoutguard/error.h>
#include <layoutguard/int_array_ref.h>
#include <layoutguard/scalar.h>

#include "core/enum_checks.h"

namespace lg {

std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::Float32: return "float32";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Float64: return "float64";
    case DType::Int64: return "int64";
    case DType::Int32: return "int32";
    case DType::UInt8: return "uint8";
    case DType::Bool: return "bool";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& out, DType d) { return out << dtype_name(d); }

void detail::check_dtype(DType dtype, std::string_view op) {
  LG_CHECK(dtype_name(dtype) != "unknown", "[", op, "] dtype ", static_cast<int>(dtype),
           " is not a DType; required: float32, float16, bfloat16, float64, int64, int32, uint8 or bool");
}

Device::Device(DeviceType type, int index) : type_(type), index_(index) {
  if (type == DeviceType::CPU) {
    LG_CHECK(index == -1 || index == 0, "[Device] the cpu device takes no index (got ", index, ")");
    index_ = -1;
  } else {
    LG_CHECK(index >= 0, "[Device] a cuda device index must be >= 0 (got ", index, ")");
  }
}

Device::Device(std::string_view spec) : Device() {
  if (spec == "cpu") return;
  const std::string_view prefix = "cuda";
  LG_CHECK(spec.substr(0, prefix.size()) == prefix,
           "[Device] expected \"cpu\", \"cuda\" or \"cuda:N\" but received \"", spec, "\"");
  std::string_view rest = spec.substr(prefix.size());
  int index = 0;
  if (!rest.empty()) {
    const bool colon = rest.front() == ':';
    std::string_view digits = colon ? rest.substr(1) : rest;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    LG_CHECK(colon && !digits.empty() && ec == std::errc() && end == digits.data() + digits.size(),
             "[Device] expected \"cpu\", \"cuda\" or \"cuda:N\" but received \"", spec, "\"");
  }
  *this = Device(DeviceType::CUDA, index);
}

std::string Device::str() const {
  return is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(index_);
}

std::ostream& operator<<(std::ostream& out, Device d) { return out << d.str(); }

int64_t Scalar::to_int64() const {
  if (kind_ != Kind::Double) return i_;
  // Saturate instead of the undefined behaviour of an out-of-range float-to-int cast.
  if (d_ != d_) return 0;
  if (d_ >= 9.2233720368547758e18) return INT64_MAX;
  if (d_ <= -9.2233720368547758e18) return INT64_MIN;
  return static_cast<int64_t>(d_);
}

DType Scalar::default_dtype() const {
  switch (kind_) {
    case Kind::Bool: return kBool;
    case Kind::Int: return kInt64;
    case Kind::Double: break;
  }
  return kFloat32;
}

std::ostream& operator<<(std::ostream& out, const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool: return out << (s.to_bool() ? "True" : "False");
    case Scalar::Kind::Int: return out << s.to_int64();
    case Scalar::Kind::Double: break;
  }
  return out << s.to_double();
}

std::string to_string(IntArrayRef values) {
  std::string text = "(";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) text += ',';
    text += std::to_string(values[i]);
  }
  return text + ")";
}

std::ostream& operator<<(std::ostream& out, IntArrayRef values) { return out << to_string(values); }

}  // namespace lg
