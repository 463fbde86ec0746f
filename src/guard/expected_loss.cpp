// ExpectedLoss: the calling thread's live expected-loss scopes, asked by the guard before a
// finding becomes a violation.
#include <layoutguard/error.h>
#include <layoutguard/guard.h>

#include "core/printable_text.h"
#include "guard/op_name.h"
#include "guard/records.h"
#include "guard/runtime.h"

namespace lg::guard {
namespace {

// Newest live scope of this thread; trivially destructible for the reason tally.cpp gives.
thread_local ExpectedLoss* live_head = nullptr;

}  // namespace

ExpectedLoss::ExpectedLoss(std::string reason, std::string op)
    : reason_(std::move(reason)), op_(std::move(op)), outer_(live_head), head_(&live_head) {
  // The reason is what the report shows in place of the violation: an empty one would leave
  // the loss unexplained.
  LG_CHECK(!reason_.empty(), "[ExpectedLoss] received an empty reason; required: why the loss is expected "
                             "(e.g. \"no NHWC kernel for upsample_bicubic2d\")");
  LG_CHECK(op_.empty() || is_op_name(op_), "[ExpectedLoss] received op '", lg::detail::printable_text(op_),
           "'; required: an op name (e.g. upsample_bicubic2d, mylib::resize) or empty for any op");
  live_head = this;
}

ExpectedLoss::~ExpectedLoss() {
  LG_CHECK(head_ == &live_head, "[ExpectedLoss] destroyed on another thread than the one that made it; "
                                "an expected loss covers one thread's ops and must end there");
  for (ExpectedLoss** link = &live_head; *link != nullptr; link = &(*link)->outer_) {
    if (*link == this) {
      *link = outer_;
      break;
    }
  }
  // Only a collecting guard saw every op of the scope; off and throw mode keep no report.
  // A destructor cannot raise: a broken environment was reported at the first op, and an
  // allocation failure here only loses the unused-scope note.
  if (count_ == 0) {
    try {
      const Mode mode = detail::current_mode();
      if (mode == Mode::Warn || mode == Mode::Record) detail::record_unused_expectation(reason_, op_);
    } catch (...) {
    }
  }
}

const ExpectedLoss* ExpectedLoss::innermost_for(std::string_view op) {
  for (ExpectedLoss* e = live_head; e != nullptr; e = e->outer_)
    if (e->op_.empty() || e->op_ == op) return e;
  return nullptr;
}

const ExpectedLoss* internal::take_expected_loss(std::string_view op) {
  for (ExpectedLoss* e = live_head; e != nullptr; e = e->outer_)
    if (e->op_.empty() || e->op_ == op) {
      ++e->count_;
      return e;
    }
  return nullptr;
}

}  // namespace lg::guard
