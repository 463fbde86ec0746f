// layoutguard audit: one forward pass under the guard (record mode) with a hook that keeps one
// row per user-level (depth-0) op call -- op, module path, input and output format, kernel, and
// the bytes of layout conversions the call caused (copy_ calls between dim orders inside it).
#include "audit_command.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "loss_spans.h"
#include "model_setup.h"

namespace lg::tools {
namespace {

using Clock = std::chrono::steady_clock;

// NHWC / NCHW (NDHWC / NCDHW) for 4-D and 5-D tensors, the full format name when it is neither,
// the rank otherwise.
std::string short_format(const Tensor& t) {
  if (!t.defined()) return "-";
  if (t.dim() != 4 && t.dim() != 5) return std::to_string(t.dim()) + "-D";
  const bool four = t.dim() == 4;
  switch (guard::classify(t)) {
    case guard::LayoutClass::ChannelsLast: return four ? "NHWC" : "NDHWC";
    case guard::LayoutClass::Ambiguous: return four ? "NHWC=NCHW" : "NDHWC=NCDHW";
    default: return t.is_contiguous() ? (four ? "NCHW" : "NCDHW") : layout::format_name(t.sizes(), t.strides());
  }
}

// The operand a row reports: the first 4-/5-D tensor, else the first one.
const Tensor* main_operand(std::span<const Tensor> ts) {
  for (const Tensor& t : ts)
    if (t.defined() && (t.dim() == 4 || t.dim() == 5)) return &t;
  return ts.empty() ? nullptr : &ts[0];
}

// What a row's main output is, for following a lost layout (loss_spans.h).
OutputKind output_kind(const Tensor* t) {
  if (t == nullptr || !t->defined() || (t->dim() != 4 && t->dim() != 5)) return OutputKind::Neither;
  switch (guard::classify(*t)) {
    case guard::LayoutClass::ChannelsLast: return OutputKind::ChannelsLast;
    case guard::LayoutClass::Other: return OutputKind::Nchw;
    default: return OutputKind::Neither;
  }
}

class Recorder {
 public:
  Recorder() : start_(Clock::now()) {}

  void operator()(const hooks::OpCall& call) {
    if (call.op == "copy_" && call.inputs.size() == 2 && guard::is_layout_conversion(call.inputs[0], call.inputs[1]))
      pending_bytes_ += int64_t(call.inputs[0].nbytes());
    if (call.depth != 0) return;
    AuditRow r;
    r.op = call.op;
    r.module = call.module_path;
    const Tensor* in = main_operand(call.inputs);
    const Tensor* out = main_operand(call.outputs);
    r.in = in ? short_format(*in) : "-";
    r.out = out ? short_format(*out) : "-";
    r.out_kind = output_kind(out);
    r.out_bytes = out && out->defined() ? int64_t(out->nbytes()) : 0;
    r.kernel = call.kernel.empty() ? "-" : std::string(call.kernel);
    r.conversion_bytes = pending_bytes_;
    pending_bytes_ = 0;
    if (guard::check_layout(call.op, call.policy, call.inputs, call.outputs, options_, call.module_path, call.depth)) {
      // The guard gives such a loss to the same scope (ExpectedLoss): not a violation.
      const guard::ExpectedLoss* expected = guard::ExpectedLoss::innermost_for(call.op);
      r.violation = expected == nullptr;
      if (expected) r.expected_loss = expected->reason();
    }
    for (const Tensor& t : call.inputs)
      if (const std::optional<size_t> p = producer(t)) r.sources.push_back(*p);
    for (const Tensor& t : call.outputs)
      if (t.defined()) producers_[t.impl_ptr().get()] = {t.impl_ptr(), rows_.size()};
    rows_.push_back(std::move(r));
    progress(call.module_path);
  }

  void finish_progress() {
    if (shown_) std::fprintf(stderr, "\r%-78s\r", "");
  }
  std::vector<AuditRow>& rows() { return rows_; }

 private:
  // The row that made t, if t is still the tensor that row made: a weak reference tells a
  // live tensor from a later one that reuses a freed one's address, without keeping every
  // activation of the run alive.
  std::optional<size_t> producer(const Tensor& t) const {
    if (!t.defined()) return std::nullopt;
    const auto it = producers_.find(t.impl_ptr().get());
    if (it == producers_.end() || it->second.impl.expired()) return std::nullopt;
    return it->second.row;
  }

  // A live line on a terminal once a run takes more than a second.
  void progress(std::string_view module) {
    if (!isatty(STDERR_FILENO)) return;
    const auto now = Clock::now();
    if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    shown_ = true;
    std::fprintf(stderr, "\r[audit] %zu ops, at %-50.50s", rows_.size(), std::string(module).c_str());
  }

  struct Producer {
    std::weak_ptr<detail::TensorImpl> impl;
    size_t row;
  };
  guard::Options options_ = guard::options();
  std::vector<AuditRow> rows_;
  int64_t pending_bytes_ = 0;
  std::unordered_map<const void*, Producer> producers_;
  Clock::time_point start_, last_{};
  bool shown_ = false;
};

void print_table(const std::vector<AuditRow>& rows) {
  size_t w_op = 2, w_mod = 6, w_fmt = 12, w_k = 6;
  for (const AuditRow& r : rows) {
    w_op = std::max(w_op, r.op.size());
    w_mod = std::max(w_mod, r.module.size());
    w_fmt = std::max(w_fmt, r.in.size() + r.out.size() + 4);
    w_k = std::max(w_k, r.kernel.size());
  }
  auto pad = [](const std::string& s, size_t w) { return s + std::string(w > s.size() ? w - s.size() : 0, ' '); };
  std::cout << "  #  " << pad("op", w_op) << "  " << pad("module", w_mod) << "  " << pad("in -> out", w_fmt) << "  "
            << pad("kernel", w_k) << "  converted\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const AuditRow& r = rows[i];
    std::cout << (r.violation ? "!!" : r.expected_loss.empty() ? "  " : "ex") << std::setw(3) << i << " " << pad(r.op, w_op) << "  "
              << pad(r.module.empty() ? "(top)" : r.module, w_mod) << "  " << pad(r.in + " -> " + r.out, w_fmt) << "  "
              << pad(r.kernel, w_k) << "  " << (r.conversion_bytes ? human_bytes(r.conversion_bytes) : "-") << "\n";
  }
}

void write_dot(const std::string& path, const std::vector<AuditRow>& rows, const std::string& title) {
  std::ofstream f(path);
  if (!f) throw ValueError("[layoutguard audit] --dot " + path + ": cannot open for writing");
  f << "digraph layout_flow {\n  label=\"" << title << "\";\n  rankdir=TB;\n  node [shape=box, style=filled, fontname=\"monospace\"];\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const AuditRow& r = rows[i];
    const bool cl = r.out.rfind("NHWC", 0) == 0 || r.out.rfind("NDHWC", 0) == 0;
    const bool nchw = r.out.rfind("NC", 0) == 0;
    const char* fill = cl ? "#b8e6b8" : nchw ? "#ffd59a" : "#e0e0e0";
    f << "  n" << i << " [label=\"" << r.op << "\\n" << (r.module.empty() ? "(top)" : r.module) << "\\n" << r.in
      << " -> " << r.out << (r.conversion_bytes ? "\\nconverted " + human_bytes(r.conversion_bytes) : "")
      << "\", fillcolor=\"" << fill << "\"" << (r.violation ? ", color=red, penwidth=3" : "") << "];\n";
    for (size_t s : r.sources) f << "  n" << s << " -> n" << i << ";\n";
  }
  f << "  legend [shape=note, fillcolor=white, label=\"green: channels_last output\\norange: NCHW output\\n"
       "grey: other rank\\nred border: violation\"];\n}\n";
  if (!f) throw ValueError("[layoutguard audit] --dot " + path + ": write failed");
}

// The run's violations as a suppressions file (op:module lines): the baseline of a ratchet.
// With it in LAYOUTGUARD_OPTIONS=suppressions=FILE, the losses known today stay quiet and only
// a new one fails the next audit or test run.
void write_suppressions(const std::string& path, const guard::Report& report, std::span<const std::string_view> args) {
  std::set<std::string> lines;
  for (const guard::ViolationRecord& v : report.violations) {
    const std::string& module = v.first.module_path;
    if (module.find_first_of("*?") != std::string::npos)
      throw ValueError("[layoutguard audit] --write-suppressions: module path '" + module +
                       "' holds a glob character ('*' or '?'), which a suppressions line cannot match exactly");
    lines.insert(v.first.op + ":" + (module.empty() ? std::string(guard::kTopLevelModule) : module));
  }
  std::ofstream f(path);
  f << "# Known layout losses, written by: layoutguard audit";
  for (std::string_view a : args) f << " " << a;
  f << "\n# Use as LAYOUTGUARD_OPTIONS=suppressions=" << path << " so that only new losses are reported.\n";
  for (const std::string& line : lines) f << line << "\n";
  if (!f) throw ValueError("[layoutguard audit] --write-suppressions " + path + ": cannot write");
  std::cout << "wrote " << lines.size() << " suppression" << (lines.size() == 1 ? "" : "s") << " to " << path << "\n";
}

}  // namespace

int audit_command(std::span<const std::string_view> args) {
  std::vector<std::string_view> allowed = kModelFlags;
  allowed.insert(allowed.end(), {"report", "dot", "max-conversion-bytes", "write-suppressions"});
  const Flags flags("audit", args, allowed);
  const ModelSetup setup = parse_model_setup(flags);
  const std::string report_path = flags.get("report", ""), dot_path = flags.get("dot", "");
  const std::string suppressions_out = flags.get("write-suppressions", "");
  // A copy budget: conversions that never change an output's format pass the layout check
  // (a contiguous() that the next conv undoes), so a run can be held to a number of converted
  // bytes as well. -1: no budget.
  const int64_t max_conversion_bytes =
      flags.integer("max-conversion-bytes", -1, 0, std::numeric_limits<int64_t>::max());

  std::shared_ptr<nn::Module> model = build_model(setup);
  const Tensor input = make_input(setup);
  std::cout << "layoutguard audit: " << setup.model << ", input " << to_string(input.sizes()) << " "
            << format_label(setup) << ", " << dtype_name(setup.dtype) << " on " << setup.device
            << ", weights " << (setup.weights.empty() ? "random" : setup.weights) << ", conversion "
            << (setup.format == MemoryFormat::Contiguous ? "none (contiguous run)" : setup.convert) << "\n\n";

  guard::Options options = guard::options();
  // A baseline lists what the run saw; violations that suppressions= or allow= silence are
  // never seen, so a baseline written under them would drop today's known losses.
  if (!suppressions_out.empty() && (!options.suppressions.empty() || !options.allow.empty()))
    throw ValueError("[layoutguard audit] --write-suppressions needs a run that sees every violation, but "
                     "LAYOUTGUARD_OPTIONS has " + std::string(options.suppressions.empty() ? "allow=" : "suppressions=") +
                     ", which hides some; unset it to write the baseline");
  options.mode = guard::Mode::Record;
  options.summary = false;  // this command prints its own summary
  // report= in LAYOUTGUARD_OPTIONS naming the file of --report would overwrite the audit's
  // report (a superset: it embeds the guard's under "guard") at exit.
  if (!report_path.empty() && !options.report_path.empty()) {
    std::error_code e1, e2;
    const auto guard_file = std::filesystem::weakly_canonical(options.report_path, e1);
    const auto audit_file = std::filesystem::weakly_canonical(report_path, e2);
    if (e1 || e2 ? options.report_path == report_path : guard_file == audit_file) options.report_path.clear();
  }
  guard::set_options(options);
  guard::clear_report();
  Recorder recorder;
  const auto t0 = Clock::now();
  {
    hooks::ScopedHook hook([&](const hooks::OpCall& call) { recorder(call); });
    (*model)(input);
    if (setup.device.is_cuda()) cuda::synchronize();
  }
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  recorder.finish_progress();
  const guard::Report report = guard::report();

  print_table(recorder.rows());
  if (!report.violations.empty()) {
    std::cout << "\nviolations\n";
    for (const guard::ViolationRecord& v : report.violations)
      std::cout << "\n" << lg::format_violation(v.first) << (v.count > 1 ? "\n(seen " + std::to_string(v.count) + " times)" : "")
                << "\n";
  }
  const std::vector<LossSpan> spans = find_loss_spans(recorder.rows());
  if (!spans.empty()) std::cout << "\n" << format_loss_spans(spans, recorder.rows());
  if (!report.expected_losses.empty()) {
    std::cout << "\nexpected losses (ExpectedLoss scopes; not violations)\n";
    for (const guard::ExpectedLossRecord& e : report.expected_losses)
      std::cout << "  " << e.op << (e.module_path.empty() ? "" : " in " + e.module_path) << ", " << e.count
                << "x: " << e.reason << "\n";
  }
  int64_t conversions = 0;
  for (const guard::ConversionRecord& c : report.conversions) conversions += c.count;
  std::cout << "\ntotals: " << recorder.rows().size() << " ops, " << report.violation_count() << " violations ("
            << report.violations.size() << " distinct), " << conversions << " layout conversions, "
            << human_bytes(report.conversion_bytes()) << " converted, " << std::fixed << std::setprecision(1) << ms
            << " ms (with hooks)\n";
  const bool over_budget = max_conversion_bytes >= 0 && report.conversion_bytes() > max_conversion_bytes;
  if (!report.violations.empty())
    std::cout << "result: layout lost; see the violations above\n";
  else if (!over_budget)
    std::cout << "result: clean, " + format_label(setup) + " kept end to end\n";
  if (over_budget) {
    std::cout << "result: over the conversion budget, " << report.conversion_bytes() << " bytes converted against "
              << "--max-conversion-bytes " << max_conversion_bytes << "; the conversions, most bytes first:\n";
    for (const guard::ConversionRecord& c : report.conversions)
      std::cout << "  " << c.op << (c.module_path.empty() ? "" : " in " + c.module_path) << ": " << c.from << " -> "
                << c.to << ", " << c.count << "x, " << human_bytes(c.bytes) << "\n";
  }

  if (!report_path.empty()) {
    nlohmann::json j;
    j["model"] = setup.model;
    j["format"] = format_label(setup);
    j["convert"] = setup.convert;
    j["dtype"] = dtype_name(setup.dtype);
    j["device"] = setup.device.is_cuda() ? "cuda" : "cpu";
    j["input"] = std::vector<int64_t>(input.sizes().begin(), input.sizes().end());
    for (const AuditRow& r : recorder.rows())
      j["ops"].push_back({{"op", r.op}, {"module", r.module}, {"in", r.in}, {"out", r.out}, {"kernel", r.kernel},
                          {"conversion_bytes", r.conversion_bytes}, {"violation", r.violation},
                          {"expected_loss", r.expected_loss}, {"sources", r.sources}});
    j["loss_spans"] = loss_spans_json(spans, recorder.rows());
    j["totals"] = {{"ops", recorder.rows().size()}, {"violations", report.violation_count()},
                   {"distinct_violations", report.violations.size()}, {"conversions", conversions},
                   {"conversion_bytes", report.conversion_bytes()}, {"milliseconds", ms}};
    if (max_conversion_bytes >= 0)
      j["conversion_budget"] = {{"max_bytes", max_conversion_bytes}, {"over", over_budget}};
    j["guard"] = nlohmann::json::parse(guard::report_json(report));
    std::ofstream f(report_path);
    f << j.dump(2) << "\n";
    if (!f) throw ValueError("[layoutguard audit] --report " + report_path + ": cannot write");
  }
  if (!dot_path.empty()) write_dot(dot_path, recorder.rows(), setup.model + " (" + format_label(setup) + ")");
  if (!suppressions_out.empty()) write_suppressions(suppressions_out, report, args);
  return report.violations.empty() && !over_budget ? 0 : 1;
}

int run_command(std::span<const std::string_view> args) {
  // The input's shape comes from the file: --batch and --size do not apply.
  std::vector<std::string_view> allowed{"model", "format", "convert", "dtype", "device", "weights", "input", "output"};
  const Flags flags("run", args, allowed);
  if (!flags.has("input") || !flags.has("output"))
    throw UsageError("[layoutguard run] --input FILE and --output FILE are required");
  const ModelSetup setup = parse_model_setup(flags);
  const std::string in_path = flags.get("input", ""), out_path = flags.get("output", "");
  const nn::TensorFile file = nn::load_safetensors(in_path);
  if (file.tensors.size() != 1)
    throw ValueError("[layoutguard run] " + in_path + " holds " + std::to_string(file.tensors.size()) +
                     " tensors; it must hold exactly one (the input)");
  const Tensor& raw = file.tensors.begin()->second;
  const int64_t rank = models::model_info(setup.model).spatial_dims + 2;
  if (raw.dim() != rank || raw.size(1) != 3 || !raw.is_floating_point())
    throw ValueError("[layoutguard run] " + setup.model + " needs a floating-point (N, 3, " +
                     (rank == 5 ? "T, H, W" : "H, W") + ") input; " + in_path + " holds " +
                     std::string(dtype_name(raw.dtype())) + " " + to_string(raw.sizes()));
  std::shared_ptr<nn::Module> model = build_model(setup);
  const Tensor x = raw.to(TensorOptions().dtype(setup.dtype).device(setup.device), false, setup.format);
  const auto t0 = Clock::now();
  const Tensor y = (*model)(x);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  nn::save_safetensors(out_path, {{"output", y.to(kCPU).to(kFloat32)}});
  std::cout << "layoutguard run: " << setup.model << " " << to_string(x.sizes()) << " " << format_label(setup)
            << " -> output " << to_string(y.sizes()) << " in " << std::fixed << std::setprecision(1) << ms
            << " ms, saved to " << out_path << "\n";
  return 0;
}

}  // namespace lg::tools
