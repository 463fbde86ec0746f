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

// The dim order (outermost first) of the dims of size > 1.
std::string order_of_sized_dims(IntArrayRef sizes, IntArrayRef strides) {
  std::string order;
  for (char d : layout::dim_order(sizes, strides))
    if (sizes[d - 'a'] > 1) order += d;
  return order;
}

}  // namespace

bool detail::is_layout_conversion(IntArrayRef dst_sizes, IntArrayRef dst_strides, IntArrayRef src_sizes,
                                  IntArrayRef src_strides) {
  if (!std::ranges::equal(dst_sizes, src_sizes)) return false;
  // At least two elements: no size 0, and one size > 1.
  if (std::ranges::find(dst_sizes, 0) != dst_sizes.end() ||
      std::ranges::none_of(dst_sizes, [](int64_t n) { return n > 1; }))
    return false;
  return order_of_sized_dims(dst_sizes, dst_strides) != order_of_sized_dims(src_sizes, src_strides);
}

bool is_layout_conversion(const Tensor& dst, const Tensor& src) {
  return dst.defined() && src.defined() &&
         detail::is_layout_conversion(dst.sizes(), dst.strides(), src.sizes(), src.strides());
}

bool detail::tallying() { return live_head != nullptr; }

void internal::tally_conversion(const ConversionRecord& one) {
  for (ConversionTally* t = live_head; t != nullptr; t = t->outer_) t->add(one);
}

}  // namespace lg::guard
