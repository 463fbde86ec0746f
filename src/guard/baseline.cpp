// The run's violations as a suppressions file: the baseline of a ratchet
// (LAYOUTGUARD_OPTIONS=write_suppressions=FILE at exit, `layoutguard audit --write-suppressions`).
#include <set>
#include <sstream>

#include <layoutguard/error.h>
#include <layoutguard/guard.h>
#include <layoutguard/report.h>

#include "core/atomic_file.h"
#include "core/printable_text.h"

namespace lg::guard {
namespace {

// A suppressions glob that matches `text` itself: globs have no escape, so '*' becomes '?',
// which matches it (and, rarely, another character in its place); a '?' already matches itself.
// So do '#', which would start a comment in the file (a lambda's "{lambda()#1}"), and '@',
// which would start the function glob (a ModuleDict key "cls@2"), and control characters: a
// line break in a module's name would end the line.
std::string exact_glob(std::string text) {
  for (char& c : text)
    if (c == '*' || c == '#' || c == '@' || lg::detail::is_control_byte(c)) c = '?';
  return text;
}

// op (with the given text after it, such as "[signature]") and where the loss happened.
std::string line_at(const ViolationInfo& v, const std::string& op) {
  if (!v.module_path.empty()) return op + ":" + exact_glob(v.module_path);
  const std::string top = op + ":" + std::string(kTopLevelModule);
  return v.call_site.empty() ? top : top + "@" + exact_glob(v.call_site);
}

}  // namespace

std::string suppression_line_for(const ViolationInfo& v) { return line_at(v, v.op); }

std::string signature_suppression_line_for(const ViolationInfo& v) {
  return line_at(v, v.op + "[" + exact_glob(v.signature) + "]");
}

std::vector<std::string> baseline_lines(const Report& r) {
  std::set<std::string> lines;
  for (const ViolationRecord& v : r.violations) lines.insert(suppression_line_for(v.first));
  for (const SuppressionUse& u : r.suppressions)
    if (u.suppressed > 0) lines.insert(suppression_line(u));
  return {lines.begin(), lines.end()};
}

size_t write_baseline(const std::string& path, const std::string& written_by) {
  LG_CHECK(!path.empty(), "[guard::write_baseline] received an empty path; required a file name");
  const std::vector<std::string> lines = baseline_lines(report());
  std::ostringstream f;
  // Control bytes shown escaped: a line break in a command line or path would end the comment
  // and turn the rest into a suppression line nobody wrote.
  f << "# Known layout losses, written by: " << lg::detail::printable_text(written_by) << "\n"
    << "# Use as LAYOUTGUARD_OPTIONS=suppressions=" << lg::detail::printable_text(path)
    << " so that only new losses are reported.\n";
  for (const std::string& line : lines) f << line << "\n";
  // The old baseline stays whole unless the new one is written whole (core/atomic_file.h).
  detail::replace_file("guard::write_baseline", "the suppressions baseline", path, f.str());
  return lines.size();
}

}  // namespace lg::guard
