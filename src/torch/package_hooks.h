// What the Python package set through lg::torch::set_locator, set_raiser and
// set_call_site_finder (interceptor.cpp
// keeps them), for the bridge's own checks outside an intercepted call: how a report finds the
// user's line, and how throw mode raises. Apart from intercepted_call.h: with lg::torch in view,
// ATen's dispatch macros, which name ::torch unqualified, resolve to it inside lg.
#pragma once

#include <layoutguard/torch.h>

namespace lg::torch_bridge {

// Until the Python package is imported: a C++ program's locator (native_call_site.h), and no
// raiser (lg::LayoutViolation is thrown as it is).
torch::Locator current_locator();
torch::Raiser current_raiser();
// The C++ stack's (native_call_site.h) until the Python package sets its own.
torch::CallSiteFinder current_call_site_finder();

}  // namespace lg::torch_bridge
