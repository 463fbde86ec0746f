// The guard plugged into the dispatcher's slow path (dispatch/call_checker.h), and the module
// scopes whose path every OpCall carries.
#include "dispatch/call_checker.h"

#include <layoutguard/hooks.h>

#include "dispatch/dispatcher.h"
#include "guard/runtime.h"
#include "guard/shadow.h"

namespace lg {
namespace guard::detail {
namespace {

static_assert(static_cast<int>(Mode::Off) == 0, "CheckMode 0 must mean Mode::Off");

class GuardChecker final : public dispatch::detail::CallChecker {
 public:
  void initialise() override { detail::initialise(); }
  dispatch::detail::CheckMode mode() override { return static_cast<dispatch::detail::CheckMode>(current_mode()); }
  bool wants_rerun(std::string_view op, LayoutPolicy policy, int depth) override {
    return shadow_wanted(op, policy, depth);
  }
  std::vector<Tensor> copies_for_rerun(std::span<const Tensor> inputs) override { return shadow_copies(inputs); }
  void after_call(const hooks::OpCall& call, dispatch::detail::CheckMode mode, uint32_t op_index,
                  const dispatch::detail::BodyRef* rerun, const std::vector<Tensor>* rerun_inputs) override {
    after_op(call, static_cast<Mode>(mode), op_index, rerun, rerun_inputs);
  }
};

}  // namespace
}  // namespace guard::detail

dispatch::detail::CallChecker& dispatch::detail::call_checker() {
  static auto& checker = *new guard::detail::GuardChecker;  // never destroyed: ops run during exit
  return checker;
}

namespace guard {

ModuleScope::ModuleScope(std::string_view name) : depth_(dispatch::detail::push_module(name, thread_)) {}
ModuleScope::~ModuleScope() { dispatch::detail::pop_module(thread_, depth_); }

std::string_view module_path() { return dispatch::detail::current_module_path(); }

}  // namespace guard
}  // namespace lg
