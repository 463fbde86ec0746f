// Type promotion (torch.promote_types / result_type / can_cast) for our eight dtypes.
#include <layoutguard/type_promotion.h>

namespace lg {
namespace {

enum class Category { Bool, Integral, Floating };

Category category(DType d) {
  if (d == DType::Bool) return Category::Bool;
  return is_floating_point(d) ? Category::Floating : Category::Integral;
}

// The rank of a dtype within its category: the wider one wins.
int width_rank(DType d) {
  switch (d) {
    case DType::Bool: return 0;
    case DType::UInt8: return 1;
    case DType::Int32: return 2;
    case DType::Int64: return 3;
    case DType::Float16:
    case DType::BFloat16: return 1;
    case DType::Float32: return 2;
    case DType::Float64: return 3;
  }
  return 0;
}

// One tier of result_type: promote_types over its members, "undefined" while empty.
struct Tier {
  bool defined = false;
  DType dtype = DType::Bool;
  void add(DType d) {
    dtype = defined ? promote_types(dtype, d) : d;
    defined = true;
  }
};

// c10's combine_categories: the higher tier wins unless the lower one brings a higher category.
Tier combine(Tier higher, Tier lower) {
  if (!higher.defined) return lower;
  if (!lower.defined) return higher;
  if (category(higher.dtype) == Category::Floating) return higher;
  if (higher.dtype == DType::Bool || category(lower.dtype) == Category::Floating) {
    higher.dtype = promote_types(higher.dtype, lower.dtype);
    return higher;
  }
  return higher;
}

}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  const Category ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  // float16 and bfloat16 have the same width but neither holds the other.
  if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16))
    return DType::Float32;
  return width_rank(a) >= width_rank(b) ? a : b;
}

bool can_cast(DType from, DType to) {
  if (category(from) == Category::Floating && category(to) != Category::Floating) return false;
  if (from != DType::Bool && to == DType::Bool) return false;
  return true;
}

DType result_type(std::span<const Tensor> tensors, std::span<const Scalar> scalars) {
  Tier dims, zero_dim, wrapped;
  for (const Tensor& t : tensors) {
    if (!t.defined()) continue;
    (t.dim() > 0 ? dims : zero_dim).add(t.dtype());
  }
  for (const Scalar& s : scalars)
    wrapped.add(s.is_floating_point() ? DType::Float32 : s.is_boolean() ? DType::Bool : DType::Int64);
  const Tier r = combine(dims, combine(zero_dim, wrapped));
  LG_CHECK(r.defined, "[result_type] received no defined tensor and no scalar; required at least one operand");
  return r.dtype;
}

}  // namespace lg
