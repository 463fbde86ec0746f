// `layoutguard ops [--markdown]`: the operator catalogue as a text table, or as the whole of
// docs/operators.md (tests/tools/check_cli.sh keeps the two identical).
#pragma once

#include <iosfwd>

namespace lg::tools {

void print_ops_table(std::ostream& out);
void print_ops_markdown(std::ostream& out);

}  // namespace lg::tools
