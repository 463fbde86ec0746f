// The flow's renderings that are not about spans: the per-op table, JSON and Graphviz.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include <layoutguard/audit.h>

#include "audit/span_rows.h"
#include "core/json_text.h"

namespace lg::audit {

using guard::human_bytes;


namespace {

std::string module_label(const std::string& module) {
  return module.empty() ? std::string(guard::kTopLevelModule) : module;
}

// Quotes for a DOT label: module paths and format names are plain, but a custom op's name
// is the user's.
std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string format_table(const std::vector<Row>& rows) {
  size_t w_op = 2, w_mod = 6, w_fmt = 12, w_k = 6;
  for (const Row& r : rows) {
    w_op = std::max(w_op, r.op.size());
    w_mod = std::max(w_mod, module_label(r.module).size());
    w_fmt = std::max(w_fmt, r.in.size() + r.out.size() + 4);
    w_k = std::max(w_k, r.kernel.size());
  }
  auto pad = [](const std::string& s, size_t w) { return s + std::string(w > s.size() ? w - s.size() : 0, ' '); };
  std::ostringstream s;
  s << "  #  " << pad("op", w_op) << "  " << pad("module", w_mod) << "  " << pad("in -> out", w_fmt) << "  "
    << pad("kernel", w_k) << "  converted\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    char number[24];
    std::snprintf(number, sizeof number, "%3zu", i);
    s << (r.violation ? "!!" : r.expected_loss.empty() ? "  " : "ex") << number << " " << pad(r.op, w_op) << "  "
      << pad(module_label(r.module), w_mod) << "  " << pad(r.in + " -> " + r.out, w_fmt) << "  " << pad(r.kernel, w_k)
      << "  " << (r.conversion_bytes ? human_bytes(r.conversion_bytes) : "-") << "\n";
  }
  return s.str();
}

std::string format_unconverted_weights(const std::vector<Row>& rows) {
  constexpr size_t kListed = 12;
  std::vector<size_t> mixed;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].unconverted_weight) mixed.push_back(i);
  if (mixed.empty()) return "";
  std::ostringstream s;
  s << mixed.size() << " convolution" << (mixed.size() == 1 ? "" : "s")
    << " with channels_last input and a weight in another format (no violation: the output follows the "
       "input; the CPU kernels read either weight, cuDNN gets it converted on every call)\n";
  for (size_t k = 0; k < mixed.size() && k < kListed; ++k) {
    const Row& r = rows[mixed[k]];
    s << "  #" << mixed[k] << " " << r.op << " (" << module_label(r.module) << "): input " << r.in << ", weight "
      << r.weight << "\n";
  }
  if (mixed.size() > kListed) s << "  ... " << mixed.size() - kListed << " more\n";
  s << "  to convert the weights once: lg::nn::utils::convert_conv2d_weight_memory_format (conv3d: "
       "convert_conv3d_weight_memory_format) or Module::to(format)\n";
  return s.str();
}

std::string flow_json(const std::vector<Row>& rows, const std::vector<LossSpan>& spans) {
  detail::check_span_rows(spans, rows, "flow_json");
  nlohmann::json j;
  j["ops"] = nlohmann::json::array();
  for (const Row& r : rows)
    j["ops"].push_back({{"op", r.op}, {"module", r.module}, {"in", r.in}, {"out", r.out}, {"kernel", r.kernel},
                        {"conversion_bytes", r.conversion_bytes}, {"violation", r.violation},
                        {"expected_loss", r.expected_loss}, {"sources", r.sources}, {"weight", r.weight},
                        {"unconverted_weight", r.unconverted_weight}});
  j["loss_spans"] = nlohmann::json::array();
  for (const LossSpan& span : spans) {
    const Row& lost = rows[span.lost_at];
    j["loss_spans"].push_back({{"lost_at", span.lost_at},
                               {"op", lost.op},
                               {"module", lost.module},
                               {"expected_loss", lost.expected_loss},
                               {"nchw_ops", span.nchw_ops},
                               {"restored_at", span.restored_at},
                               {"left_at", span.left_at},
                               {"ends_in_nchw", span.ends_in_nchw},
                               {"nchw_output_bytes", span.nchw_output_bytes},
                               {"conversion_bytes", span.conversion_bytes}});
  }
  return lg::detail::json_text(j, 2) + "\n";
}

std::string flow_dot(const std::vector<Row>& rows, const std::string& title) {
  std::ostringstream f;
  f << "digraph layout_flow {\n  label=\"" << dot_escape(title)
    << "\";\n  rankdir=TB;\n  node [shape=box, style=filled, fontname=\"monospace\"];\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const char* fill = r.out_kind == OutputKind::ChannelsLast ? "#b8e6b8" : r.out_kind == OutputKind::Nchw ? "#ffd59a" : "#e0e0e0";
    f << "  n" << i << " [label=\"" << dot_escape(r.op) << "\\n" << dot_escape(module_label(r.module)) << "\\n"
      << r.in << " -> " << r.out << (r.conversion_bytes ? "\\nconverted " + human_bytes(r.conversion_bytes) : "")
      << (r.expected_loss.empty() ? "" : "\\nexpected: " + dot_escape(r.expected_loss)) << "\", fillcolor=\"" << fill
      << "\"" << (r.violation ? ", color=red, penwidth=3" : "") << "];\n";
    for (size_t s : r.sources) f << "  n" << s << " -> n" << i << ";\n";
  }
  f << "  legend [shape=note, fillcolor=white, label=\"green: channels_last output\\norange: NCHW (other 4-D/5-D) output\\n"
       "grey: other rank\\nred border: violation\"];\n}\n";
  return f.str();
}

}  // namespace lg::audit
