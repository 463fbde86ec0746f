// The guard's loss spans (warn and record mode, spans=1): each loss followed through the data
// flow while the run goes on, summed per lost site. Internal to src/guard.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <layoutguard/hooks.h>
#include <layoutguard/report.h>

namespace lg::guard::detail {

// Follows one checked call of the calling thread. Every call passes the bytes it converted
// between layouts; a depth-0 call that is a loss (`lost`: a violation, or an expected loss
// with `expected_reason`) opens or extends its site's span, and a depth-0 call reading the
// NCHW output of a span becomes one of its steps.
void follow_call(const hooks::OpCall& call, int64_t converted_bytes, bool lost, std::string_view expected_reason);

// The spans so far (all threads), and how many losses came from sites beyond the followed ones.
std::vector<LossSpanRecord> span_records(int64_t& sites_not_followed);
// Forgets them; each thread drops its map of span tensors at its next call.
void clear_span_records();

}  // namespace lg::guard::detail
