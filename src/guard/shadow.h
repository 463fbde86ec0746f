// shadow=1: re-run a checked op on contiguous copies of its inputs and compare the results.
// Internal to src/guard.
#pragma once

#include <layoutguard/hooks.h>

#include "dispatch/dispatcher.h"

namespace lg::guard::detail {

// Throws ShadowMismatch when an output of `call` differs from rerun(contiguous copies of the
// inputs) beyond the tolerance of its dtype, or has other sizes or dtype.
void shadow_compare(const hooks::OpCall& call, const dispatch::detail::BodyRef& rerun);

}  // namespace lg::guard::detail
