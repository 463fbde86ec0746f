// ConversionTally: the calling thread's live tallies, fed by the guard's conversion check.
#include "guard/tally.h"

#include <algorithm>

namespace lg::guard {
namespace {

thread_local std::vector<ConversionTally*> live_tallies;

}  // namespace

ConversionTally::ConversionTally() { live_tallies.push_back(this); }

ConversionTally::~ConversionTally() {
  // Tallies die in reverse order of creation unless moved into other owners; erase by identity.
  live_tallies.erase(std::remove(live_tallies.begin(), live_tallies.end(), this), live_tallies.end());
}

int64_t ConversionTally::bytes() const {
  int64_t total = 0;
  for (const ConversionRecord& r : records_) total += r.bytes;
  return total;
}

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

bool detail::tallying() { return !live_tallies.empty(); }

void internal::tally_conversion(const ConversionRecord& one) {
  for (ConversionTally* t : live_tallies) t->add(one);
}

}  // namespace lg::guard
