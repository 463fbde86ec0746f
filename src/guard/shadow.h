// shadow=1: re-run a checked op on contiguous copies of its inputs and compare the results.
// Internal to src/guard.
#pragma once

#include <span>
#include <vector>

#include <layoutguard/hooks.h>

#include "dispatch/dispatcher.h"

namespace lg::guard::detail {

// Contiguous copies of an op's inputs, taken before it runs (clone, not contiguous(): the
// rerun of an in-place op must write into copies, never into the caller's tensors).
std::vector<Tensor> shadow_copies(std::span<const Tensor> inputs);

// Throws ShadowMismatch when an output of `call` differs from rerun(copies), the copies
// shadow_copies took of its inputs, beyond the tolerance of its dtype, or has other sizes or
// dtype.
void shadow_compare(const hooks::OpCall& call, const dispatch::detail::BodyRef& rerun, std::span<const Tensor> copies);

}  // namespace lg::guard::detail
