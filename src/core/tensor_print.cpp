// Printing: the layout line (describe_layout) and the values, summarised past 1000 elements.
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>

#include <layoutguard/tensor.h>

namespace lg {
namespace {

constexpr int64_t kSummariseAbove = 1000;
constexpr int64_t kEdgeItems = 3;

// Reads the element at `offset` (in elements from data_ptr) as a double, for printing only.
double element_as_double(const Tensor& t, int64_t offset) {
  return visit_dtype(t.dtype(), [&]<typename T>(std::type_identity<T>) {
    return static_cast<double>(static_cast<const T*>(t.data_ptr())[offset]);  // 16-bit: via float
  });
}

std::string format_value(const Tensor& t, double v) {
  if (t.dtype() == kBool) return v != 0.0 ? "True" : "False";
  char buf[64];
  if (!t.is_floating_point()) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  } else if (std::isfinite(v) && v != 0.0 && (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-4)) {
    std::snprintf(buf, sizeof buf, "%.4e", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.4f", v);
  }
  return buf;
}

void print_dim(std::ostream& out, const Tensor& t, int64_t d, int64_t offset, bool summarise,
               int indent) {
  if (d == t.dim()) {
    out << format_value(t, element_as_double(t, offset));
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
