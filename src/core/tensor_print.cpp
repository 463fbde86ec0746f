// Printing: the layout line (describe_layout) and the values, summarised past 1000 elements.
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <type_traits>

#include <layoutguard/tensor.h>

namespace lg {
namespace {

constexpr int64_t kSummariseAbove = 1000;
constexpr int64_t kEdgeItems = 3;

// The element at `offset` (in elements from data_ptr) as text: integers exactly (an int64
// beyond 2^53 would lose digits through a double), floats with 4 decimals or in exponent form.
std::string format_element(const Tensor& t, int64_t offset) {
  return visit_dtype(t.dtype(), [&]<typename T>(std::type_identity<T>) -> std::string {
    const T value = static_cast<const T*>(t.data_ptr())[offset];
    if constexpr (std::is_same_v<T, bool>) {
      return value ? "True" : "False";
    } else if constexpr (std::is_integral_v<T>) {
      return std::to_string(value);
    } else {
      const double v = static_cast<double>(value);  // 16-bit: via float
      char buf[64];
      if (std::isfinite(v) && v != 0.0 && (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-4))
        std::snprintf(buf, sizeof buf, "%.4e", v);
      else
        std::snprintf(buf, sizeof buf, "%.4f", v);
      return buf;
    }
  });
}

void print_dim(std::ostream& out, const Tensor& t, int64_t d, int64_t offset, bool summarise,
               int indent) {
  if (d == t.dim()) {
    out << format_element(t, offset);
    return;
  }
  const int64_t n = t.size(d);
  out << '[';
  for (int64_t i = 0; i < n; ++i) {
    if (summarise && n > 2 * kEdgeItems && i == kEdgeItems) {
      out << "...";
      i = n - kEdgeItems - 1;
      out << (d + 1 == t.dim() ? ", " : ",\n" + std::string(indent + 1, ' '));
      continue;
    }
    print_dim(out, t, d + 1, offset + i * t.stride(d), summarise, indent + 1);
    if (i + 1 < n) out << (d + 1 == t.dim() ? ", " : ",\n" + std::string(indent + 1, ' '));
  }
  out << ']';
}

}  // namespace

std::string describe_layout(const Tensor& t) {
  if (!t.defined()) return "undefined tensor";
  std::string line = std::string(dtype_name(t.dtype())) + " " + t.device().str() + " " +
                     to_string(t.sizes()) + ":" + to_string(t.strides());
  if (t.storage_offset() != 0) line += " offset=" + std::to_string(t.storage_offset());
  line += " order=" + t.dim_order() + " " + layout::format_name(t.sizes(), t.strides());
  return line;
}

std::ostream& operator<<(std::ostream& out, const Tensor& t) {
  out << "tensor " << describe_layout(t);
  if (!t.defined()) return out;
  out << '\n';
  if (!t.device().is_cpu()) return out << "(values on " << t.device() << " not shown)";
  if (t.numel() == 0) return out << "[]";
  print_dim(out, t, 0, 0, t.numel() > kSummariseAbove, 0);
  return out;
}

}  // namespace lg
