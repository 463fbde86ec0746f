// The forward sites of autograd nodes (see forward_sites.h).
#include "torch/forward_sites.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

#include <torch/csrc/autograd/function.h>

namespace lg::torch_bridge {
namespace {

// A slot per node key, direct-mapped: a forward op costs a store, never an allocation. A node
// whose slot a later node took has no module path in its backward's reports; sequence numbers
// are consecutive, so that takes a forward of more nodes than slots.
constexpr size_t kSlots = 1 << 16;

// A program has few distinct module paths: each is kept once, and the slots point at it.
// Bounded all the same (a program that names modules afresh without end): when full, both
// start again empty.
constexpr size_t kMaxPaths = 1 << 16;

struct TransparentHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct Slot {
  uint64_t key = 0;
  const std::string* path = nullptr;  // null: empty
};

struct Sites {
  std::mutex mutex;
  std::unique_ptr<Slot[]> slots = std::make_unique<Slot[]>(kSlots);
  std::unordered_set<std::string, TransparentHash, std::equal_to<>> paths;
  const std::string* last = nullptr;  // the path of the latest forward op: most often the next one's
};

Sites& sites() {
  static auto* s = new Sites();  // never destroyed: backward may run during exit
  return *s;
}

// Sequence numbers count per forward thread; thread ids are small.
uint64_t key(uint64_t thread_id, uint64_t sequence_nr) { return (thread_id << 40) ^ sequence_nr; }

// The slot of a key: its low bits, as consecutive sequence numbers fill consecutive slots.
Slot& slot_of(Sites& s, uint64_t k) { return s.slots[(k ^ (k >> 40)) % kSlots]; }

// The kept copy of `path` (with the lock held).
const std::string* intern(Sites& s, std::string_view path) {
  if (s.last != nullptr && *s.last == path) return s.last;
  auto it = s.paths.find(path);
  if (it == s.paths.end()) {
    if (s.paths.size() >= kMaxPaths) {
      std::fill_n(s.slots.get(), kSlots, Slot{});
      s.paths.clear();
    }
    it = s.paths.emplace(path).first;
  }
  return s.last = &*it;
}

}  // namespace

void remember_forward_site(const at::Tensor& output, std::string_view module_path) {
  if (module_path.empty() || !output.defined() || !output.requires_grad()) return;
  const std::shared_ptr<::torch::autograd::Node>& node = output.grad_fn();
  if (!node) return;
  const uint64_t k = key(node->thread_id(), node->sequence_nr());
  Sites& s = sites();
  std::lock_guard lock(s.mutex);
  const std::string* path = intern(s, module_path);
  slot_of(s, k) = Slot{k, path};
}

std::string forward_site(uint64_t forward_thread_id, int64_t sequence_nr) {
  const uint64_t k = key(forward_thread_id, static_cast<uint64_t>(sequence_nr));
  Sites& s = sites();
  std::lock_guard lock(s.mutex);
  const Slot& slot = slot_of(s, k);
  return slot.path != nullptr && slot.key == k ? *slot.path : std::string();
}

}  // namespace lg::torch_bridge
