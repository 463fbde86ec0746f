// The dispatcher's slow path, the hook registry, the module stack and the kernel table.
#include "dispatch/dispatcher.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include <layoutguard/hooks.h>

#include "core/at_thread_exit.h"
#include "core/thread_local_ref.h"
#include "dispatch/call_checker.h"
#include "dispatch/kernel_table.h"

namespace lg {
namespace dispatch {
namespace detail {

// Starts not initialised: the first op takes the slow path and reads the environment.
std::atomic<uint32_t> g_slow_reasons{kNotInitialised};

}  // namespace detail

namespace {

using HookList = std::vector<std::pair<uint64_t, hooks::Hook>>;

struct Registry {
  std::mutex mutex;
  uint64_t next_id = 1;
  // Copy-on-write list: callers take a snapshot without holding the mutex while hooks run.
  std::shared_ptr<const HookList> hooks = std::make_shared<const HookList>();
};

Registry& registry() {
  static Registry& r = *new Registry;  // never destroyed: ops run during exit too
  return r;
}

// The open ModuleScopes of a thread.
struct ModuleStack {
  std::string path;             // their names joined by '.'
  std::vector<size_t> lengths;  // path's length before each scope's name
  std::vector<bool> ended;      // each scope's: ended while a scope above it lived
};

// Trivially destructible, so that it stays usable while a thread ends: a ModuleScope of static
// storage duration closes after the main thread's thread_locals are gone, and ops in static
// destructors still run. Its module stack lives on the heap until the thread's
// thread's thread_locals end; afterwards the thread has no module stack (pushes and pops do nothing).
struct ThreadState {
  int depth = 0;
  bool in_hook = false;
  bool module_stack_gone = false;
  std::string_view kernel;
  std::string_view root_op;
  ModuleStack* modules = nullptr;
};
static_assert(std::is_trivially_destructible_v<ThreadState>);

thread_local ThreadState tls;

void free_module_stack() {
  delete tls.modules;
  tls.modules = nullptr;
  tls.module_stack_gone = true;
}

// The thread's module stack, made at its first push; nullptr once the thread is ending.
ModuleStack* module_stack(ThreadState& s) {
  if (s.modules == nullptr && !s.module_stack_gone) {
    lg::detail::run_at_thread_exit<&free_module_stack>();
    s.modules = new ModuleStack;
  }
  return s.modules;
}

std::string_view module_path_of(const ThreadState& s) { return s.modules ? std::string_view(s.modules->path) : ""; }

std::string_view default_kernel_name(const OpInfo& op) {
  if (op.index >= kNumOps) return "custom";
  // Computing families name their kernel through kernel_for/note_kernel.
  const OpFamily family = op_family(static_cast<OpId>(op.index));
  if (family == OpFamily::View) return "view (metadata only)";
  if (family == OpFamily::Conversion || family == OpFamily::Composite) return "composite";
  return "unknown";
}

// Restores the thread's call bookkeeping however the body or a hook leaves.
class CallFrame {
 public:
  explicit CallFrame(const OpInfo& op)
      : outer_kernel_(tls.kernel), outer_root_(tls.root_op), depth_(tls.depth++) {
    tls.kernel = default_kernel_name(op);
    if (depth_ == 0) tls.root_op = op.name;
  }
  ~CallFrame() {
    tls.depth = depth_;
    tls.kernel = outer_kernel_;
    tls.root_op = outer_root_;
    tls.in_hook = false;
  }
  int depth() const { return depth_; }
  CallFrame(const CallFrame&) = delete;
  CallFrame& operator=(const CallFrame&) = delete;

 private:
  std::string_view outer_kernel_, outer_root_;
  int depth_;
};

}  // namespace

const KernelTable& kernel_table() {
  static const KernelTable table = [] {
    KernelTable t;
    register_cpu_kernels(t);
    register_cuda_kernels(t);
    return t;
  }();
  return table;
}

void note_kernel(std::string_view name) { tls.kernel = name; }

const KernelSlot& kernel_slot(OpId id, Device device) {
  const KernelSlot& slot = kernel_table().slot(id, device.type());
  if (slot.empty()) [[unlikely]]
    lg::detail::throw_not_implemented(
        lg::detail::str("[", op_name(id), "] has no kernel for device ", device, " in this build"));
  note_kernel(slot.name());
  return slot;
}

namespace detail {

void throw_host_out_of_memory(std::string_view op) {
  throw OutOfMemoryError("[" + std::string(op) + "] out of host memory: an allocation failed (std::bad_alloc) "
                         "for the sizes this call asked for; required sizes that fit in memory");
}

std::vector<Tensor> run_slow(const OpInfo& op, std::span<const Tensor> inputs, BodyRef body,
                             bool rerunnable) {
  if (tls.in_hook) return body(inputs);
  CallChecker& checker = call_checker();
  if (g_slow_reasons.load(std::memory_order_relaxed) & kNotInitialised) checker.initialise();
  const CheckMode mode = checker.mode();
  std::shared_ptr<const HookList> snapshot;
  if (g_slow_reasons.load(std::memory_order_relaxed) & kHooks) {
    std::lock_guard lock(registry().mutex);
    snapshot = registry().hooks;
  }
  if (mode == 0 && (!snapshot || snapshot->empty())) return body(inputs);

  CallFrame frame(op);
  // Shadow mode reruns the op on copies of its inputs taken now, before an in-place op changes
  // them. The copies are made with the re-entrancy guard set, so they are not checked as ops.
  std::vector<Tensor> rerun_inputs;
  const bool rerun = rerunnable && mode != 0 && checker.wants_rerun(op.name, op.policy, frame.depth());
  if (rerun) {
    const std::string_view kernel = tls.kernel;  // the copies' kernels must not become the op's
    tls.in_hook = true;
    rerun_inputs = checker.copies_for_rerun(inputs);
    tls.in_hook = false;
    tls.kernel = kernel;
  }
  std::vector<Tensor> outputs = body(inputs);
  const hooks::OpCall call{op.name,
                           op.policy,
                           inputs,
                           outputs,
                           inputs.empty() || !inputs.front().defined() ? kCPU : inputs.front().device(),
                           tls.kernel,
                           module_path_of(tls),
                           frame.depth(),
                           tls.root_op};
  tls.in_hook = true;  // cleared by ~CallFrame
  if (snapshot)
    for (const auto& [hid, hook] : *snapshot) hook(call);
  if (mode != 0) checker.after_call(call, mode, op.index, rerun ? &body : nullptr, rerun ? &rerun_inputs : nullptr);
  return outputs;
}

static std::atomic<ModuleObserver> g_module_observer{nullptr};

static void notify_module_observer(const ModuleStack& m) {
  if (ModuleObserver observe = g_module_observer.load(std::memory_order_acquire)) observe(m.path, m.lengths.size());
}

// The path grows and shrinks at its end: a module call (about 170 in a ResNet-50 step, with
// the PyTorch bridge) allocates nothing once the buffers have grown.
size_t push_module(std::string_view name, const void*& thread) {
  ThreadState& s = lg::detail::thread_local_ref(tls);
  thread = &s;  // a live thread's own, unlike its stack's address, which a freed stack gives away
  ModuleStack* m = module_stack(s);
  if (m == nullptr) return 0;  // the thread is ending
  m->lengths.push_back(m->path.size());
  m->ended.push_back(false);
  if (!m->path.empty()) m->path += '.';
  m->path += name;
  notify_module_observer(*m);
  return m->lengths.size();
}

void pop_module(const void* thread, size_t depth) {
  ThreadState& s = lg::detail::thread_local_ref(tls);
  LG_CHECK(thread == &s, "[guard::ModuleScope] destroyed on another thread than the one that made it; a "
                         "module scope names one thread's ops and must end there");
  ModuleStack* m = s.modules;
  if (depth == 0 || m == nullptr || depth > m->lengths.size()) return;  // pushed or popped while the thread ended
  if (depth < m->lengths.size()) {
    m->ended[depth - 1] = true;
    return;
  }
  do {
    m->path.resize(m->lengths.back());
    m->lengths.pop_back();
    m->ended.pop_back();
  } while (!m->ended.empty() && m->ended.back());
  notify_module_observer(*m);
}

void set_module_observer(ModuleObserver observer) { g_module_observer.store(observer, std::memory_order_release); }

std::string_view current_module_path() { return module_path_of(tls); }

size_t current_module_depth() { return tls.modules ? tls.modules->lengths.size() : 0; }

}  // namespace detail
}  // namespace dispatch

namespace hooks {

Handle add(Hook hook) {
  LG_CHECK(static_cast<bool>(hook), "[hooks::add] received an empty hook; required a callable");
#if !LG_ENABLE_HOOKS
  throw NotCompiledError("[hooks::add] the hook layer was compiled out (-Dhooks=false); "
                         "reconfigure with -Dhooks=true to use hooks");
#endif
  auto& r = dispatch::registry();
  std::lock_guard lock(r.mutex);
  auto next = std::make_shared<dispatch::HookList>(*r.hooks);
  const uint64_t id = r.next_id++;
  next->emplace_back(id, std::move(hook));
  r.hooks = std::move(next);
  dispatch::detail::set_slow_reason(dispatch::detail::kHooks, true);
  return Handle{id};
}

void remove(Handle handle) {
  auto& r = dispatch::registry();
  std::lock_guard lock(r.mutex);
  auto next = std::make_shared<dispatch::HookList>(*r.hooks);
  std::erase_if(*next, [&](const auto& entry) { return entry.first == handle.id; });
  dispatch::detail::set_slow_reason(dispatch::detail::kHooks, !next->empty());
  r.hooks = std::move(next);
}

size_t count() {
  auto& r = dispatch::registry();
  std::lock_guard lock(r.mutex);
  return r.hooks->size();
}

}  // namespace hooks

}  // namespace lg
