// The layout guard's configuration: the LAYOUTGUARD mode, the LAYOUTGUARD_OPTIONS string, and
// the API that overrides them.
//
//   LAYOUTGUARD          off (default) | warn | throw | record;  1 = throw, 0 = off
//   LAYOUTGUARD_OPTIONS  key=value pairs separated by ':'; list values separated by ','
//                        e.g. "allow=upsample_bicubic2d,pad:ambiguous=check:summary=0"
//
// Precedence, lowest to highest: built-in defaults < the environment (read once, on first use)
// < lg::guard::set_mode / set_options (process-wide) < an lg::guard::Scope (its thread, while it
// lives). Anything invalid -- unknown key, bad value, unreadable suppressions file -- is an
// lg::ConfigError naming the variable, the key and the allowed values; the first use raises it
// and every later use raises it again until the environment is fixed or the API overrides it.
// `layoutguard explain` and friends read the same settings.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <layoutguard/layout.h>
#include <layoutguard/layout_policy.h>
#include <layoutguard/report.h>
#include <layoutguard/tensor.h>

namespace lg::guard {

enum class Mode { Off, Warn, Throw, Record };
// What to do with tensors that are contiguous and channels_last at once (C == 1, H == W == 1):
// Skip treats them as neither (never flagged), Check as channels_last when they suggest it.
enum class Ambiguous { Skip, Check };
// Where an option's effective value came from (printed by help=1).
enum class Source { Default, Environment, Api };

// The module path of a call made outside every module, as suppressions lines and the audit's
// table write it: `op:(top)` silences op at top level only, where a bare `op` silences it in
// every module.
inline constexpr std::string_view kTopLevelModule = "(top)";

// `op`, `op:module-glob` or `op:(top)` from a suppressions file, optionally followed by
// `@function-glob`: then only a loss whose call stack holds a matching function (its name
// without parameters, e.g. app::preprocess) is silenced -- the call site, for code without
// modules. The op may carry `[signature-glob]`: then only a loss whose operands' layouts match
// (layout_signature(), e.g. `add[channels_last,contiguous->contiguous]`) is silenced, so a
// baseline line can name the loss it knows and no other of the same op and place. '*' and '?'
// work in every glob.
struct Suppression {
  std::string op;
  std::string module_glob;     // empty: every module; kTopLevelModule: calls outside every module
  std::string frame_glob;      // empty: any call site
  std::string signature_glob;  // empty: any operand layouts

  // Whether the line names op and its module glob matches module_path (the call site aside).
  bool matches(std::string_view op_name, std::string_view module_path) const;
};

struct Options {
  Mode mode = Mode::Off;
  std::vector<std::string> allow;          // op names never flagged
  std::string suppressions_path;           // file the suppressions were read from
  std::vector<Suppression> suppressions;
  Ambiguous ambiguous = Ambiguous::Skip;
  int64_t min_bytes = 0;                   // outputs smaller than this are not flagged
  bool hidden_views = true;                // flag x[0].unsqueeze(0)-style views (check.cpp)
  bool backtrace = true;                   // capture a stack trace with each violation
  bool summary = true;                     // table of recorded events at exit
  bool spans = true;                       // follow each loss's NCHW data for the report (warn/record)
  std::string report_path;                 // JSON report written at exit (empty: none)
  std::string write_suppressions_path;     // baseline of the run's violations written at exit
  std::string log_path;                    // warn-mode log file (empty: the spdlog default sink)
  std::string events_path;                 // one JSON line per checked call (empty: none)
  bool shadow = false;                     // re-run checked ops on contiguous copies, compare
  int64_t max_reports = 100;               // distinct warnings logged before going quiet
  bool nested = true;                      // PyTorch bridge: intercept the calls inside user-level ops
  bool forward_calls = false;              // PyTorch bridge: keep the call site of nodes' forward calls
  bool grad_format = false;                // PyTorch bridge: channels-last outputs' gradients must be too
  bool help = false;                       // print every option at first use

  // Where each value came from: [0] the mode, then the keys in option_keys() order.
  std::vector<Source> sources;

  // True when op is allowed, or (op, module path) suppressed by a line without a call site or
  // signature (check_layout asks the other lines only for a real loss).
  bool is_exempt(std::string_view op, std::string_view module_path) const;
  // Whether `allow` names the op (a name without a namespace also names ATen's: `softmax`
  // allows aten::softmax).
  bool allows(std::string_view op) const;
  // The first suppressions line without a call site or signature matching (op, module path),
  // or nullptr.
  const Suppression* suppression_for(std::string_view op, std::string_view module_path) const;
  // The first line with a call site or a signature matching (op, module path), the loss's
  // layout `signature` and the calling thread's stack now, or nullptr. Walks the stack when
  // such a line with a call site names op: ask only for a real loss. (Defined beside the stack
  // walk, src/guard/call_stack.cpp, so that the parser stands alone.)
  const Suppression* loss_suppression_for(std::string_view op, std::string_view module_path,
                                          std::string_view signature) const;
  // Whether some line with a call site or a signature names op (cheap: no stack walk).
  bool has_loss_line(std::string_view op) const;
};

// The keys LAYOUTGUARD_OPTIONS accepts, in help order.
const std::vector<std::string_view>& option_keys();

// Parses the two variables' values (either may be empty = defaults). ConfigError on anything
// invalid. Pure: reads no environment (only the suppressions file it names).
Options parse_options(std::string_view mode_text, std::string_view options_text);
// The help=1 text: every option with its meaning, effective value and source.
std::string describe_options(const Options& options);
std::string_view mode_name(Mode mode);

// '*' matches any run (also empty), '?' one character; everything else matches itself.
bool glob_match(std::string_view pattern, std::string_view text);
// Whether one `allow` entry names op: the same name, or a name without a namespace and ATen's
// op of that name (`softmax` names aten::softmax).
bool allow_names(std::string_view name, std::string_view op);

// ---- The layout contract ----

// How the check sees one tensor's layout.
enum class LayoutClass {
  NotApplicable,  // rank other than 4 or 5: no channels-last format exists
  ChannelsLast,   // suggests channels_last (4-D) / channels_last_3d (5-D) and is not ambiguous
  Other,          // suggests contiguous (NCHW, permuted, ...) and is not ambiguous
  Ambiguous,      // contiguous and channels_last(_3d)-contiguous at once (C == 1, H == W == 1)
};
LayoutClass classify(const Tensor& t);

// A broken contract: which output lost which format.
struct Finding {
  std::string op;
  LayoutPolicy policy;
  MemoryFormat lost;      // ChannelsLast or ChannelsLast3d
  size_t output_index;    // the first offending output
  size_t input_index;     // the channels-last input that set the expectation
  std::string rule;       // one sentence: what the policy required
};

// Applies `policy` to one call. For ConvLike, inputs[0] is the input and inputs[1] the weight.
// Ambiguous tensors follow options.ambiguous: Skip leaves them out on both sides; Check counts
// them as channels_last exactly when they suggest it. Outputs below options.min_bytes and ops
// exempt by allow/suppressions (for module_path) are never flagged. A View call that changes
// rank and hands back channels-last data under a contiguous suggestion (x[0].unsqueeze(0)) is
// a finding when options.hidden_views is on and the call is the user's own (depth 0): the
// library's internal views (an unbatched input made 4-D, conv2d run as conv3d) are not.
std::optional<Finding> check_layout(std::string_view op, LayoutPolicy policy,
                                    std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                                    const Options& options, std::string_view module_path = {}, int depth = 0);

// The operands' layouts as one string, what a suppressions line's [signature-glob] matches:
// each input's layout::format_name ("channels_last", "contiguous", "permuted", ...; "none" for
// an absent optional operand), comma-separated, then "->" and the outputs' the same way, e.g.
// "channels_last,contiguous->contiguous". Warn and record mode also key their one record per
// loss by it, with the op and the module (or, outside every module, the call site).
std::string layout_signature(std::span<const Tensor> inputs, std::span<const Tensor> outputs);

// ---- The process-wide configuration ----

// The effective options: the environment is parsed on the first call (ConfigError if invalid),
// then API overrides and the calling thread's innermost Scope apply.
Options options();
// The effective mode alone (what the dispatcher's fast path asks).
Mode mode();
// Process-wide overrides of the environment. set_options checks what the parser would: op
// names, counts, writable and distinct output files, no NUL in any text (ConfigError naming
// the field), and changes nothing when it refuses.
void set_mode(Mode mode);
void set_options(const Options& options);
// Replaces the process-wide options with `options_text` (LAYOUTGUARD_OPTIONS syntax) and keeps
// the process-wide mode: the API's, else LAYOUTGUARD's. Scopes do not count, and neither does
// LAYOUTGUARD_OPTIONS, which this replaces: its errors are not raised. ConfigError for a bad
// `options_text`, or for a bad LAYOUTGUARD when no API mode replaces it.
void set_options_keeping_mode(std::string_view options_text);
// Forgets the cached environment and API overrides; the next use reads the environment again.
void reset_to_environment();

// RAII: sets the mode for the current thread while it lives (nests; restores on destruction).
// Scopes may end in any order; the innermost live one's mode holds. A scope belongs to the
// thread that made it: destroying it on another thread is an lg::Error (from the destructor:
// the program terminates), never a change to either thread's mode.
class Scope {
 public:
  explicit Scope(Mode mode);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  int depth_;
  const void* thread_;  // identifies the making thread
};

// ---- Counting conversions in a block ----

// Whether copy_(dst, src) is a layout conversion, as the ledger, ConversionTally and the audit
// count them: same sizes, at least two elements, and the dims of size > 1 in another memory
// order (size-1 dims are left out: their strides are free, so an (N,1,H,W) tensor holds its
// bytes in one order under NCHW and NHWC strides). Broadcasting and one-element copies are not.
bool is_layout_conversion(const Tensor& dst, const Tensor& src);

class ExpectedLoss;
namespace internal {
void tally_conversion(const ConversionRecord& one);  // the guard's feed (src/guard/tally.cpp)
// Counts a loss of op against the innermost matching ExpectedLoss; returns it, or nullptr
// (src/guard/expected_loss.cpp).
const ExpectedLoss* take_expected_loss(std::string_view op);
}  // namespace internal

// RAII: counts the layout conversions (copies that change the dim order, NHWC <-> NCHW and the
// like, as in the report's ledger) that the calling thread's ops make while it lives, in any
// mode but off -- throw included, where the process ledger records nothing. With the guard
// off no op reaches the guard: pair it with a Scope. Nests: every live tally of the thread
// counts. It belongs to the thread that made it: destroying it on another thread is an
// lg::Error (from the destructor: the program terminates), never a dangling registration.
// This is how a test holds a block to a copy budget (LG_CHECK_CONVERSIONS_AT_MOST).
class ConversionTally {
 public:
  ConversionTally();
  ~ConversionTally();
  ConversionTally(const ConversionTally&) = delete;
  ConversionTally& operator=(const ConversionTally&) = delete;

  int64_t bytes() const;
  int64_t count() const;
  // Grouped as the ledger is, by (depth-0 op, module, from, to); most bytes first.
  std::vector<ConversionRecord> records() const;

 private:
  friend void internal::tally_conversion(const ConversionRecord& one);
  void add(const ConversionRecord& one);
  std::vector<ConversionRecord> records_;
  // The thread's live tallies form a list through `outer_`, newest first; its head is a plain
  // thread_local pointer, which no destruction order can free before a tally that uses it.
  ConversionTally* outer_ = nullptr;
  ConversionTally** head_;  // this thread's list head
};

// ---- Expected losses ----

// RAII: a layout loss that the calling thread's ops make while it lives is expected, for
// `reason` (an op without an NHWC kernel, a permute the model needs). Such a loss is not
// raised (throw), logged (warn) or counted as a violation (report, summary, audit result, the
// test assertions); the report lists it under expected losses with the reason, so the known
// cost stays in view. With `op` only that op's losses are expected: any other still fails.
// Scopes nest; the innermost one that matches takes the loss. A scope that ends without having
// taken a loss while the guard collects (warn, record) is listed in the report as unused: the
// loss went away and the annotation can go, as with an unused suppression. A loss that a
// suppressions line silences never reaches a scope. Like ConversionTally it belongs to its
// thread: destroying it on another is an lg::Error from a destructor, so the program
// terminates. Give it automatic storage (a block, a test case), not static storage: its
// unused-scope note would come after the exit report.
class ExpectedLoss {
 public:
  explicit ExpectedLoss(std::string reason, std::string op = {});
  ~ExpectedLoss();
  ExpectedLoss(const ExpectedLoss&) = delete;
  ExpectedLoss& operator=(const ExpectedLoss&) = delete;

  const std::string& reason() const { return reason_; }
  const std::string& op() const { return op_; }
  int64_t count() const { return count_; }  // losses taken so far

  // The calling thread's innermost live scope that expects a loss from op, or nullptr.
  static const ExpectedLoss* innermost_for(std::string_view op);

 private:
  friend const ExpectedLoss* internal::take_expected_loss(std::string_view op);
  std::string reason_, op_;
  int64_t count_ = 0;
  ExpectedLoss* outer_;    // this thread's live scopes, newest first (as ConversionTally)
  ExpectedLoss** head_;
};

}  // namespace lg::guard

#define LG_GUARD_CONCAT_INNER(a, b) a##b
#define LG_GUARD_CONCAT(a, b) LG_GUARD_CONCAT_INNER(a, b)
// Expects a layout loss, for the rest of the enclosing block: LG_EXPECT_LAYOUT_LOSS("no NHWC
// bicubic kernel") or LG_EXPECT_LAYOUT_LOSS("...", "upsample_bicubic2d") for one op.
#define LG_EXPECT_LAYOUT_LOSS(...) \
  ::lg::guard::ExpectedLoss LG_GUARD_CONCAT(lg_expected_loss_, __LINE__) { __VA_ARGS__ }
