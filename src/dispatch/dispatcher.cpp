// The dispatcher's slow path, the hook registry, the module stack and the kernel table.
#include "dispatch/dispatcher.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>

#include <layoutguard/hooks.h>

#include "dispatch/kernel_table.h"

namespace lg {
namespace dispatch {
namespace detail {

// 0: not initialised yet (the first call takes the slow path and initialises).
std::atomic<int> g_state{0};

}  // namespace detail

namespace {

constexpr int kSlow = 2;

struct Registry {
  std::mutex mutex;
  uint64_t next_id = 1;
  // Copy-on-write list: callers take a snapshot without holding the mutex while hooks run.
  std::shared_ptr<const std::vector<std::pair<uint64_t, hooks::Hook>>> hooks =
      std::make_shared<const std::vector<std::pair<uint64_t, hooks::Hook>>>();
};

Registry& registry() {
  static Registry r;
  return r;
}

// Decides the fast/slow state from what listens. Called with the registry mutex held.
void refresh_state_locked() {
  detail::g_state.store(registry().hooks->empty() ? detail::kFast : kSlow, std::memory_order_relaxed);
}

struct ThreadState {
  int depth = 0;
  bool in_hook = false;
  std::string_view kernel;
  std::vector<std::string> modules;
  std::string module_path;
};

thread_local ThreadState tls;

std::string_view default_kernel_name(OpId id) {
  switch (op_family(id)) {
    case OpFamily::View: return "view (metadata only)";
    case OpFamily::Conversion: return "composite";
    case OpFamily::Copy: break;
  }
  return "unknown";
}

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

template <OpId id>
typename KernelSignature<id>::type kernel_for(Device device) {
  const KernelSlot& slot = kernel_table().slot(id, device.type());
  LG_CHECK_NOT_IMPLEMENTED(slot.fn != nullptr, "[", op_name(id), "] has no kernel for device ",
                           device, " in this build");
  note_kernel(slot.name);
  return kernel_table().get<id>(device.type());
}
template KernelSignature<OpId::copy_>::type kernel_for<OpId::copy_>(Device);
template KernelSignature<OpId::fill_>::type kernel_for<OpId::fill_>(Device);

namespace detail {

Tensor run_slow(OpId id, std::vector<Tensor> inputs, BodyRef body) {
  if (g_state.load(std::memory_order_relaxed) == 0) {
    std::lock_guard lock(registry().mutex);
    refresh_state_locked();
  }
  if (tls.in_hook || g_state.load(std::memory_order_relaxed) == kFast) return body();

  const std::string_view outer_kernel = tls.kernel;
  tls.kernel = default_kernel_name(id);
  const int depth = tls.depth++;
  Tensor out;
  try {
    out = body();
  } catch (...) {
    --tls.depth;
    tls.kernel = outer_kernel;
    throw;
  }
  --tls.depth;
  const std::string_view kernel = tls.kernel;
  tls.kernel = outer_kernel;

  std::shared_ptr<const std::vector<std::pair<uint64_t, hooks::Hook>>> snapshot;
  {
    std::lock_guard lock(registry().mutex);
    snapshot = registry().hooks;
  }
  const std::vector<Tensor> outputs{out};
  const hooks::OpCall call{op_name(id),
                           op_policy(id),
                           inputs,
                           outputs,
                           inputs.empty() || !inputs.front().defined() ? kCPU : inputs.front().device(),
                           kernel,
                           tls.module_path,
                           depth};
  tls.in_hook = true;
  try {
    for (const auto& [hid, hook] : *snapshot) hook(call);
  } catch (...) {
    tls.in_hook = false;
    throw;
  }
  tls.in_hook = false;
  return out;
}

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
  auto next = std::make_shared<std::vector<std::pair<uint64_t, Hook>>>(*r.hooks);
  const uint64_t id = r.next_id++;
  next->emplace_back(id, std::move(hook));
  r.hooks = std::move(next);
  dispatch::refresh_state_locked();
  return Handle{id};
}

void remove(Handle handle) {
  auto& r = dispatch::registry();
  std::lock_guard lock(r.mutex);
  auto next = std::make_shared<std::vector<std::pair<uint64_t, Hook>>>(*r.hooks);
  std::erase_if(*next, [&](const auto& entry) { return entry.first == handle.id; });
  r.hooks = std::move(next);
  dispatch::refresh_state_locked();
}

size_t count() {
  auto& r = dispatch::registry();
  std::lock_guard lock(r.mutex);
  return r.hooks->size();
}

}  // namespace hooks

namespace guard {

namespace {
void rebuild_module_path() {
  std::string& path = dispatch::tls.module_path;
  path.clear();
  for (const std::string& m : dispatch::tls.modules) {
    if (!path.empty()) path += '.';
    path += m;
  }
}
}  // namespace

ModuleScope::ModuleScope(std::string_view name) {
  dispatch::tls.modules.emplace_back(name);
  rebuild_module_path();
}

ModuleScope::~ModuleScope() {
  dispatch::tls.modules.pop_back();
  rebuild_module_path();
}

std::string_view module_path() { return dispatch::tls.module_path; }

}  // namespace guard
}  // namespace lg
