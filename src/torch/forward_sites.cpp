// The forward sites of autograd nodes (see forward_sites.h).
#include "torch/forward_sites.h"

#include <mutex>
#include <unordered_map>

#include <torch/csrc/autograd/function.h>

namespace lg::torch_bridge {
namespace {

constexpr size_t kCapacity = 1 << 16;

struct Sites {
  std::mutex mutex;
  std::unordered_map<uint64_t, std::string> by_node;
};

Sites& sites() {
  static auto* s = new Sites();  // never destroyed: backward may run during exit
  return *s;
}

// Sequence numbers count per forward thread; thread ids are small. Collisions only cost a
// report its module path.
uint64_t key(uint64_t thread_id, uint64_t sequence_nr) { return (thread_id << 40) ^ sequence_nr; }

}  // namespace

void remember_forward_site(const at::Tensor& output, std::string_view module_path) {
  if (module_path.empty() || !output.defined() || !output.requires_grad()) return;
  const std::shared_ptr<::torch::autograd::Node>& node = output.grad_fn();
  if (!node) return;
  Sites& s = sites();
  std::lock_guard lock(s.mutex);
  if (s.by_node.size() >= kCapacity) s.by_node.clear();
  s.by_node[key(node->thread_id(), node->sequence_nr())] = std::string(module_path);
}

std::string forward_site(uint64_t forward_thread_id, int64_t sequence_nr) {
  Sites& s = sites();
  std::lock_guard lock(s.mutex);
  const auto it = s.by_node.find(key(forward_thread_id, static_cast<uint64_t>(sequence_nr)));
  return it == s.by_node.end() ? std::string() : it->second;
}

}  // namespace lg::torch_bridge
