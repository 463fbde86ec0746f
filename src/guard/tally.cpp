// What a layout conversion is, and ConversionTally: the calling thread's live tallies, fed by
// the guard's conversion check.
#include "guard/tally.h"

#include "guard/records.h"

#include <algorithm>
#include <string>

#include <layoutguard/error.h>

namespace lg::guard {
namespace {

// Newest live tally of this thread (a trivially destructible thread_local: a static or
// thread_local tally may outlive every non-trivial thread_local of this file).
thread_local ConversionTally* live_head = nullptr;

}  // namespace

ConversionTally::ConversionTally() : outer_(live_head), head_(&live_head) { live_head = this; }

ConversionTally::~ConversionTally() {
  LG_CHECK(head_ == &live_head, "[ConversionTally] destroyed on another thread than the one that made it; "
                                "a tally counts one thread's conversions and must die there");
  // Newest first, as scopes end; a tally kept on the heap may end out of order, so unlink it
  // wherever it is.
  for (ConversionTally** link = &live_head; *link != nullptr; link = &(*link)->outer_) {
    if (*link == this) {
      *link = outer_;
      return;
    }
  }
}

int64_t ConversionTally::bytes() const { return detail::conversion_bytes(records_); }

int64_t ConversionTally::count() const {
  int64_t total = 0;
  for (const ConversionRecord& r : records_) total += r.count;
  return total;
}

std::vector<ConversionRecord> ConversionTally::records() const {
  std::vector<ConversionRecord> out = records_;
  std::stable_sort(out.begin(), out.end(),
                   [](const ConversionRecord& a, const ConversionRecord& b) { return a.bytes > b.bytes; });
  return out;
}

void ConversionTally::add(const ConversionRecord& one) {
  for (ConversionRecord& r : records_) {
    if (r.op == one.op && r.module_path == one.module_path && r.from == one.from && r.to == one.to) {
      r.count += one.count;
      r.bytes += one.bytes;
      return;
    }
  }
  records_.push_back(one);
}

namespace {

// The dim order (outermost first) of t's dims of size > 1.
std::string order_of_sized_dims(const Tensor& t) {
  std::string order;
  for (char d : t.dim_order())
    if (t.size(d - 'a') > 1) order += d;
  return order;
}

}  // namespace

bool is_layout_conversion(const Tensor& dst, const Tensor& src) {
  return dst.defined() && src.defined() && dst.numel() >= 2 && dst.sizes() == src.sizes() &&
         order_of_sized_dims(dst) != order_of_sized_dims(src);
}

bool detail::tallying() { return live_head != nullptr; }

void internal::tally_conversion(const ConversionRecord& one) {
  for (ConversionTally* t = live_head; t != nullptr; t = t->outer_) t->add(one);
}

}  // namespace lg::guard
