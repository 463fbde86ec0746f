// The guard's side of ConversionTally (guard.h): whether the calling thread has a live tally,
// and handing one conversion to each. Internal to src/guard.
#pragma once

#include <layoutguard/guard.h>

namespace lg::guard::detail {

bool tallying();
// internal::tally_conversion(one), declared in guard.h (ConversionTally befriends it), hands
// one conversion to each.

}  // namespace lg::guard::detail
