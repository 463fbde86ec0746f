// The module tree walk behind the gradient contract. It runs after every backward, so it stays
// in C: named_parameters() in Python builds every dotted name and a generator frame per module
// (about 0.5 ms for ResNet-50 on torch 1.13), where only a mismatch needs a name.
#include "module_tree.h"

#include <torch/csrc/autograd/python_variable.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <layoutguard/torch_contracts.h>

#include "py_text.h"
#include "torch/gradient_contract.h"

namespace lg_python {
namespace {

// The interned names of the two entries read.
PyObject* interned(const char* text, PyObject*& slot) {
  if (slot == nullptr) slot = PyUnicode_InternFromString(text);
  return slot;
}
PyObject* parameters_key() {
  static PyObject* key = nullptr;
  return interned("_parameters", key);
}
PyObject* modules_key() {
  static PyObject* key = nullptr;
  return interned("_modules", key);
}

// The entries `keys` of obj.__dict__ (borrowed: the object's dict keeps them alive), each
// nullptr unless it is a dict; one dict fetch for all of them. No Python error is left set.
template <size_t N>
void dict_entries(PyObject* obj, PyObject* const (&keys)[N], PyObject* (&entries)[N]) {
  for (PyObject*& e : entries) e = nullptr;
  PyObject* dict = PyObject_GenericGetDict(obj, nullptr);
  if (dict == nullptr) {
    PyErr_Clear();
    return;
  }
  for (size_t i = 0; i < N; ++i) {
    PyObject* entry = keys[i] ? PyDict_GetItemWithError(dict, keys[i]) : nullptr;
    entries[i] = entry != nullptr && PyDict_Check(entry) ? entry : nullptr;
  }
  Py_DECREF(dict);
  PyErr_Clear();
}

// A set of object addresses, open addressing: a walk over ResNet-50 adds some 320 of them, and
// a node-based set would allocate each. The tables are the thread's, kept from walk to walk:
// the contract walks after every backward, and two fresh 4 KiB tables per walk are two large
// mallocs, each of which may set off a consolidation of the heap. A pool, not one table per
// set, so that a walk inside a walk gets tables of its own.
class AddressSet {
 public:
  AddressSet() {
    std::vector<std::vector<PyObject*>>& pool = spare_tables();
    if (pool.empty()) return;
    slots_.swap(pool.back());
    pool.pop_back();
    std::fill(slots_.begin(), slots_.end(), nullptr);
  }
  AddressSet(const AddressSet&) = delete;
  ~AddressSet() {
    if (slots_.empty()) return;
    try {
      spare_tables().push_back(std::move(slots_));
    } catch (const std::bad_alloc&) {
      // The pool could not grow: the table is freed instead, and the next walk makes its own.
    }
  }

  bool contains(PyObject* p) const {
    if (slots_.empty()) return false;
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash(p) & mask;; i = (i + 1) & mask) {
      if (slots_[i] == p) return true;
      if (slots_[i] == nullptr) return false;
    }
  }

  // Whether `p` was new.
  bool insert(PyObject* p) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    return place(slots_, p);
  }

 private:
  static size_t hash(PyObject* p) { return (reinterpret_cast<uintptr_t>(p) >> 4) * 0x9E3779B97F4A7C15ull >> 20; }
  bool place(std::vector<PyObject*>& slots, PyObject* p) {
    const size_t mask = slots.size() - 1;
    for (size_t i = hash(p) & mask;; i = (i + 1) & mask) {
      if (slots[i] == p) return false;
      if (slots[i] == nullptr) {
        slots[i] = p;
        ++size_;
        return true;
      }
    }
  }
  void grow() {
    std::vector<PyObject*> bigger(slots_.empty() ? 512 : 2 * slots_.size(), nullptr);
    size_ = 0;
    for (PyObject* p : slots_)
      if (p != nullptr) place(bigger, p);
    slots_.swap(bigger);
  }
  static std::vector<std::vector<PyObject*>>& spare_tables() {
    thread_local std::vector<std::vector<PyObject*>> pool;
    return pool;
  }
  std::vector<PyObject*> slots_;
  size_t size_ = 0;
};

// A new reference, released on scope exit.
struct Owned {
  explicit Owned(PyObject* object) : p(object) {}
  Owned(Owned&& other) noexcept : p(std::exchange(other.p, nullptr)) {}
  Owned(const Owned&) = delete;
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      Py_XDECREF(p);
      p = std::exchange(other.p, nullptr);
    }
    return *this;
  }
  ~Owned() { Py_XDECREF(p); }
  explicit operator bool() const { return p != nullptr; }
  PyObject* p;
};

// A reference taken to a borrowed object.
Owned hold(PyObject* borrowed) {
  Py_XINCREF(borrowed);
  return Owned(borrowed);
}

// The modules below one module, depth first in registration order as named_modules() goes,
// each step a (key, child) entry of some _modules dict. A loop, not recursion: a tree deeper
// than the C stack (a chain of wrappers thousands deep) would overflow it, where PyTorch's own
// walks raise RecursionError, and the gradient contract walks after every backward. The dicts,
// keys and children on the way down are held: code that a walk runs (a TorchScript module's
// named_parameters()) may change the tree.
class Descent {
 public:
  explicit Descent(PyObject* top) { levels_.push_back({hold(module_children(top)), 0, Owned(nullptr)}); }

  // Moves to the next child: the first of the current child's own children if enter() was
  // called for it, else its next sibling, or the next one further up. false at the end.
  bool next() {
    while (!levels_.empty()) {
      Level& level = levels_.back();
      PyObject *key, *child;
      if (level.children && PyDict_Next(level.children.p, &level.pos, &key, &child)) {
        if (child == Py_None) continue;  // a slot registered empty
        key_ = hold(key);
        child_ = hold(child);
        return true;
      }
      levels_.pop_back();
    }
    return false;
  }
  PyObject* child() const { return child_.p; }

  // Walks the current child's children before its siblings.
  void enter() { levels_.push_back({hold(module_children(child_.p)), 0, hold(key_.p)}); }

  // The _modules keys from the top down to the current child (borrowed: held by this walk).
  void keys_to_child(std::vector<PyObject*>& keys) const {
    keys.clear();
    for (size_t i = 1; i < levels_.size(); ++i) keys.push_back(levels_[i].key.p);
    keys.push_back(key_.p);
  }

 private:
  struct Level {
    Owned children;  // the _modules dict, or none
    Py_ssize_t pos;
    Owned key;  // the key of the module whose children these are (none for the top)
  };
  std::vector<Level> levels_;
  Owned key_{nullptr}, child_{nullptr};
};

// A dict key as text ("?" for a key that is not a string).
std::string text_of(PyObject* key) { return PyUnicode_Check(key) ? utf8_of(key) : "?"; }

// Appends one _modules or _parameters key to a dotted name as named_modules() and
// named_parameters() join them: a dot only after a name that is not empty, so that a key ""
// adds nothing at the top and a trailing dot below it.
void append_dotted(std::string& name, PyObject* key) {
  if (!name.empty()) name += '.';
  name += text_of(key);
}

// A parameter whose .grad breaks the contract, found by a walk (the tensors are held: a
// TorchScript module's named_parameters() makes the Python objects it lists).
struct Mismatch {
  std::string name;
  at::Tensor param, grad;
};

struct Walk {
  AddressSet modules_seen;
  AddressSet parameters_seen;
  std::vector<Mismatch> found;
  const Descent* below = nullptr;  // where the walk is below the root (none at the root)

  // `key`'s dotted name below the module being visited, as named_parameters() gives it:
  // built only for a mismatch.
  std::string name_of(PyObject* key) const {
    std::string name;
    if (below != nullptr) {
      std::vector<PyObject*> path;
      below->keys_to_child(path);
      for (PyObject* part : path) append_dotted(name, part);
    }
    append_dotted(name, key);
    return name;
  }

  // One parameter, once: a strided .grad of its sizes with other strides is reported under
  // the name `key` has below the module being visited.
  void check(PyObject* key, PyObject* value) {
    // A type check, not THPVariable_Check: torch 1.13's runs isinstance, which calls
    // nn.Parameter's Python __instancecheck__ for every parameter.
    PyTypeObject* const tensor_type = reinterpret_cast<PyTypeObject*>(THPVariableClass);
    if (!PyObject_TypeCheck(value, tensor_type) || !parameters_seen.insert(value)) return;
    const at::Tensor& param = THPVariable_Unpack(value);
    const at::Tensor& grad = param.grad();
    if (lg::torch_bridge::breaks_gradient_contract(param, grad)) found.push_back({name_of(key), param, grad});
  }

  // Pre-order, like named_modules(): each module's own parameters, then its children's.
  void visit(PyObject* root) {
    if (!modules_seen.insert(root) || !visit_own(root)) return;
    Descent descent(root);
    below = &descent;
    while (descent.next())
      if (modules_seen.insert(descent.child()) && visit_own(descent.child())) descent.enter();
    below = nullptr;
  }

  // The module's own parameters; whether it has children to walk.
  bool visit_own(PyObject* module) {
    PyObject* entries[2];
    dict_entries(module, {parameters_key(), modules_key()}, entries);
    if (entries[0] == nullptr && entries[1] == nullptr) {
      visit_listed(module);
      return false;
    }
    if (PyObject* parameters = entries[0]) {
      PyObject *key, *value;
      Py_ssize_t pos = 0;
      while (PyDict_Next(parameters, &pos, &key, &value)) check(key, value);
    }
    return entries[1] != nullptr;
  }

  // A module whose tree is not in its instance dicts (a TorchScript module keeps it in C++):
  // its own named_parameters() lists its parameters with their dotted names below it. The
  // contract runs after every backward, so a module that cannot list them is passed over,
  // never an error in the user's program.
  void visit_listed(PyObject* module) {
    const Owned listed{PyObject_CallMethod(module, "named_parameters", nullptr)};
    const Owned items{listed.p ? PyObject_GetIter(listed.p) : nullptr};
    if (items.p != nullptr) {
      // Owned: a violation in throw mode leaves through check().
      while (const Owned item{PyIter_Next(items.p)}) {
        if (PyTuple_Check(item.p) && PyTuple_GET_SIZE(item.p) == 2)
          check(PyTuple_GET_ITEM(item.p, 0), PyTuple_GET_ITEM(item.p, 1));
      }
    }
    PyErr_Clear();
  }
};

// Every module below `module` (not itself) into `found`.
void collect_descendants(PyObject* module, AddressSet& found) {
  Descent descent(module);
  while (descent.next())
    if (found.insert(descent.child())) descent.enter();
}

}  // namespace

PyObject* module_children(PyObject* module) {
  PyObject* entry[1];
  dict_entries(module, {modules_key()}, entry);
  return entry[0];
}

PyObject* module_parameters(PyObject* module) {
  PyObject* entry[1];
  dict_entries(module, {parameters_key()}, entry);
  return entry[0];
}

void check_parameter_gradients(const std::vector<PyObject*>& roots) {
  if (THPVariableClass == nullptr) return;  // torch not imported yet: no tensor exists
  // Each root is walked as before (a walk per root, so that an inner root's walk cannot hide a
  // parameter from its outer root's); which roots lie inside others is asked only when a
  // gradient breaks the contract, as a second root (a loss module) is common and a mismatch
  // is not.
  std::vector<std::vector<Mismatch>> found(roots.size());
  bool any = false;
  for (size_t i = 0; i < roots.size(); ++i) {
    Walk walk;
    walk.visit(roots[i]);
    any = any || !walk.found.empty();
    found[i] = std::move(walk.found);
  }
  if (!any) return;
  // A root that another root's tree holds was also walked there, under its longer names. Of
  // roots that hold one another (a submodule keeping its parent as a child), the first stays.
  std::vector<bool> inner(roots.size(), false);
  if (roots.size() > 1) {
    std::vector<AddressSet> below(roots.size());
    for (size_t i = 0; i < roots.size(); ++i) collect_descendants(roots[i], below[i]);
    for (size_t i = 0; i < roots.size(); ++i)
      for (size_t j = 0; j < roots.size() && !inner[i]; ++j)
        inner[i] = j != i && below[j].contains(roots[i]) && (j < i || !below[i].contains(roots[j]));
  }
  // A parameter in two trees is reported once, under its first name.
  AddressSet reported;
  for (size_t i = 0; i < roots.size(); ++i) {
    if (inner[i]) continue;
    for (const Mismatch& m : found[i])
      if (reported.insert(reinterpret_cast<PyObject*>(m.param.unsafeGetTensorImpl())))
        lg::torch::check_gradient(m.name, m.param, m.grad);
  }
}

bool find_module_path(PyObject* root, PyObject* module, std::string& path, std::vector<PyObject*>* keys) {
  path.clear();
  if (keys) keys->clear();
  if (root == module) return true;
  // Pre-order, each module once, like named_modules().
  AddressSet seen;
  seen.insert(root);
  Descent descent(root);
  while (descent.next()) {
    if (!seen.insert(descent.child())) continue;
    if (descent.child() != module) {
      descent.enter();
      continue;
    }
    std::vector<PyObject*> down;
    descent.keys_to_child(down);
    for (PyObject* key : down) append_dotted(path, key);
    if (keys) *keys = std::move(down);
    return true;
  }
  return false;
}

}  // namespace lg_python
