// The run's violations as a suppressions file: the baseline of a ratchet
// (LAYOUTGUARD_OPTIONS=write_suppressions=FILE at exit, `layoutguard audit --write-suppressions`).
#include <fstream>
#include <set>

#include <layoutguard/error.h>
#include <layoutguard/guard.h>
#include <layoutguard/report.h>

namespace lg::guard {
namespace {

// A suppressions glob that matches `text` itself: globs have no escape, so '*' becomes '?',
// which matches it (and, rarely, another character in its place); a '?' already matches itself.
std::string exact_glob(std::string text) {
  for (char& c : text)
    if (c == '*') c = '?';
  return text;
}

}  // namespace

std::vector<std::string> baseline_lines(const Report& r) {
  std::set<std::string> lines;
  for (const ViolationRecord& v : r.violations) {
    const ViolationInfo& f = v.first;
    if (!f.module_path.empty()) lines.insert(f.op + ":" + exact_glob(f.module_path));
    else if (!f.call_site.empty()) lines.insert(f.op + ":" + std::string(kTopLevelModule) + "@" + exact_glob(f.call_site));
    else lines.insert(f.op + ":" + std::string(kTopLevelModule));
  }
  for (const SuppressionUse& u : r.suppressions)
    if (u.suppressed > 0) lines.insert(suppression_line(u));
  return {lines.begin(), lines.end()};
}

size_t write_baseline(const std::string& path, const std::string& written_by) {
  LG_CHECK(!path.empty(), "[guard::write_baseline] received an empty path; required a file name");
  const std::vector<std::string> lines = baseline_lines(report());
  std::ofstream f(path, std::ios::trunc);
  f << "# Known layout losses, written by: " << written_by << "\n"
    << "# Use as LAYOUTGUARD_OPTIONS=suppressions=" << path << " so that only new losses are reported.\n";
  for (const std::string& line : lines) f << line << "\n";
  f.flush();
  if (!f)
    throw Error("[guard::write_baseline] cannot write the suppressions baseline to '" + path +
                "'; required a writable file path (LAYOUTGUARD_OPTIONS write_suppressions=)");
  return lines.size();
}

}  // namespace lg::guard
