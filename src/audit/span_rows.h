// Shared by the span renderings. Internal to src/audit.
#pragma once

#include <vector>

#include <layoutguard/audit.h>

namespace lg::audit::detail {

// lg::Error naming `who` unless every row number of the spans is below rows.size(): spans
// name rows by index and must come from these rows.
void check_span_rows(const std::vector<LossSpan>& spans, const std::vector<Row>& rows, const char* who);

}  // namespace lg::audit::detail
