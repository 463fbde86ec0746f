// The guard's side of ConversionTally (guard.h): whether the calling thread has a live tally,
// and handing one conversion to each; and the conversion rule on bare geometry, which the
// PyTorch bridge applies to torch tensors before it builds stand-ins. Internal.
#pragma once

#include <layoutguard/guard.h>

namespace lg::guard::detail {

bool tallying();

// is_layout_conversion (guard.h) on the sizes and strides of dst and src.
bool is_layout_conversion(IntArrayRef dst_sizes, IntArrayRef dst_strides, IntArrayRef src_sizes,
                          IntArrayRef src_strides);
// internal::tally_conversion(one), declared in guard.h (ConversionTally befriends it), hands
// one conversion to each.

}  // namespace lg::guard::detail
