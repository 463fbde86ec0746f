// lg::nn::Module: registration, traversal, conversion and state dicts.
#include <layoutguard/nn/module.h>

#include "core/enum_checks.h"
#include "core/error_tag.h"
#include "nn/tied_conversion.h"

#include <optional>
#include <set>
#include <unordered_set>
#include <vector>

#include <layoutguard/error.h>
#include <layoutguard/hooks.h>

namespace lg::nn {
namespace {

std::string join(const std::string& prefix, const std::string& name) {
  if (prefix.empty()) return name;
  return name.empty() ? prefix : prefix + "." + name;
}

void check_name(const std::string& owner, const std::string& name) {
  if (name.empty() || name.find('.') != std::string::npos)
    throw ValueError("[nn::Module] " + owner + ": names must be non-empty and free of '.', got \"" + name + "\"");
}

}  // namespace

// Children whose last owner this is are taken apart here, one level at a time, rather than by
// their own destructors inside this one: a deep tree would nest one destructor call per level.
Module::~Module() {
  std::vector<std::shared_ptr<Module>> orphans;
  for (auto& [name, child] : children_) orphans.push_back(std::move(child));
  children_.clear();
  while (!orphans.empty()) {
    std::shared_ptr<Module> m = std::move(orphans.back());
    orphans.pop_back();
    if (m.use_count() == 1) {
      for (auto& [name, child] : m->children_) orphans.push_back(std::move(child));
      m->children_.clear();  // its own destructor then sees no child at all, not null ones
    }
    // m's destructor runs here with no children left (or m lives on with another owner).
  }
}

Tensor Module::operator()(const Tensor& input) {
  // The root module (no name) adds nothing to the path, so a model called inside a user's own
  // ModuleScope reports "scope.layer1..." rather than "scope..layer1".
  std::optional<guard::ModuleScope> scope;
  if (!name_.empty()) scope.emplace(name_);
  return forward(input);
}

void Module::register_slot(std::string name, Tensor* slot, bool is_parameter, bool optional) {
  check_name(type_name_, name);
  // Every walk of the tree reads through the slot.
  if (slot == nullptr)
    throw ValueError("[nn::Module] " + type_name_ + ": " + (is_parameter ? "parameter" : "buffer") + " \"" + name +
                     "\" is registered with a null slot; required: a Tensor member of the module");
  for (const Slot& s : slots_)
    if (s.name == name) throw ValueError("[nn::Module] " + type_name_ + ": \"" + name + "\" is registered twice");
  slots_.push_back({std::move(name), slot, is_parameter, optional});
}

void Module::register_parameter(std::string name, Tensor* slot) { register_slot(std::move(name), slot, true); }
void Module::register_buffer(std::string name, Tensor* slot, bool optional_in_checkpoint) {
  register_slot(std::move(name), slot, false, optional_in_checkpoint);
}

void Module::attach(std::string name, std::shared_ptr<Module> child) {
  check_name(type_name_, name);
  if (!child) throw ValueError("[nn::Module] " + type_name_ + ": child \"" + name + "\" is null");
  for (const auto& [n, c] : children_)
    if (n == name) throw ValueError("[nn::Module] " + type_name_ + ": child \"" + name + "\" is registered twice");
  // A module below itself would send every walk of the tree (parameters, calls, to()) round
  // the cycle until the stack overflows. A module may be shared (a DAG); its tree is asked
  // once per module, iteratively, since it may be deep.
  std::vector<const Module*> pending{child.get()};
  std::unordered_set<const Module*> seen;
  while (!pending.empty()) {
    const Module* m = pending.back();
    pending.pop_back();
    if (m == this)
      throw ValueError("[nn::Module] " + type_name_ + ": child \"" + name + "\" is this module or holds it; " +
                       "required: a module tree without cycles");
    if (!seen.insert(m).second) continue;
    for (const auto& [n, c] : m->children_) pending.push_back(c.get());
  }
  // A module registered in several places (a shared activation, a tied block) cannot tell
  // which place called it, so its path lists every name it has: "enc|dec".
  if (child->name_.empty()) {
    child->name_ = name;
  } else {
    bool known = false;
    for (size_t at = 0; at <= child->name_.size();) {
      const size_t bar = std::min(child->name_.find('|', at), child->name_.size());
      known |= std::string_view(child->name_).substr(at, bar - at) == name;
      at = bar + 1;
    }
    if (!known) child->name_ += "|" + name;
  }
  children_.emplace_back(std::move(name), std::move(child));
}

// An explicit stack, not recursion: a tree may be deeper than a thread's stack allows calls.
// The names from the root down are kept as a stack of pointers and joined only for a visitor
// that asks (path()), so a walk that needs few paths (the slots of a deep chain of containers)
// costs time linear in the tree, not in the sum of its path lengths.
template <class Visit>
void Module::walk(bool once, Visit&& visit) const {
  struct Pending {
    size_t depth;                          // of the module: 0 for this one
    const std::string* name;               // in its parent (null for this one)
    const std::shared_ptr<Module>* owner;  // null for this one
    const Module* module;
  };
  std::vector<Pending> pending{{0, nullptr, nullptr, this}};
  std::vector<const std::string*> names;  // names[k]: the name at depth k + 1 on the current path
  std::unordered_set<const Module*> seen;
  while (!pending.empty()) {
    const Pending p = pending.back();
    pending.pop_back();
    if (once && !seen.insert(p.module).second) continue;
    names.resize(p.depth == 0 ? 0 : p.depth - 1);
    if (p.name) names.push_back(p.name);
    const auto path = [&names] {
      std::string out;
      for (const std::string* n : names) out = join(out, *n);
      return out;
    };
    visit(path, *p.module, p.owner);
    // Reversed, so that the first child comes off the stack first.
    for (auto it = p.module->children_.rbegin(); it != p.module->children_.rend(); ++it)
      pending.push_back({p.depth + 1, &it->first, &it->second, it->second.get()});
  }
}

template <class Fn>
void Module::for_each_slot(Fn&& fn) const {
  for_each_slot_info([&](const std::string& name, const Slot& s) { fn(name, *s.tensor, s.is_parameter); });
}

template <class Fn>
void Module::for_each_slot_info(Fn&& fn) const {
  walk(false, [&](const auto& path, const Module& m, const std::shared_ptr<Module>*) {
    std::optional<std::string> prefix;
    for (const Slot& s : m.slots_) {
      if (!s.tensor->defined()) continue;
      if (!prefix) prefix = path();
      fn(join(*prefix, s.name), s);
    }
  });
}

namespace {

// The parameters or the buffers of a tree, each tensor once (PyTorch's remove_duplicate).
template <class Walk>
NamedTensors distinct(Walk&& walk_slots, bool parameters) {
  NamedTensors out;
  std::unordered_set<const void*> seen;
  walk_slots([&](const std::string& n, Tensor& t, bool is_param) {
    if (is_param == parameters && seen.insert(t.impl_ptr().get()).second) out.emplace_back(n, t);
  });
  return out;
}

}  // namespace

// This module's own slots, or the whole tree's, for distinct().
template <class Fn>
void Module::for_each_slot_in(bool recurse, Fn&& fn) const {
  if (recurse) return for_each_slot(fn);
  for (const Slot& s : slots_)
    if (s.tensor->defined()) fn(s.name, *s.tensor, s.is_parameter);
}

NamedTensors Module::named_parameters(bool recurse) const {
  return distinct([&](auto&& fn) { for_each_slot_in(recurse, fn); }, true);
}

NamedTensors Module::named_buffers(bool recurse) const {
  return distinct([&](auto&& fn) { for_each_slot_in(recurse, fn); }, false);
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_children() const { return children_; }

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules() {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  walk(true, [&](const auto& path, const Module&, const std::shared_ptr<Module>* owner) {
    // The root is handed out without ownership: modules are always held by shared_ptr, but this
    // one may be the caller's stack object in tests; an aliasing pointer avoids double ownership.
    out.emplace_back(path(), owner ? *owner : std::shared_ptr<Module>(std::shared_ptr<Module>(), this));
  });
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [n, t] : named_parameters(recurse)) out.push_back(t);
  return out;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [n, child] : children_) child->train(on);
}

Module& Module::to(MemoryFormat fmt) {
  lg::detail::check_memory_format(fmt, "nn::Module::to");
  if (fmt == MemoryFormat::Preserve)
    throw ValueError("[nn::Module::to] memory_format must be contiguous_format, channels_last or "
                     "channels_last_3d, got preserve_format");
  detail::TiedConversion tied;
  lg::detail::tagged("nn::Module::to", [&] {
    for_each_slot([&](const std::string&, Tensor& t, bool) {
      const int64_t rank = t.dim();
      const bool applies = fmt == MemoryFormat::Contiguous ? (rank == 4 || rank == 5)
                           : fmt == MemoryFormat::ChannelsLast ? rank == 4
                                                               : rank == 5;
      if (applies) t = tied(t, [&](const Tensor& x) { return x.to(fmt); });
    });
  });
  return *this;
}

Module& Module::to(DType dtype) {
  lg::detail::check_dtype(dtype, "nn::Module::to");
  if (!is_floating_point(dtype))
    throw TypeError("[nn::Module::to] dtype must be a floating-point type, got " + std::string(dtype_name(dtype)));
  detail::TiedConversion tied;
  lg::detail::tagged("nn::Module::to", [&] {
    for_each_slot([&](const std::string&, Tensor& t, bool) {
      if (t.is_floating_point()) t = tied(t, [&](const Tensor& x) { return x.to(dtype); });
    });
  });
  return *this;
}

Module& Module::to(Device device) {
  detail::TiedConversion tied;
  lg::detail::tagged("nn::Module::to", [&] {
    for_each_slot([&](const std::string&, Tensor& t, bool) { t = tied(t, [&](const Tensor& x) { return x.to(device); }); });
  });
  return *this;
}

StateDict Module::state_dict() const {
  StateDict out;
  for_each_slot([&](const std::string& n, Tensor& t, bool) { out.emplace(n, t); });
  return out;
}

void Module::load_state_dict(const StateDict& dict, bool strict) {
  std::vector<std::string> missing, mismatched;
  std::set<std::string> used;
  std::vector<std::pair<Tensor*, const Tensor*>> copies;
  // for_each_slot_info hands out the member itself, so collecting pointers to it is safe.
  for_each_slot_info([&](const std::string& n, const Slot& slot) {
    Tensor& t = *slot.tensor;
    auto it = dict.find(n);
    if (it == dict.end()) {
      if (!slot.optional_in_checkpoint) missing.push_back(n);
      return;
    }
    used.insert(n);
    if (!it->second.defined() || it->second.sizes() != t.sizes()) {
      mismatched.push_back(n + ": checkpoint " +
                           (it->second.defined() ? to_string(it->second.sizes()) : std::string("undefined")) +
                           ", model " + to_string(t.sizes()));
      return;
    }
    copies.emplace_back(&t, &it->second);
  });
  std::vector<std::string> unexpected;
  for (const auto& [n, t] : dict)
    if (!used.count(n)) unexpected.push_back(n);

  const bool fail = !mismatched.empty() || (strict && (!missing.empty() || !unexpected.empty()));
  if (fail) {
    std::string msg = "[nn::Module::load_state_dict] " + type_name_ + ": the checkpoint does not fit";
    auto list = [&](const char* what, const std::vector<std::string>& keys) {
      if (keys.empty()) return;
      msg += "\n  " + std::string(what) + " (" + std::to_string(keys.size()) + "):";
      for (const std::string& k : keys) msg += "\n    " + k;
    };
    list("missing keys", missing);
    list("unexpected keys", unexpected);
    list("shape mismatches", mismatched);
    throw ValueError(msg);
  }
  lg::detail::tagged("nn::Module::load_state_dict", [&] {
    for (auto& [dst, src] : copies) dst->copy_(*src);
  });
}

std::string Module::describe() const {
  std::string out;
  walk(false, [&](const auto& path, const Module& m, const std::shared_ptr<Module>*) {
    const std::string p = path();
    out += (p.empty() ? std::string("(root)") : p) + "  " + m.type_name_;
    const std::string extra = m.extra_repr();
    out += extra.empty() ? "\n" : "(" + extra + ")\n";
  });
  return out;
}

}  // namespace lg::nn
