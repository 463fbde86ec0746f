// The outermost modules called (see module_roots.h). Not a Python WeakSet: it asks each module
// for its hash and equality, so an unhashable module's first call would fail, and two modules
// that compare equal would be one root.
#include "module_roots.h"

#include <algorithm>
#include <cstddef>
#include <unordered_map>

namespace lg_python {
namespace {

struct Roots {
  bool collecting = false;
  std::vector<PyObject*> in_order;                    // weak references, first called first
  std::unordered_map<PyObject*, PyObject*> by_module;  // the module's address -> its reference
  size_t prune_at = 64;                               // dead references are dropped past this many
};
Roots g_roots;

bool alive(PyObject* ref) {
  PyObject* module = PyWeakref_GetObject(ref);
  return module != nullptr && module != Py_None;
}

// Forgets the roots that were freed: a program that builds and drops a model per step would
// otherwise grow the lists by one dead reference per step.
void prune() {
  auto& v = g_roots.in_order;
  std::erase_if(g_roots.by_module, [](const auto& entry) { return !alive(entry.second); });
  const auto dead = std::stable_partition(v.begin(), v.end(), alive);
  for (auto it = dead; it != v.end(); ++it) Py_DECREF(*it);
  v.erase(dead, v.end());
  PyErr_Clear();
}

}  // namespace

void collect_roots() { g_roots.collecting = true; }

void add_root(PyObject* module) {
  if (!g_roots.collecting) return;
  const auto known = g_roots.by_module.find(module);
  if (known != g_roots.by_module.end()) {
    if (PyWeakref_GetObject(known->second) == module) return;
    // A freed root's address, taken by a new module: the new one is a root of its own.
    prune();
  }
  PyObject* ref = PyWeakref_NewRef(module, nullptr);
  if (ref == nullptr) {
    PyErr_Clear();
    return;
  }
  g_roots.in_order.push_back(ref);
  g_roots.by_module[module] = ref;
  if (g_roots.in_order.size() >= g_roots.prune_at) {
    prune();
    g_roots.prune_at = std::max<size_t>(64, 2 * g_roots.in_order.size());
  }
}

std::vector<PyObject*> live_roots() {
  std::vector<PyObject*> roots;
  for (PyObject* ref : g_roots.in_order) {
    PyObject* module = PyWeakref_GetObject(ref);
    if (module == nullptr || module == Py_None) continue;
    Py_INCREF(module);
    roots.push_back(module);
  }
  PyErr_Clear();
  return roots;
}

}  // namespace lg_python
