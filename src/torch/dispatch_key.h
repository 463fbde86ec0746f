// The dispatch key the bridge puts its kernels on, included per thread by enable().
#pragma once

#include <c10/core/DispatchKey.h>
#include <c10/core/DispatchKeySet.h>

namespace lg::torch_bridge {

// A key stock PyTorch leaves free, above autograd and autocast, so that the bridge sees the
// user's call first. Its name says "testing only": it is not a stable API, which is why the
// bridge is built against, and refuses to load into, one torch version only.
constexpr c10::DispatchKey kKey = c10::DispatchKey::TESTING_ONLY_GenericMode;

// Option forward_calls: the key on which the calls that pass kKey by (views and in-place ops,
// which make autograd nodes too) note where the user made them. The free key next below kKey,
// still above autograd; included per thread only while the option is on (passing_calls.h).
constexpr c10::DispatchKey kPassingKey = c10::DispatchKey::TESTING_ONLY_GenericWrapper;

// The keys a call runs through after the bridge's.
inline c10::DispatchKeySet keys_below(c10::DispatchKeySet keys) {
  static const c10::DispatchKeySet kBelow(c10::DispatchKeySet::FULL_AFTER, kKey);
  return keys & kBelow;
}

}  // namespace lg::torch_bridge
