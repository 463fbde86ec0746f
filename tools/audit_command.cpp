// layoutguard audit: one forward pass of a built-in model under the guard (record mode) with an
// lg::audit::FlowRecorder, whose rows and loss spans it prints next to the guard's report.
#include "audit_command.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/json_text.h"
#include "core/printable_text.h"
#include "model_setup.h"

namespace lg::tools {
namespace {

using Clock = std::chrono::steady_clock;

// A live line on a terminal once a run takes more than a second.
class Progress {
 public:
  void operator()(const audit::Row& row) {
    ++rows_;
    if (!isatty(STDERR_FILENO)) return;
    const auto now = Clock::now();
    if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    shown_ = true;
    std::fprintf(stderr, "\r[audit] %zu ops, at %-50.50s", rows_, row.module.c_str());
  }
  void finish() const {
    if (shown_) std::fprintf(stderr, "\r%-78s\r", "");
  }

 private:
  Clock::time_point start_ = Clock::now(), last_{};
  size_t rows_ = 0;
  bool shown_ = false;
};

// The run's violations as a suppressions file (guard::write_baseline): the baseline of a
// ratchet. With it in LAYOUTGUARD_OPTIONS=suppressions=FILE, the losses known today stay quiet
// and only a new one fails the next audit or test run.
void write_suppressions(const std::string& path, std::span<const std::string_view> args) {
  std::string written_by = "layoutguard audit";
  for (std::string_view a : args) written_by += " " + std::string(a);
  size_t lines = 0;
  try {
    lines = guard::write_baseline(path, written_by);
  } catch (const Error& e) {
    throw ValueError("[layoutguard audit] --write-suppressions " + path + ": cannot write (" + e.message() + ")");
  }
  std::cout << "wrote " << lines << " suppression" << (lines == 1 ? "" : "s") << " to " << path << "\n";
}

// An output flag's path must be writable before the model runs: finding out after the whole
// run (and after "result: clean" was printed) wastes the run and reads like a success. A link
// is followed as the write will follow it.
void check_output_flag(std::string_view command, std::string_view flag, const std::string& path) {
  if (path.empty()) return;  // not given (Flags::path refuses an empty one)
  lg::detail::check_replaceable_path("layoutguard " + std::string(command), "the --" + std::string(flag) + " file",
                                     path);
}

// Each file the run writes is written once: two outputs naming one file would leave only the
// last one written (the guard's report= and write_suppressions= at exit, after the command's).
// `outputs`: (how the user named it, path), empty paths left out.
void check_distinct_outputs(std::string_view command, const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::vector<std::pair<std::string, std::string>> seen;  // (name, file identity)
  for (const auto& [name, path] : outputs) {
    if (path.empty()) continue;
    const std::string same = lg::detail::file_identity(path);
    for (const auto& [other, other_file] : seen)
      if (other_file == same)
        throw ValueError("[layoutguard " + std::string(command) + "] " + other + " and " + name + " name one file, '" +
                         lg::detail::shown_value(same) + "'; required: a file of its own for each");
    seen.emplace_back(name, same);
  }
}

// The guard's own output files from LAYOUTGUARD_OPTIONS, named as the user wrote them.
std::vector<std::pair<std::string, std::string>> guard_outputs(const guard::Options& o) {
  return {{"LAYOUTGUARD_OPTIONS report=", o.report_path},
          {"LAYOUTGUARD_OPTIONS write_suppressions=", o.write_suppressions_path},
          {"LAYOUTGUARD_OPTIONS events=", o.events_path},
          {"LAYOUTGUARD_OPTIONS log_path=", o.log_path}};
}

}  // namespace

int audit_command(std::span<const std::string_view> args) {
  std::vector<std::string_view> allowed = kModelFlags;
  allowed.insert(allowed.end(), {"report", "dot", "max-conversion-bytes", "write-suppressions"});
  const Flags flags("audit", args, allowed);
  const ModelSetup setup = parse_model_setup(flags);
  const std::string report_path = flags.path("report"), dot_path = flags.path("dot");
  const std::string suppressions_out = flags.path("write-suppressions");
  // A copy budget: conversions that never change an output's format pass the layout check
  // (a contiguous() that the next conv undoes), so a run can be held to a number of converted
  // bytes as well. -1: no budget.
  const int64_t max_conversion_bytes =
      flags.integer("max-conversion-bytes", -1, 0, std::numeric_limits<int64_t>::max());
  check_output_flag("audit", "report", report_path);
  check_output_flag("audit", "dot", dot_path);
  check_output_flag("audit", "write-suppressions", suppressions_out);

  guard::Options options = guard::options();
  // A baseline lists what the run saw. Losses a suppressions= line silenced are counted and
  // keep their line (that is how a run under its own baseline tightens it), but allow= hides
  // an op's losses without a trace, so a baseline written under it would drop them.
  if (!suppressions_out.empty() && !options.allow.empty())
    throw ValueError("[layoutguard audit] --write-suppressions needs a run that sees every violation, but "
                     "LAYOUTGUARD_OPTIONS has allow=, which hides some; unset it to write the baseline");
  options.mode = guard::Mode::Record;
  options.summary = false;  // this command prints its own summary
  // report= in LAYOUTGUARD_OPTIONS naming the file of --report would overwrite the audit's
  // report (a superset: it embeds the guard's under "guard") at exit.
  if (!report_path.empty() && !options.report_path.empty() &&
      lg::detail::file_identity(options.report_path) == lg::detail::file_identity(report_path))
    options.report_path.clear();
  std::vector<std::pair<std::string, std::string>> outputs{
      {"--report", report_path}, {"--dot", dot_path}, {"--write-suppressions", suppressions_out}};
  for (auto& o : guard_outputs(options)) outputs.push_back(std::move(o));
  check_distinct_outputs("audit", outputs);

  std::shared_ptr<nn::Module> model = build_model(setup);
  const Tensor input = make_input(setup);
  std::cout << "layoutguard audit: " << setup.model << ", input " << to_string(input.sizes()) << " "
            << format_label(setup) << ", " << dtype_name(setup.dtype) << " on " << setup.device
            << ", weights " << (setup.weights.empty() ? "random" : setup.weights) << ", conversion "
            << (setup.format == MemoryFormat::Contiguous ? "none (contiguous run)" : setup.convert) << "\n\n";

  guard::set_options(options);
  guard::clear_report();
  Progress progress;
  std::vector<audit::Row> rows;
  const auto t0 = Clock::now();
  {
    audit::FlowRecorder flow([&](const audit::Row& row) { progress(row); });
    (*model)(input);
    if (setup.device.is_cuda()) cuda::synchronize();
    rows = flow.rows();
  }
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  progress.finish();
  const guard::Report report = guard::report();

  std::cout << audit::format_table(rows);
  if (!report.violations.empty()) {
    std::cout << "\nviolations\n";
    for (const guard::ViolationRecord& v : report.violations)
      std::cout << "\n" << lg::format_violation(v.first) << (v.count > 1 ? "\n(seen " + std::to_string(v.count) + " times)" : "")
                << "\n";
  }
  const std::vector<audit::LossSpan> spans = audit::find_loss_spans(rows);
  if (!spans.empty()) std::cout << "\n" << audit::format_loss_spans(spans, rows);
  if (const std::string mixed = audit::format_unconverted_weights(rows); !mixed.empty()) std::cout << "\n" << mixed;
  if (!report.expected_losses.empty()) {
    std::cout << "\nexpected losses (ExpectedLoss scopes; not violations)\n";
    for (const guard::ExpectedLossRecord& e : report.expected_losses)
      std::cout << "  " << e.op << (e.module_path.empty() ? "" : " in " + e.module_path) << ", " << e.count
                << "x: " << e.reason << "\n";
  }
  if (!report.suppressions.empty()) {
    std::cout << "\nsuppressions (" << options.suppressions_path << ")\n";
    for (const guard::SuppressionUse& u : report.suppressions)
      std::cout << "  " << guard::suppression_line(u) << ": "
                << (u.suppressed > 0 ? "silenced " + std::to_string(u.suppressed) + " loss" + (u.suppressed == 1 ? "" : "es")
                                     : std::string("matched no loss in this run; the loss is gone or the line is "
                                                   "wrong: remove it"))
                << "\n";
  }
  int64_t conversions = 0;
  for (const guard::ConversionRecord& c : report.conversions) conversions += c.count;
  std::cout << "\ntotals: " << rows.size() << " ops, " << report.violation_count() << " violations ("
            << report.violations.size() << " distinct), " << conversions << " layout conversions, "
            << guard::human_bytes(report.conversion_bytes()) << " converted, " << std::fixed << std::setprecision(1) << ms
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
                << c.to << ", " << c.count << "x, " << guard::human_bytes(c.bytes) << "\n";
  }

  if (!report_path.empty()) {
    nlohmann::json j;
    j["model"] = setup.model;
    j["format"] = format_label(setup);
    j["convert"] = setup.convert;
    j["dtype"] = dtype_name(setup.dtype);
    j["device"] = setup.device.is_cuda() ? "cuda" : "cpu";
    j["input"] = std::vector<int64_t>(input.sizes().begin(), input.sizes().end());
    const nlohmann::json flow_j = nlohmann::json::parse(audit::flow_json(rows, spans));
    j["ops"] = flow_j["ops"];
    j["loss_spans"] = flow_j["loss_spans"];
    j["totals"] = {{"ops", rows.size()}, {"violations", report.violation_count()},
                   {"distinct_violations", report.violations.size()}, {"conversions", conversions},
                   {"conversion_bytes", report.conversion_bytes()}, {"milliseconds", ms}};
    if (max_conversion_bytes >= 0)
      j["conversion_budget"] = {{"max_bytes", max_conversion_bytes}, {"over", over_budget}};
    j["guard"] = nlohmann::json::parse(guard::report_json(report));
    lg::detail::replace_file("layoutguard audit", "the --report file", report_path, lg::detail::json_text(j, 2) + "\n");
  }
  if (!dot_path.empty())
    lg::detail::replace_file("layoutguard audit", "the --dot file", dot_path,
                             audit::flow_dot(rows, setup.model + " (" + format_label(setup) + ")"));
  if (!suppressions_out.empty()) write_suppressions(suppressions_out, args);
  return report.violations.empty() && !over_budget ? 0 : 1;
}

int run_command(std::span<const std::string_view> args) {
  // The input's shape comes from the file: --batch and --size do not apply.
  std::vector<std::string_view> allowed{"model", "format", "convert", "dtype", "device", "weights", "input", "output"};
  const Flags flags("run", args, allowed);
  if (!flags.has("input") || !flags.has("output"))
    throw UsageError("[layoutguard run] --input FILE and --output FILE are required");
  const ModelSetup setup = parse_model_setup(flags);
  const std::string in_path = flags.path("input"), out_path = flags.path("output");
  check_output_flag("run", "output", out_path);
  std::vector<std::pair<std::string, std::string>> outputs{{"--output", out_path}};
  for (auto& o : guard_outputs(guard::options())) outputs.push_back(std::move(o));
  check_distinct_outputs("run", outputs);
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
