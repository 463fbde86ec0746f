// shadow=1: re-run a checked op on contiguous copies of its inputs and compare the results.
// The tolerances and the mismatch's text are shared with the PyTorch bridge, which compares
// ATen results with ATen's own ops. Internal to src/guard and src/torch.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <layoutguard/hooks.h>

#include "dispatch/dispatcher.h"

namespace lg::guard::detail {

// An output element agrees when |got - expected| <= atol + rtol * |expected|: loose enough for
// a different summation order, tight enough for a wrong index.
struct ShadowTolerance {
  double atol, rtol;
};
// Integers and bool compare exactly ({0, 0}).
ShadowTolerance shadow_tolerance(DType dt);

// "largest difference 3 at flat index 7 (got 1, expected 4; tolerance 1e-05 + 0.0001 *
// |expected| for float32)": `tolerance_of` names what the tolerance is that of.
std::string shadow_difference_text(double difference, int64_t flat_index, double got, double expected,
                                   ShadowTolerance tolerance, std::string_view tolerance_of);

// The first line of a ShadowMismatch: "[layoutguard] shadow: OP output N differs from the
// result on contiguous inputs: WHAT (kernel KERNEL)".
std::string shadow_mismatch_text(std::string_view op, size_t output, std::string_view what, std::string_view kernel);

// Contiguous copies of an op's inputs, taken before it runs (clone, not contiguous(): the
// rerun of an in-place op must write into copies, never into the caller's tensors).
std::vector<Tensor> shadow_copies(std::span<const Tensor> inputs);

// Throws ShadowMismatch when an output of `call` differs from rerun(copies), the copies
// shadow_copies took of its inputs, beyond the tolerance of its dtype, or has other sizes or
// dtype.
void shadow_compare(const hooks::OpCall& call, const dispatch::detail::BodyRef& rerun, std::span<const Tensor> copies);

}  // namespace lg::guard::detail
