// Shadow comparison: catches NHWC kernels that compute wrong values, not just wrong layouts.
#include "guard/shadow.h"

#include <cmath>
#include <cstdio>

#include <layoutguard/violation.h>

namespace lg::guard::detail {
namespace {

Tensor as_cpu_float64(const Tensor& t) {
  return t.to(TensorOptions().dtype(kFloat64).device(kCPU), false, MemoryFormat::Contiguous).contiguous();
}

[[noreturn]] void mismatch(const hooks::OpCall& call, size_t output, double diff, const std::string& what) {
  throw ShadowMismatch(std::string(call.op), output, diff, shadow_mismatch_text(call.op, output, what, call.kernel));
}

}  // namespace

ShadowTolerance shadow_tolerance(DType dt) {
  switch (dt) {
    case DType::Float64: return {1e-10, 1e-9};
    case DType::Float32: return {1e-5, 1e-4};
    case DType::Float16: return {1e-3, 1e-2};
    case DType::BFloat16: return {1e-2, 2e-2};
    default: return {0.0, 0.0};  // integers and bool: exact
  }
}

std::string shadow_difference_text(double difference, int64_t flat_index, double got, double expected,
                                   ShadowTolerance tolerance, std::string_view tolerance_of) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "largest difference %.6g at flat index %lld (got %.9g, expected %.9g; ", difference,
                static_cast<long long>(flat_index), got, expected);
  return std::string(buf) + "tolerance " + std::to_string(tolerance.atol) + " + " + std::to_string(tolerance.rtol) +
         " * |expected| for " + std::string(tolerance_of) + ")";
}

std::string shadow_mismatch_text(std::string_view op, size_t output, std::string_view what, std::string_view kernel) {
  return "[layoutguard] shadow: " + std::string(op) + " output " + std::to_string(output) +
         " differs from the result on contiguous inputs: " + std::string(what) + " (kernel " + std::string(kernel) +
         ")";
}

std::vector<Tensor> shadow_copies(std::span<const Tensor> inputs) {
  std::vector<Tensor> copies;
  copies.reserve(inputs.size());
  for (const Tensor& t : inputs) copies.push_back(t.defined() ? t.clone(MemoryFormat::Contiguous) : t);
  return copies;
}

void shadow_compare(const hooks::OpCall& call, const dispatch::detail::BodyRef& rerun, std::span<const Tensor> copies) {
  const std::vector<Tensor> reference = rerun(copies);
  if (reference.size() != call.outputs.size())
    mismatch(call, 0, INFINITY,
             std::to_string(call.outputs.size()) + " outputs vs " + std::to_string(reference.size()));
  for (size_t i = 0; i < reference.size(); ++i) {
    const Tensor& got = call.outputs[i];
    const Tensor& want = reference[i];
    if (got.defined() != want.defined()) mismatch(call, i, INFINITY, "defined vs undefined");
    if (!got.defined()) continue;
    if (got.sizes() != want.sizes() || got.dtype() != want.dtype())
      mismatch(call, i, INFINITY,
               "sizes/dtype " + to_string(got.sizes()) + " " + std::string(dtype_name(got.dtype())) +
                   " vs " + to_string(want.sizes()) + " " + std::string(dtype_name(want.dtype())));
    const Tensor a = as_cpu_float64(got), b = as_cpu_float64(want);
    const double* pa = a.data_ptr<double>();
    const double* pb = b.data_ptr<double>();
    const ShadowTolerance tol = shadow_tolerance(got.dtype());
    double worst = 0.0;
    int64_t worst_at = -1;
    for (int64_t k = 0; k < a.numel(); ++k) {
      if (std::isnan(pa[k]) && std::isnan(pb[k])) continue;
      const double diff = std::isnan(pa[k]) || std::isnan(pb[k]) ? INFINITY : std::fabs(pa[k] - pb[k]);
      if (diff > tol.atol + tol.rtol * std::fabs(pb[k]) && (worst_at < 0 || diff > worst)) {
        worst = diff;
        worst_at = k;
      }
    }
    if (worst_at >= 0)
      mismatch(call, i, worst,
               shadow_difference_text(worst, worst_at, pa[worst_at], pb[worst_at], tol, dtype_name(got.dtype())));
  }
}

}  // namespace lg::guard::detail
