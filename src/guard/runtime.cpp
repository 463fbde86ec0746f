// The guard on every dispatched call: conversions, the contract check, throw/warn/record.
#include "guard/runtime.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>

#include <spdlog/sinks/basic_file_sink.h>

#include "core/log.h"
#include "core/printable_text.h"
#include "guard/call_stack.h"
#include "guard/check.h"
#include "guard/events.h"
#include "guard/records.h"
#include "guard/shadow.h"
#include "guard/spans.h"
#include "guard/tally.h"

namespace lg::guard::detail {
namespace {

// call_site: the caller's function for a call outside every module (Located::call_site),
// "" inside one.
ViolationInfo describe(const hooks::OpCall& call, const Finding& f, bool with_backtrace, std::string call_site) {
  ViolationInfo v;
  v.op = f.op;
  v.policy = f.policy;
  v.lost = f.lost;
  v.output_index = f.output_index;
  v.input_index = f.input_index;
  v.rule = f.rule;
  for (size_t i = 0; i < call.inputs.size(); ++i) v.inputs.push_back(OperandLayout::of("input", i, call.inputs[i]));
  for (size_t i = 0; i < call.outputs.size(); ++i)
    v.outputs.push_back(OperandLayout::of("output", i, call.outputs[i]));
  v.signature = layout_signature(call.inputs, call.outputs);
  v.kernel = call.kernel;
  v.module_path = call.module_path;
  v.depth = call.depth;
  if (with_backtrace) v.backtrace = capture_backtrace();
  v.call_site = std::move(call_site);
  return v;
}

// copy_ moving data between dim orders (NCHW <-> NHWC and the like) is a layout conversion,
// charged to the depth-0 op that caused it. Broadcasting copies and one-element copies are not.
// It goes to the process ledger (`ledger`: warn and record mode) and to the thread's live
// ConversionTally objects (any mode). Returns its bytes (0: no conversion, or nobody asked:
// neither the ledger, a tally nor the event stream).
int64_t maybe_record_conversion(const hooks::OpCall& call, bool is_copy, bool ledger, bool events) {
  if (!is_copy || call.inputs.size() != 2) return 0;
  if (!ledger && !events && !tallying()) return 0;
  const Tensor& dst = call.inputs[0];
  const Tensor& src = call.inputs[1];
  if (!guard::is_layout_conversion(dst, src)) return 0;
  ConversionRecord one{std::string(call.root_op), std::string(call.module_path),
                       layout::format_name(src.sizes(), src.strides()), layout::format_name(dst.sizes(), dst.strides()),
                       1, static_cast<int64_t>(dst.nbytes())};
  internal::tally_conversion(one);  // each live tally of this thread; none: nothing to do
  if (ledger) record_conversion(one.op, one.module_path, std::move(one.from), std::move(one.to), one.bytes);
  return one.bytes;
}

// The warn-mode logger: the library's logger, or a file logger for log_path.
spdlog::logger& warn_logger(const std::string& log_path) {
  if (log_path.empty()) return logging::logger();
  // Never destroyed: ops in static destructors may still warn.
  static auto& mutex = *new std::mutex;
  static auto& by_path = *new std::map<std::string, std::shared_ptr<spdlog::logger>>;
  std::lock_guard lock(mutex);
  auto& logger = by_path[log_path];
  if (!logger) {
    try {
      logger = std::make_shared<spdlog::logger>(
          "layoutguard", std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_path));
    } catch (const spdlog::spdlog_ex& e) {
      by_path.erase(log_path);
      throw ConfigError("LAYOUTGUARD_OPTIONS: key 'log_path' got '" + log_path +
                        "', which cannot be opened (" + e.what() + "); allowed values: a writable file path");
    }
    logger->flush_on(spdlog::level::warn);
    // A write that fails later (a full disk) would otherwise get spdlog's own line, naming
    // neither layoutguard nor the setting, and again at every warning.
    logger->set_error_handler([log_path, said = std::make_shared<std::atomic<bool>>(false)](const std::string& msg) {
      if (said->exchange(true)) return;
      std::fprintf(stderr,
                   "[layoutguard] log_path=%s: a warning could not be written (%s); the warnings sent there are "
                   "lost, the exit summary and report= still count every violation\n",
                   lg::detail::printable_text(log_path).c_str(), msg.c_str());
    });
  }
  return *logger;
}

void warn(const Options& o, const ViolationRecord& first, int64_t distinct) {
  spdlog::logger& logger = warn_logger(o.log_path);
  if (distinct <= o.max_reports) {
    // The logger's line names the library already ("[layoutguard] [warning]"): the text's own
    // tag, which starts it as an exception's message, would name it twice.
    const std::string text = format_violation(first.first);
    constexpr std::string_view kTag = "[layoutguard] ";
    logger.warn("{}", std::string_view(text).substr(text.starts_with(kTag) ? kTag.size() : 0));
  } else if (distinct == o.max_reports + 1) {
    logger.warn("max_reports={} distinct violations logged; further ones are counted "
                "(see the exit summary or report=) but not logged",
                o.max_reports);
  }
}

}  // namespace

bool shadow_wanted(std::string_view op, LayoutPolicy policy, int depth) {
  const Options& o = current_options();
  return o.shadow && depth == 0 && (policy == LayoutPolicy::Preserve || policy == LayoutPolicy::ConvLike) &&
         !o.allows(op);
}

namespace {

// A foreign call's user location and stack, asked of its locator once, when first needed: by
// an op@function suppressions line, which then matches the functions of that stack (a Python
// program's, where the C++ stack holds the interpreter), or by a violation's report.
class Located {
 public:
  explicit Located(const ForeignCall* foreign) : foreign_(foreign) {}

  const std::string& location() { return ask().location_; }
  const std::string& stack() { return ask().stack_; }
  // The call site that keys a loss outside every module and its op:(top)@function line: the
  // function of the user's frame in a foreign stack ("file.py:7 in preprocess"), else the
  // caller's C++ function (for a foreign call, the first outside libtorch too).
  std::string call_site() {
    if (stack().empty()) return first_caller_function(foreign_ != nullptr);
    std::string_view where = location();
    if (where.ends_with(")"))  // a note after the line: "(the backward() call)"
      if (const size_t note = where.rfind(" ("); note != std::string_view::npos) where = where.substr(0, note);
    const size_t in = where.rfind(" in ");
    return in == std::string_view::npos ? std::string() : std::string(where.substr(in + 4));
  }
  // ForeignStackFunctions' source: the stack's functions, or the C++ stack's if it has none.
  static bool functions(void* self, std::vector<std::string>& out) {
    const std::string& stack = static_cast<Located*>(self)->stack();
    if (stack.empty()) return false;
    out = functions_of_stack_text(stack);
    return true;
  }

 private:
  Located& ask() {
    if (!asked_ && foreign_ && foreign_->locate) foreign_->locate(location_, stack_);
    asked_ = true;
    return *this;
  }

  const ForeignCall* foreign_;
  bool asked_ = false;
  std::string location_, stack_;
};

// The check of one call, native or foreign: everything after_op says, with `foreign` adding
// the bridge's facts (nullptr for layoutguard's own ops). Returns whether it was reported.
bool check_call(const hooks::OpCall& call, Mode mode, uint32_t op_index, const dispatch::detail::BodyRef* rerun,
                const std::vector<Tensor>* shadow_inputs, const ForeignCall* foreign) {
  const Options& o = current_options();
  Located located(foreign);
  std::optional<ForeignStackFunctions> foreign_functions;
  if (foreign && foreign->locate) foreign_functions.emplace(&Located::functions, &located);
  const bool collect = mode == Mode::Warn || mode == Mode::Record;
  if (collect) {
    ensure_exit_handler();
    if (foreign == nullptr || foreign->counts_call) record_call(op_index, call.op);
    if (call.depth == 0 && has_unconverted_weight(call.policy, call.inputs))
      record_unconverted_weight(call.op, call.module_path, call.inputs[1]);
  }
  const bool is_copy = foreign ? foreign->is_copy : op_index == static_cast<uint32_t>(dispatch::OpId::copy_);
  const int64_t converted = maybe_record_conversion(call, is_copy, collect, !o.events_path.empty());
  if (rerun && shadow_inputs) shadow_compare(call, *rerun, *shadow_inputs);  // shadow_wanted() said so

  // A suppressed call is checked all the same when collecting: the report says which lines
  // silenced a real loss and which matched none (stale lines of a baseline).
  if (collect && !o.suppressions.empty() && !o.allows(call.op)) {
    const Suppression* line = o.suppression_for(call.op, call.module_path);
    if ((line || o.has_loss_line(call.op)) && find_loss(call.op, call.policy, call.inputs, call.outputs, o, call.depth)) {
      if (!line) line = o.loss_suppression_for(call.op, call.module_path, layout_signature(call.inputs, call.outputs));
      if (line) record_suppressed(*line);
    }
  }
  const std::optional<Finding> finding =
      foreign && foreign->finding
          ? (o.is_exempt(call.op, call.module_path) ? std::nullopt : std::optional<Finding>(*foreign->finding))
          : check_layout(call.op, call.policy, call.inputs, call.outputs, o, call.module_path, call.depth);
  // A loss inside an ExpectedLoss scope is the user's known cost, not a violation.
  const ExpectedLoss* expected = finding ? internal::take_expected_loss(call.op) : nullptr;
  // Spans follow tensors by identity: a foreign call's stand-ins have none.
  if (collect && o.spans && !foreign) follow_call(call, converted, finding.has_value(), expected ? expected->reason() : "");
  if (!o.events_path.empty()) write_event(o.events_path, call, finding ? &*finding : nullptr, converted, expected);
  if (expected) {
    if (collect) record_expected_loss(expected->reason(), call.op, call.module_path);
    return false;
  }
  if (!finding) return false;
  // Outside every module the call site keys the loss (a baseline line per site), so each loss
  // there walks the stack once; inside a module, the module does. A foreign call's source line
  // (a Python file:line) keys it when known.
  const std::string& source_location = located.location();
  const std::string& foreign_stack = located.stack();
  const std::string site = call.module_path.empty() ? located.call_site() : std::string();
  const auto make_info = [&] {
    ViolationInfo v = describe(call, *finding, o.backtrace && foreign_stack.empty(), site);
    if (foreign) {
      v.root_cause = foreign->root_cause;
      v.autograd_node = foreign->autograd_node;
      v.forward_call = foreign->forward_call;
      v.element = foreign->element;
      v.source_location = source_location;
      if (o.backtrace && !foreign_stack.empty()) v.backtrace = foreign_stack;
    }
    return v;
  };
  if (mode == Mode::Throw) {
    if (foreign && foreign->raise) foreign->raise(LayoutViolation(make_info()));
    throw LayoutViolation(make_info());
  }

  // One record per (op, module or call site, operand layouts): a loop repeats one record.
  const std::string key = std::string(call.op) + "|" + std::string(call.module_path) + "|" + site + "|" +
                          source_location + "|" + std::string(foreign ? foreign->autograd_node : std::string_view()) + "|" +
                          std::string(foreign ? foreign->forward_call : std::string_view()) + "|" +
                          layout_signature(call.inputs, call.outputs);
  ViolationRecord first;
  const int64_t distinct = record_violation(key, op_index, [&] {
    first.first = make_info();
    return first.first;
  });
  if (mode == Mode::Warn && distinct > 0) warn(o, first, distinct);
  return true;
}

}  // namespace

void after_op(const hooks::OpCall& call, Mode mode, uint32_t op_index, const dispatch::detail::BodyRef* rerun,
              const std::vector<Tensor>* shadow_inputs) {
  check_call(call, mode, op_index, rerun, shadow_inputs, nullptr);
}

bool after_foreign_op(const hooks::OpCall& call, Mode mode, uint32_t op_index, const ForeignCall& foreign) {
  return check_call(call, mode, op_index, nullptr, nullptr, &foreign);
}

}  // namespace lg::guard::detail
