// The two renderings of a Report: JSON (report=FILE) and the exit summary table (summary=1).
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include <layoutguard/config.h>
#include <layoutguard/guard.h>
#include <layoutguard/report.h>

#include "core/atomic_file.h"
#include "core/json_text.h"
#include "core/printable_text.h"

namespace lg::guard {
namespace {

nlohmann::json operand_json(const OperandLayout& o) {
  nlohmann::json j{{"role", o.role}, {"index", o.index}, {"defined", o.defined}};
  if (!o.defined) return j;
  j["dtype"] = dtype_name(o.dtype);
  j["device"] = o.device.str();
  j["sizes"] = o.sizes;
  j["strides"] = o.strides;
  j["storage_offset"] = o.storage_offset;
  j["dim_order"] = o.dim_order;
  j["format"] = o.format;
  return j;
}


nlohmann::json steps_json(const std::vector<SpanStep>& steps) {
  nlohmann::json j = nlohmann::json::array();
  for (const SpanStep& s : steps) j.push_back({{"op", s.op}, {"module", s.module_path}, {"count", s.count}});
  return j;
}

std::string where(const std::string& op, const std::string& module_path) {
  return op + " @ " + (module_path.empty() ? std::string("(no module)") : lg::detail::printable_text(module_path));
}

// "add @ layer1.0 (x20), relu @ layer1.0 (x20)": a span's steps on one line.
std::string steps_text(const std::vector<SpanStep>& steps) {
  std::string out;
  for (const SpanStep& s : steps)
    out += (out.empty() ? "" : ", ") + where(s.op, s.module_path) + " (x" + std::to_string(s.count) + ")";
  return out;
}

std::string formats(const std::vector<OperandLayout>& list) {
  std::string out;
  for (const OperandLayout& o : list) out += (out.empty() ? "" : ",") + (o.defined ? o.format : "undefined");
  return out;
}

}  // namespace

std::string human_bytes(int64_t bytes) {
  char buf[32];
  if (bytes >= (int64_t{1} << 20))
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  else if (bytes >= 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024);
  else
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  return buf;
}

std::string suppression_line(const SuppressionUse& u) {
  const std::string op = u.signature_glob.empty() ? u.op : u.op + "[" + u.signature_glob + "]";
  return (u.module_glob.empty() ? op : op + ":" + u.module_glob) + (u.frame_glob.empty() ? "" : "@" + u.frame_glob);
}

std::string report_json(const Report& r) {
  nlohmann::json j;
  j["layoutguard_version"] = LG_VERSION;
  j["checked_calls"] = r.checked_calls;
  j["violation_count"] = r.violation_count();
  j["conversion_bytes"] = r.conversion_bytes();
  j["violations"] = nlohmann::json::array();
  for (const ViolationRecord& v : r.violations) {
    const ViolationInfo& f = v.first;
    nlohmann::json ins = nlohmann::json::array(), outs = nlohmann::json::array();
    for (const OperandLayout& o : f.inputs) ins.push_back(operand_json(o));
    for (const OperandLayout& o : f.outputs) outs.push_back(operand_json(o));
    j["violations"].push_back({{"op", f.op},
                               {"module", f.module_path},
                               {"policy", layout_policy_name(f.policy)},
                               {"lost", memory_format_name(f.lost)},
                               {"rule", f.rule},
                               {"kernel", f.kernel},
                               {"depth", f.depth},
                               {"count", v.count},
                               {"formats_in", formats(f.inputs)},
                               {"formats_out", formats(f.outputs)},
                               {"signature", f.signature},
                               {"inputs", ins},
                               {"outputs", outs},
                               {"call_site", f.call_site},
                               {"first_backtrace", f.backtrace}});
    // The PyTorch bridge's facts, present only when known (the native guard never sets them).
    nlohmann::json& added = j["violations"].back();
    if (!f.root_cause.empty()) added["root_cause"] = f.root_cause;
    if (!f.autograd_node.empty()) added["autograd_node"] = f.autograd_node;
    if (!f.forward_call.empty()) added["forward_call"] = f.forward_call;
    if (!f.source_location.empty()) added["source_location"] = f.source_location;
    if (f.element) added["element"] = *f.element;
  }
  j["conversions"] = nlohmann::json::array();
  for (const ConversionRecord& c : r.conversions)
    j["conversions"].push_back({{"op", c.op}, {"module", c.module_path}, {"from", c.from},
                                {"to", c.to}, {"count", c.count}, {"bytes", c.bytes}});
  j["expected_losses"] = nlohmann::json::array();
  for (const ExpectedLossRecord& e : r.expected_losses)
    j["expected_losses"].push_back({{"reason", e.reason}, {"op", e.op}, {"module", e.module_path}, {"count", e.count}});
  j["unused_expectations"] = nlohmann::json::array();
  for (const UnusedExpectation& u : r.unused_expectations)
    j["unused_expectations"].push_back({{"reason", u.reason}, {"op", u.op}, {"scopes", u.scopes}});
  j["unmatched_allow"] = r.unmatched_allow;
  j["suppressions"] = nlohmann::json::array();
  for (const SuppressionUse& u : r.suppressions)
    j["suppressions"].push_back(
        {{"op", u.op}, {"module", u.module_glob}, {"function", u.frame_glob}, {"signature", u.signature_glob},
         {"suppressed", u.suppressed}});
  j["loss_spans"] = nlohmann::json::array();
  for (const LossSpanRecord& s : r.loss_spans)
    j["loss_spans"].push_back({{"op", s.op},
                               {"module", s.module_path},
                               {"expected_loss", s.expected_loss},
                               {"losses", s.losses},
                               {"nchw_ops", steps_json(s.nchw_ops)},
                               {"restored_at", steps_json(s.restored_at)},
                               {"left_at", steps_json(s.left_at)},
                               {"steps_not_listed", s.steps_not_listed},
                               {"nchw_output_bytes", s.nchw_output_bytes},
                               {"conversion_bytes", s.conversion_bytes}});
  j["span_sites_not_followed"] = r.span_sites_not_followed;
  j["unconverted_weights"] = nlohmann::json::array();
  for (const UnconvertedWeightRecord& w : r.unconverted_weights)
    j["unconverted_weights"].push_back({{"op", w.op},
                                        {"module", w.module_path},
                                        {"weight_format", w.weight_format},
                                        {"count", w.count},
                                        {"weight_bytes", w.weight_bytes}});
  j["ops"] = nlohmann::json::array();
  for (const OpStats& o : r.ops)
    j["ops"].push_back({{"op", o.op}, {"calls", o.calls}, {"violations", o.violations},
                        {"conversions", o.conversions}, {"conversion_bytes", o.conversion_bytes}});
  return lg::detail::json_text(j, 2) + "\n";
}

std::string summary_text(const Report& r) {
  std::string out = "[layoutguard] summary: " + std::to_string(r.checked_calls) + " checked calls, " +
                    std::to_string(r.violation_count()) + " violations (" +
                    std::to_string(r.violations.size()) + " distinct), " +
                    human_bytes(r.conversion_bytes()) + " converted between layouts\n";
  // The op column fits the longest name (ATen's run past 28: aten::native_group_norm_backward).
  int width = 28;
  for (const OpStats& o : r.ops) width = std::max(width, static_cast<int>(std::min<size_t>(o.op.size(), 120)));
  char line[256];
  std::snprintf(line, sizeof line, "  %-*s %10s %10s %11s %12s\n", width, "op", "calls", "violations",
                "conversions", "converted");
  out += line;
  for (const OpStats& o : r.ops) {
    std::snprintf(line, sizeof line, "  %-*s %10lld %10lld %11lld %12s\n", width, o.op.c_str(),
                  static_cast<long long>(o.calls), static_cast<long long>(o.violations),
                  static_cast<long long>(o.conversions), human_bytes(o.conversion_bytes).c_str());
    out += line;
  }
  // Where, as the record keys it: records of one op and module differ by their line (a
  // foreign program's) or call site, and would otherwise print as the same line.
  for (const ViolationRecord& v : r.violations) {
    const ViolationInfo& f = v.first;
    const std::string place = !f.source_location.empty() ? " at " + f.source_location
                              : !f.call_site.empty()     ? " in " + f.call_site
                                                         : std::string();
    out += "  violation: " + where(f.op, f.module_path) + ": " + formats(f.inputs) + " -> " + formats(f.outputs) +
           " (x" + std::to_string(v.count) + ")" + place + "\n";
  }
  for (const LossSpanRecord& s : r.loss_spans) {
    out += "  span: " + where(s.op, s.module_path) + " lost channels_last" +
           (s.expected_loss.empty() ? "" : " (expected: " + s.expected_loss + ")") + " x" + std::to_string(s.losses) +
           "; " + human_bytes(s.nchw_output_bytes) + " of NCHW outputs, " + human_bytes(s.conversion_bytes) +
           " converted\n";
    out += "    then NCHW: " + (s.nchw_ops.empty() ? std::string("(no op)") : steps_text(s.nchw_ops)) + "\n";
    if (!s.restored_at.empty()) out += "    channels_last again at: " + steps_text(s.restored_at) + "\n";
    if (!s.left_at.empty()) out += "    left 4-D/5-D at: " + steps_text(s.left_at) + "\n";
    if (s.restored_at.empty() && s.left_at.empty())
      out += "    not channels_last again: no later op read it back into channels_last (the run's output?)\n";
    if (s.steps_not_listed > 0)
      out += "    (" + std::to_string(s.steps_not_listed) + " more calls at steps beyond the 64 listed)\n";
  }
  for (const UnconvertedWeightRecord& w : r.unconverted_weights)
    out += "  weight not converted: " + where(w.op, w.module_path) + " (x" + std::to_string(w.count) +
           "): channels_last input, " + w.weight_format + " weight of " + human_bytes(w.weight_bytes) +
           "; convert it once (convert_conv2d_weight_memory_format, Module::to(channels_last)): on CUDA it is "
           "converted at every call\n";
  if (r.span_sites_not_followed > 0)
    out += "  spans: " + std::to_string(r.span_sites_not_followed) + " losses at sites beyond the 256 followed\n";
  for (const ExpectedLossRecord& e : r.expected_losses)
    out += "  expected loss: " + where(e.op, e.module_path) + " (x" + std::to_string(e.count) + "): " + e.reason + "\n";
  for (const SuppressionUse& u : r.suppressions)
    out += (u.suppressed > 0 ? "  suppressed: " : "  unused suppression: ") + suppression_line(u) +
           (u.suppressed > 0 ? " (x" + std::to_string(u.suppressed) + ")" : " (matched no loss; remove it?)") + "\n";
  for (const std::string& name : r.unmatched_allow)
    out += "  allow=" + name + " names no op checked in this run (misspelt? it silences nothing)\n";
  for (const UnusedExpectation& u : r.unused_expectations)
    out += "  unused expected loss" + (u.op.empty() ? std::string() : " of " + u.op) + " (" +
           std::to_string(u.scopes) + " scope" + (u.scopes == 1 ? "" : "s") + " took no loss; remove it?): " +
           u.reason + "\n";
  return out;
}

void write_report(const std::string& path) {
  LG_CHECK(!path.empty(), "[guard::write_report] received an empty path; required a file name");
  detail::replace_file("guard::write_report", "the JSON report", path, report_json(report()));
}

}  // namespace lg::guard
