// Every ATen op of the threads that switched on passes through here: the kernels on a
// dispatch key that stock PyTorch leaves free, included per thread (switching.cpp registers
// them: a boxed fallback and unboxed kernels for the common ops), run the op (the rest of the
// dispatch), then check the call as the native guard checks layoutguard's own ops.
// docs/design.md, "The PyTorch bridge", says why a fallback and not RecordFunction.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <ATen/SequenceNumber.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <layoutguard/error.h>
#include <layoutguard/torch.h>

#include "core/thread_local_ref.h"
#include "guard/call_stack.h"
#include "guard/records.h"
#include "guard/runtime.h"
#include "guard/shadow.h"
#include "guard/tally.h"
#include "torch/aten_policy.h"
#include "torch/backward_node.h"
#include "torch/dispatch_key.h"
#include "torch/forward_sites.h"
#include "torch/gradient_format.h"
#include "torch/package_hooks.h"
#include "torch/passing_calls.h"
#include "torch/intercepted_call.h"
#include "torch/native_call_site.h"
#include "torch/op_table.h"
#include "torch/scopes.h"
#include "torch/shadow_run.h"
#include "torch/stand_in.h"
#include "torch/switching.h"
#include "torch/unboxed_ops.h"

namespace lg::torch_bridge {
namespace {

struct ThreadState {
  int depth = 0;                  // intercepted calls now running on this thread
  bool nested = true;             // the running depth-0 call's nested calls come through here
  bool events = false;            // an events file is written: every call with an image is checked
  Counting counting;              // which inputs set an expectation (options ambiguous, hidden_views)
  bool shadow = false;            // user-level calls are compared with a rerun (option shadow)
  bool forward_calls = false;     // user-level calls note where they made nodes (option forward_calls)
  bool grad_format = false;       // user-level calls hook their nodes (option grad_format)
  int64_t min_bytes = 0;          // outputs smaller than this are not flagged (option min_bytes)
  guard::Mode mode = guard::Mode::Off;  // the mode of the running depth-0 call
  const AtenPolicy* top = nullptr;      // the running depth-0 call's op
  // The first nested op that lost the format in this depth-0 call: its name lives in the op
  // table, which is never destroyed.
  std::string_view root_cause;
};
// Trivially destructible: a thread_local with a destructor is reached through a wrapper that
// registers it at the thread's first use, a second call on every access.
static_assert(std::is_trivially_destructible_v<ThreadState>);
thread_local ThreadState t_state;

// The functions that take a ThreadState take it by reference, looked up once per op. GCC would
// clone each into a copy that names t_state itself (every caller passes the same one) and then
// looks its address up again after every call it makes: ten lookups per op instead of one.
#if defined(__GNUC__) && !defined(__clang__)
#define LG_STATE_BY_REFERENCE __attribute__((noclone))
#else
#define LG_STATE_BY_REFERENCE
#endif

// The mode of a depth-0 call: the innermost Scope of the thread's own (an lg::torch::Scope
// pushes a guard::Scope too), else that of the Scope whose work the thread runs (carried
// here), else the process's (the settings read by intercept(): the first call reads the
// environment, and a bad value raises its ConfigError there, at the user's call). The carried
// state is looked up only by threads without a Scope once a Scope with a mode was opened (a
// lookup costs about a hundred instructions).
guard::Mode mode_of_call(const guard::detail::CallSettings& settings) {
  if (!settings.scoped && scope_with_mode_opened())
    if (const std::optional<guard::Mode> carried = carried_mode()) return *carried;
  return settings.mode;
}

std::atomic<torch::Raiser> g_raiser{nullptr};
std::atomic<torch::Locator> g_locator{&locate_native_caller};  // until the Python package sets its own
// A C++ program's stack until the Python package sets its finder.
std::atomic<torch::CallSiteFinder> g_call_site_finder{&capture_native_call_site};
std::atomic<torch::MismatchRaiser> g_mismatch_raiser{nullptr};
std::atomic<torch::ConfigRaiser> g_config_raiser{nullptr};

// A bad setting met at an op, raised as the binding asks (in Python layoutguard_torch.ConfigError,
// which enable() raises too), else rethrown as it is. Only inside the handler that caught `e`:
// without a binding's raiser it rethrows the exception being handled.
[[noreturn, gnu::cold]] void rethrow_config_error(const ConfigError& e) {
  if (const torch::ConfigRaiser raise = g_config_raiser.load(std::memory_order_acquire)) raise(e);
  throw;
}

// ---- The operands ----

// Whether the guard could find a loss in this call: an output of rank 4 or 5 that is not
// channels-last, beside a same-rank input that is; ambiguous tensors count only when the
// option says so (ambiguous=check), and then either way; an input that hides channels-last
// data (hidden_views=1) only beside an output that holds none. A superset of the guard's
// findings (it decides an ambiguous tensor by its suggested format), so that only such calls
// pay for stand-ins. Outputs without elements or under `min_bytes` are passed over (the guard
// would too).
bool may_lose(LayoutPolicy policy, const Operands& in, const Operands& out, Counting counting, int64_t min_bytes = 0) {
  if (policy == LayoutPolicy::RankChanging || policy == LayoutPolicy::Explicit) return false;
  const size_t considered = policy == LayoutPolicy::ConvLike ? std::min<size_t>(in.size(), 2) : in.size();
  for (const at::Tensor* o : out) {
    const Classified oc = classify_in_full(*o);
    const bool lost = oc.layout == Class::Other || (oc.layout == Class::Ambiguous && counting.ambiguous);
    if (!lost || o->numel() == 0) continue;  // empty: nothing to lose
    if (min_bytes > 0 && static_cast<int64_t>(o->nbytes()) < min_bytes) continue;
    for (size_t i = 0; i < considered; ++i) {
      if (in[i]->dim() != o->dim()) continue;
      const Classified c = classify_in_full(*in[i]);
      if (c.layout == Class::ChannelsLast || (c.layout == Class::Ambiguous && counting.ambiguous)) return true;
      // A pointwise op keeps the hiding strides: not a loss.
      if (c.hides_channels_last && counting.hidden && oc.layout == Class::Other && !oc.hides_channels_last)
        return true;
    }
  }
  return false;
}

// Calls f(element, in, out) with each element of a multi-tensor op's call
// (AtenPolicy::element_lists: output i with element i of each list and the single tensors),
// else once with the whole call and no element; stops at the first f that returns true, and
// says whether one did. An Adam step's
// _foreach_sqrt over a channels-last conv's state and an NCHW conv's keeps each format: the
// whole call would look like a loss.
template <typename F>
bool any_part(const AtenPolicy& p, const Operands& in, const Operands& out, F&& f) {
  const size_t n = out.size(), lists = p.element_lists;
  if (lists == 0 || n == 0 || in.size() < lists * n || (p.elements_exact && in.size() != lists * n))
    return f(std::optional<size_t>(), in, out);
  Operands in_i, out_i;
  for (size_t i = 0; i < n; ++i) {
    in_i.clear();
    for (size_t k = 0; k < lists; ++k) in_i.push_back(in[k * n + i]);
    in_i.append(in.begin() + static_cast<std::ptrdiff_t>(lists * n), in.end());
    out_i.assign(1, out[i]);
    if (f(std::optional<size_t>(i), in_i, out_i)) return true;
  }
  return false;
}

// may_lose, element by element for a multi-tensor op. Inlined: other ops pay one byte test.
[[gnu::always_inline]] inline bool may_lose_in_part(const AtenPolicy& p, LayoutPolicy policy, const Operands& in,
                                                    const Operands& out, Counting counting) {
  if (p.element_lists == 0) return may_lose(policy, in, out, counting);
  return any_part(p, in, out, [&](std::optional<size_t>, const Operands& in_i, const Operands& out_i) {
    return may_lose(policy, in_i, out_i, counting);
  });
}

bool has_image(const Operands& list) {
  for (const at::Tensor* t : list)
    if (classify(*t) != Class::NotApplicable) return true;
  return false;
}

// copy_(dst, src) between two orders of the dims: a conversion for the ledger, by the guard's
// own rule, read off the torch tensors so that only a real conversion pays for stand-ins.
// Tensors of a rank over kMaxDims (torch allows 64) are beyond the guard: never one.
bool is_conversion(const Operands& in) {
  if (in.size() != 2 || !readable(*in[0]) || !readable(*in[1]) || in[0]->strides() == in[1]->strides() ||
      in[0]->dim() > kMaxDims)
    return false;
  return guard::detail::is_layout_conversion(sizes_of(*in[0]), strides_of(*in[0]), sizes_of(*in[1]),
                                             strides_of(*in[1]));
}

// ---- The check ----

// Warn and record mode keep the report's call counts.
bool collects(guard::Mode mode) { return mode == guard::Mode::Warn || mode == guard::Mode::Record; }

// Whether the guard reported the thread's last call handed to it, for option grad_format,
// which resets it before a user-level call (a write per reported call only).
thread_local bool t_reported = false;

// Builds the stand-ins and lets the guard check, record and report the call.
void hand_to_guard(const AtenPolicy& p, LayoutPolicy policy, guard::Mode mode, const Operands& in,
                   const Operands& out, int depth, std::string_view root_op, std::string_view root_cause,
                   bool counts_call = true, std::optional<size_t> element = std::nullopt) {
  StandIns stand_ins(in, out);
  // A backward op belongs to the module whose forward made its node; forward code run again
  // inside the node (checkpointing's recomputation) to the module that runs it.
  const std::optional<BackwardNode> node = running_backward_node();
  const bool node_module = node && !in_module_entered_in_node();
  hooks::OpCall call{p.name,
                     policy,
                     stand_ins.inputs(),
                     stand_ins.outputs(),
                     stand_ins.device(),
                     "aten",
                     node_module ? std::string_view(node->forward_module) : guard::module_path(),
                     depth,
                     root_op};
  guard::detail::ForeignCall foreign;
  foreign.is_copy = p.is_copy;
  foreign.root_cause = root_cause;
  if (node_module) {  // forward code run again inside the node is no backward op of it
    foreign.autograd_node = node->name;
    foreign.forward_call = node->forward_call;
  }
  foreign.locate = current_locator();
  foreign.raise = current_raiser();
  foreign.counts_call = counts_call;
  foreign.element = element;
  if (guard::detail::after_foreign_op(call, mode, p.op_index, foreign)) t_reported = true;
}

// Whether a user-level call (or a multi-tensor op's element) goes to the guard in full: it may
// have lost the format, it is a conversion, or an events file records it.
bool needs_full_check(const ThreadState& s, const AtenPolicy& p, LayoutPolicy policy, const Operands& in,
                      const Operands& out) {
  return may_lose(policy, in, out, s.counting, s.min_bytes) || (p.is_copy && is_conversion(in)) ||
         (s.events && (has_image(in) || has_image(out)));
}

// A multi-tensor op's user-level call: each element is checked as a call of its own, against
// its own inputs (any_part): each element that loses is a violation, and with an events file
// each element with an image an event; the report counts the call once. The root cause, the
// call's first nested loss, goes with every element (a CPU kernel's per-element calls are
// all the same op).
void check_parts(const ThreadState& s, const OpEntry& p, LayoutPolicy policy, guard::Mode mode, const Operands& in,
                 const Operands& out, std::string_view root_cause) {
  bool counted = false;
  any_part(p, in, out, [&](std::optional<size_t> element, const Operands& in_i, const Operands& out_i) {
    if (needs_full_check(s, p, policy, in_i, out_i)) {
      hand_to_guard(p, policy, mode, in_i, out_i, 0, p.name, root_cause, !counted, element);
      counted = true;
    }
    return false;
  });
  if (!counted && collects(mode)) count_call(p);
}

// The policy a call is checked under, and whether its caller chose the format (a
// memory_format argument given). Asked before the call: a boxed op pops its arguments.
struct CallPolicy {
  LayoutPolicy policy;
  bool explicit_format;
  // A memory_format given inside a backward node, taken as its derivative formula's (Preserve)
  // unless the program's own code asked for it (see program_code_asked).
  bool formula_request = false;
};

std::atomic<torch::ProgramCodeCheck> g_program_code_check{nullptr};  // set by the Python package

// Whether the program's own code, not a derivative formula, gave the memory_format of a call
// inside a backward node: a checkpointed function's recomputation outside every module, a
// Python autograd Function's backward, a tensor hook. Asked only of a call that would count
// as a loss, as the answer walks the Python frames under the GIL.
bool program_code_asked(const CallPolicy& policy) {
  if (!policy.formula_request) return false;
  const torch::ProgramCodeCheck runs_program_code = g_program_code_check.load(std::memory_order_acquire);
  return runs_program_code != nullptr && runs_program_code();
}

// A user-level convolution whose channels-last input met a weight in another format, for the
// report's unconverted_weights (PyTorch converts such a weight at every call). A call that
// goes to the guard in full is recorded there; this takes the others, which keep the format.
[[gnu::cold]] void note_unconverted_weight(const OpEntry& p, const Operands& in) {
  if (in.size() < 2 || classify(*in[0]) != Class::ChannelsLast || classify(*in[1]) != Class::Other) return;
  if (const Tensor weight = stand_in(*in[1]); weight.defined())
    guard::detail::record_unconverted_weight(p.name, guard::module_path(), weight);
}

// Checks a finished user-level call. Inlined into both its callers: out of line, its eight
// arguments cost a boxed channels-last call 50 instructions.
[[gnu::always_inline]] inline void check(const ThreadState& s, const OpEntry& p, const CallPolicy& call_policy,
                                         guard::Mode mode, const Operands& in, const Operands& out,
                                         std::string_view root_cause) {
  // A factory called by the user, or an op told its memory_format, chose its layout.
  LayoutPolicy policy = call_policy.explicit_format || p.factory ? LayoutPolicy::Explicit : call_policy.policy;
  if (call_policy.formula_request && may_lose(policy, in, out, s.counting, s.min_bytes) &&
      program_code_asked(call_policy))
    policy = LayoutPolicy::Explicit;
  if (p.element_lists > 0) {
    check_parts(s, p, policy, mode, in, out, root_cause != p.name ? root_cause : std::string_view());
    return;
  }
  if (!needs_full_check(s, p, policy, in, out)) {
    if (collects(mode)) {
      count_call(p);
      if (p.policy == LayoutPolicy::ConvLike) note_unconverted_weight(p, in);
    }
    return;
  }
  hand_to_guard(p, policy, mode, in, out, 0, p.name, root_cause != p.name ? root_cause : std::string_view());
}

struct DepthScope {
  explicit DepthScope(ThreadState& s) : s_(s) { ++s_.depth; }
  ~DepthScope() { --s_.depth; }
  ThreadState& s_;
};

// Runs the rest of the call's dispatch one level deeper. Its nested calls come back through
// the key when `seen`; else they run unseen, unboxed too.
LG_STATE_BY_REFERENCE void run_below(InterceptedCall& call, ThreadState& s, bool seen) {
  DepthScope nested(s);
  if (seen) {
    call.redispatch();
  } else {
    c10::impl::ExcludeDispatchKeyGuard unseen(kKey);
    call.redispatch();
  }
}

CallPolicy policy_before_call(const InterceptedCall& call, const OpEntry& p) {
  // Inside a backward node the request is the derivative formula's, not the user's, unless
  // the user's forward runs there again (checkpointing's recomputation, in a module) or the
  // program's own code asks (check).
  if (p.format_request && in_backward_node() && !in_module_entered_in_node())
    return {LayoutPolicy::Preserve, false, call.argument_given(p.memory_format_arg)};
  return {p.policy, p.memory_format_arg >= 0 && call.argument_given(p.memory_format_arg)};
}

// Whether `out` is `in` reduced: fewer dims, or as many, none larger and one smaller.
bool reduced(c10::IntArrayRef out, c10::IntArrayRef in) {
  if (out.size() != in.size()) return out.size() < in.size();
  bool smaller = false;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] > in[d]) return false;
    smaller = smaller || out[d] < in[d];
  }
  return smaller;
}

// After the call: an op with `keepdim` whose output is smaller than its input is a reduction
// (see AtenPolicy::keepdim). Not one whose output is larger: the backward of max(dim,
// keepdim=True) (value_selecting_reduction_backward) spreads a reduced gradient back to the
// input's sizes, an image of the forward input that may lose its format.
LayoutPolicy policy_after_call(const OpEntry& p, LayoutPolicy policy, const Operands& in, const Operands& out) {
  if (p.keepdim && !in.empty() && !out.empty() && readable(*in[0]) && readable(*out[0]) &&
      reduced(out[0]->sizes(), in[0]->sizes()))
    return LayoutPolicy::RankChanging;
  return policy;
}

// ---- shadow=1 ----

// The policies whose outputs are images of the inputs, value for value: what a rerun on
// contiguous copies must reproduce (the native guard's rule).
bool compared_policy(LayoutPolicy policy) {
  return policy == LayoutPolicy::Preserve || policy == LayoutPolicy::ConvLike;
}

// Whether a user-level call with a channels-last input is run again and compared: not a
// factory's, nor one whose caller chose the format, nor one drawing random numbers (tagged so,
// or aten_policies.def's exceptions), nor an op that allow= names.
bool shadow_compares(const OpEntry& p, const CallPolicy& before) {
  if (!p.shadow_compared || p.factory || before.explicit_format || !compared_policy(before.policy)) return false;
  const guard::Options& o = guard::detail::current_options();
  return !o.allows(p.name);
}

// A difference as lg::ShadowMismatch: the native guard's first line, then the operands'
// layouts, the module, the autograd node, the user's line and the stack.
[[noreturn, gnu::cold]] void raise_mismatch(const OpEntry& p, const ShadowRun& shadow, const Operands& out,
                                            const ShadowDifference& d) {
  std::string text = guard::detail::shadow_mismatch_text(p.name, d.output, d.what, "aten");
  const auto describe = [](const at::Tensor& t) {
    const Tensor s = stand_in(t);
    return s.defined() ? describe_layout(s) : std::string("(not a strided tensor of layoutguard's dtypes)");
  };
  for (size_t i = 0; i < shadow.inputs().size(); ++i)
    text += "\n  input " + std::to_string(i) + ": " + describe(shadow.inputs()[i]);
  for (size_t i = 0; i < out.size(); ++i) text += "\n  output " + std::to_string(i) + ": " + describe(*out[i]);
  const std::optional<BackwardNode> node = running_backward_node();
  const std::string module(node && !in_module_entered_in_node() ? std::string_view(node->forward_module)
                                                                 : guard::module_path());
  text += "\n  module: " + (module.empty() ? std::string("(top level: outside every named submodule)") : module);
  if (node) text += "\n  autograd node: " + node->name + " (a backward op)";
  if (node && !node->forward_call.empty()) text += "\n  made by the forward call at: " + node->forward_call;
  std::string location, stack;
  if (const torch::Locator locate = current_locator()) locate(location, stack);
  if (!location.empty()) text += "\n  at: " + location;
  text += "\n  allow=" + p.name + " in LAYOUTGUARD_OPTIONS leaves the op out of the comparison\n";
  if (stack.empty() && guard::detail::current_options().backtrace) stack = guard::detail::capture_backtrace();
  text += stack.empty() ? "  stack trace: not captured (LAYOUTGUARD_OPTIONS backtrace=0)\n"
                        : "  stack trace (most recent call first):\n" + stack;
  const ShadowMismatch mismatch(p.name, d.output, d.largest, text);
  if (const torch::MismatchRaiser raise = g_mismatch_raiser.load(std::memory_order_acquire)) raise(mismatch);
  throw mismatch;
}

// The operands and policy of a call whose arguments outlive it, read after it ran: what the
// outputs-first paths below read once an output may have lost the format.
struct ReadAfterCall {
  ReadAfterCall(const InterceptedCall& call, const OpEntry& p) : policy(policy_before_call(call, p)) {
    call.inputs(in_owned, in);
    call.outputs(out_owned, out);
    policy.policy = policy_after_call(p, policy.policy, in, out);
  }
  ReadAfterCall(const ReadAfterCall&) = delete;  // `in` and `out` may point into the owned ones

  Tensors in_owned, out_owned;
  Operands in, out;
  CallPolicy policy;  // after the call: a reduction by keepdim is rank-changing
};

// A nested call that is not a copy, of an op whose arguments outlive the call: it is never
// reported, and matters only as the first nested loss (the root cause of its depth-0 op's).
// Most nested calls keep the format, so the outputs are read first, and the arguments only
// when an output may have lost it.
[[gnu::noinline]] LG_STATE_BY_REFERENCE void run_nested(InterceptedCall& call, ThreadState& s, const OpEntry& p) {
  run_below(call, s, s.nested);
  if (!p.checkable || !s.root_cause.empty() || !call.output_not_channels_last(s.counting.ambiguous)) return;
  const ReadAfterCall r(call, p);
  if (!r.policy.explicit_format && may_lose_in_part(p, r.policy.policy, r.in, r.out, s.counting))
    s.root_cause = p.name;
}

// A user-level call with a channels-last input, of an op whose arguments outlive the call, that
// is neither a copy nor written to an events file: only an output that is not channels-last can
// make it a finding. Most calls keep the format, so the outputs are read first, in place, and
// the inputs and the policy only when one may have lost it.
[[gnu::noinline]] LG_STATE_BY_REFERENCE void check_user_call(InterceptedCall& call, ThreadState& s,
                                                             const OpEntry& p, guard::Mode mode) {
  s.root_cause = {};
  run_below(call, s, s.nested);
  if (!call.output_not_channels_last(s.counting.ambiguous)) {
    if (collects(mode)) {
      count_call(p);
      if (p.policy == LayoutPolicy::ConvLike) {
        Tensors owned;
        Operands in;
        call.inputs(owned, in);
        note_unconverted_weight(p, in);
      }
    }
    return;
  }
  const ReadAfterCall r(call, p);
  check(s, p, r.policy, mode, r.in, r.out, std::exchange(s.root_cause, {}));
}

// The rest of check_call: a copy, a call written to an events file or compared with a rerun,
// a boxed call with a channels-last input (its arguments are read before the op pops them),
// and a nested copy (the ledger's conversions). Out of line, as are run_nested and
// check_user_call: check_call, which every call runs, then stays a few cache lines of code.
[[gnu::noinline]] LG_STATE_BY_REFERENCE void check_in_full(InterceptedCall& call, ThreadState& s, const OpEntry& p,
                                                           guard::Mode mode) {
  Tensors in_owned;
  Operands in;
  call.inputs(in_owned, in);
  const CallPolicy before = policy_before_call(call, p);
  const bool explicit_format = before.explicit_format;
  std::optional<ShadowRun> shadow;
  if (s.depth == 0 && s.shadow && shadow_compares(p, before)) shadow.emplace(call);
  if (s.depth == 0) s.root_cause = {};
  run_below(call, s, s.nested);
  Tensors out_owned;
  Operands out;
  call.outputs(out_owned, out);
  CallPolicy after = before;
  after.policy = policy_after_call(p, before.policy, in, out);
  const LayoutPolicy policy = after.policy;
  if (shadow && shadow->active() && compared_policy(policy))
    if (const std::optional<ShadowDifference> d = shadow->compare(out)) raise_mismatch(p, *shadow, out, *d);
  if (s.depth > 0) {
    // Nested: never reported; the first loss is the root cause of its depth-0 op's loss.
    if (s.root_cause.empty() && !explicit_format && may_lose_in_part(p, policy, in, out, s.counting))
      s.root_cause = p.name;
    // The copies inside x.contiguous() and friends are the conversions the ledger charges
    // to the user-level op.
    if (p.is_copy && is_conversion(in))
      hand_to_guard(p, LayoutPolicy::Explicit, mode, in, out, s.depth, s.top ? s.top->name : p.name, {});
    return;
  }
  check(s, p, after, mode, in, out, std::exchange(s.root_cause, {}));
}

LG_STATE_BY_REFERENCE void check_call(InterceptedCall& call, ThreadState& s, guard::Mode mode) {
  const OpEntry& p = call.entry();
  if (s.depth == 0) {
    s.top = &p;
  } else if (!p.is_copy && call.arguments_outlive_call()) {
    run_nested(call, s, p);
    return;
  }
  // Every call counts for the nesting, checked or not: the ops inside x.contiguous() are the
  // library's, not the user's. A call without a channels-last input (or, as the options say,
  // an ambiguous one or one that hides channels-last data) cannot lose the format: it is only
  // counted, and its arguments are read in place.
  if (!p.checkable || !(p.is_copy || s.events || call.sets_expectation(s.counting))) {
    run_below(call, s, s.nested);
    if (s.depth == 0 && collects(mode)) count_call(p);
    return;
  }
  if (s.depth == 0 && !p.is_copy && !s.events && !s.shadow && call.arguments_outlive_call()) {
    check_user_call(call, s, p, mode);
    return;
  }
  check_in_full(call, s, p, mode);
}

// The settings of a user-level call, read once into `s`: its nested calls take them from there.
// The first read parses the environment: a bad value raises here, at the user's call.
LG_STATE_BY_REFERENCE void read_call_settings(ThreadState& s) {
  if (settings_error_pending()) [[unlikely]]
    raise_settings_error();
  const guard::detail::CallSettings settings = guard::detail::current_call_settings();
  s.mode = mode_of_call(settings);
  if (s.mode == guard::Mode::Off) return;
  const guard::Options& options = settings.options ? *settings.options : guard::detail::current_options();
  s.nested = options.nested;
  s.events = !options.events_path.empty();
  s.counting = {options.ambiguous == guard::Ambiguous::Check, options.hidden_views};
  s.min_bytes = options.min_bytes;
  s.shadow = options.shadow;
  s.forward_calls = options.forward_calls;
  s.grad_format = options.grad_format;
}

// Option grad_format: a user-level call hooks the nodes of its channels-last inputs, and of
// the channels-last outputs it made nodes for, whose gradients are checked when they reach
// them; one inside a backward node notes the gradients it made, for those reports. Option forward_calls: a
// user-level call that made nodes notes where the user called it, for the reports of those
// nodes' backward ops. Nodes that a backward node's own ops make (a graph-building pass) are
// left out: their gradients are the second derivative's, and the Python line there is the
// backward() call's.
LG_STATE_BY_REFERENCE void check_watching_nodes(InterceptedCall& call, ThreadState& s) {
  std::optional<bool> in_node;  // asked once, and only where needed
  const auto inside_node = [&] {
    if (!in_node) in_node = in_backward_node() && !in_module_entered_in_node();
    return *in_node;
  };
  if (s.grad_format) {
    if (c10::GradMode::is_enabled() && !inside_node()) {
      Tensors owned;
      Operands in;
      call.inputs(owned, in);  // before the call: a boxed op pops them
      watch_input_gradients(in);
    }
    t_reported = false;
  }
  const int64_t first_node = at::sequence_number::peek();
  {
    // The views and in-place ops inside the call are not the user's: with option forward_calls
    // they skip the key that notes those (passing_calls.h).
    std::optional<c10::impl::ExcludeDispatchKeyGuard> not_passing;
    if (s.forward_calls) not_passing.emplace(kPassingKey);
    check_call(call, s, s.mode);
  }
  const int64_t end_node = at::sequence_number::peek();
  if (s.grad_format && (end_node != first_node || inside_node())) {
    Tensors owned;
    Operands out;
    call.outputs(owned, out);
    if (inside_node())
      note_gradients_made(out, call.entry().name, t_reported);
    else
      watch_output_gradients(out, first_node, end_node);
  }
  if (!s.forward_calls) return;
  watch_passing_calls();
  if (end_node != first_node && !inside_node()) note_nodes_of_this_call(first_node, end_node);
}

}  // namespace

void intercept(InterceptedCall& call) {
  ThreadState& s = lg::detail::thread_local_ref(t_state);
  const bool user_level = s.depth == 0;
  // A bad setting is met at a user-level call: its settings, or the log_path= file that the
  // first warning opens, also from a nested call's check.
  try {
    if (user_level) read_call_settings(s);
    if (s.mode == guard::Mode::Off) {
      run_below(call, s, false);  // nested calls are off too
      return;
    }
    if (user_level && (s.grad_format || s.forward_calls)) [[unlikely]]
      check_watching_nodes(call, s);
    else
      check_call(call, s, s.mode);
  } catch (const ConfigError& e) {
    if (!user_level) throw;
    rethrow_config_error(e);
  }
}

torch::Locator current_locator() { return g_locator.load(std::memory_order_acquire); }
torch::Raiser current_raiser() { return g_raiser.load(std::memory_order_acquire); }
torch::CallSiteFinder current_call_site_finder() { return g_call_site_finder.load(std::memory_order_acquire); }

bool inside_intercepted_call() { return lg::detail::thread_local_ref(t_state).depth > 0; }

bool forward_calls_on() {
  if (!torch::enabled() || settings_error_pending()) return false;
  const guard::detail::CallSettings settings = guard::detail::current_call_settings();
  if (mode_of_call(settings) == guard::Mode::Off) return false;
  return (settings.options ? *settings.options : guard::detail::current_options()).forward_calls;
}

}  // namespace lg::torch_bridge

namespace lg::torch {

std::string_view built_torch_version() { return LG_TORCH_VERSION; }

void set_raiser(Raiser raise) { torch_bridge::g_raiser.store(raise, std::memory_order_release); }

void set_locator(Locator locate) { torch_bridge::g_locator.store(locate, std::memory_order_release); }

void set_program_code_check(ProgramCodeCheck runs_program_code) {
  torch_bridge::g_program_code_check.store(runs_program_code, std::memory_order_release);
}

void set_call_site_finder(CallSiteFinder find) {
  torch_bridge::g_call_site_finder.store(find, std::memory_order_release);
}

void set_mismatch_raiser(MismatchRaiser raise) {
  torch_bridge::g_mismatch_raiser.store(raise, std::memory_order_release);
}

void set_config_raiser(ConfigRaiser raise) { torch_bridge::g_config_raiser.store(raise, std::memory_order_release); }

}  // namespace lg::torch
