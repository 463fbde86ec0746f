// The module path of a PyTorch program's ops: nn.Module.__call__ replaced by a C callable that
// pushes the called module's name in its caller module (layer3 -> 1 -> conv2 =
// "layer3.1.conv2") for the ops inside, and pops it however the call ends. A ResNet-50 step
// makes about 170 module calls, so what each costs shows in a host-bound GPU step.
#include "module_call.h"

#include <cstddef>
#include <exception>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <layoutguard/hooks.h>

#include "module_roots.h"
#include "module_tree.h"
#include "py_text.h"
#include "torch/backward_node.h"

namespace lg_python {
namespace {

PyObject* g_module_call = nullptr;  // nn.Module.__call__ as it was before (a strong ref)

// The modules being called on this thread, innermost last. Borrowed: each is an argument of a
// call still running below.
thread_local std::vector<PyObject*> t_called;

// A path below some module as a tuple: the dotted path, then the _modules keys down to it
// (the key objects themselves: their text may be escaped, or hold a dot). "" alone for the
// module itself. A new reference, or nullptr (no Python error left set).
PyObject* path_tuple(const std::string& path, const std::vector<PyObject*>& keys) {
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(1 + keys.size()));
  PyObject* text = tuple != nullptr ? PyUnicode_FromStringAndSize(path.data(), static_cast<Py_ssize_t>(path.size())) : nullptr;
  if (text == nullptr) {
    Py_XDECREF(tuple);  // a tuple's empty slots are allowed
    PyErr_Clear();
    return nullptr;
  }
  PyTuple_SET_ITEM(tuple, 0, text);
  for (size_t i = 0; i < keys.size(); ++i) {
    Py_INCREF(keys[i]);
    PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i + 1), keys[i]);
  }
  return tuple;
}

// Whether the keys of `path` (a path tuple) still lead from `top` to `module`.
bool still_leads_to(PyObject* top, PyObject* path, PyObject* module) {
  PyObject* at = top;
  for (Py_ssize_t i = 1; i < PyTuple_GET_SIZE(path) && at != nullptr; ++i) {
    PyObject* below = module_children(at);
    at = below ? PyDict_GetItemWithError(below, PyTuple_GET_ITEM(path, i)) : nullptr;
  }
  PyErr_Clear();
  return at == module;
}

// A name as UTF-8: the str's own cached copy, or for a name that has none (lone surrogates)
// its text with \xNN escapes, kept in `escaped`.
std::string_view utf8(PyObject* str, std::string& escaped) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(str, &size);
  if (data != nullptr) return {data, static_cast<size_t>(size)};
  PyErr_Clear();
  escaped = utf8_of(str);
  return escaped;
}

// What each (parent, child) pair was last found under: the child's key in parent._modules; for
// a module deeper in the parent's tree (called as `self.block.head(x)`, a ModuleList's member)
// its path tuple; or, for a module the tree does not hold, a weak reference to the child (a
// miss, which walked the parent's tree once). A module's children rarely change, so the name
// is looked for once and then confirmed with a lookup per key (one that no longer leads to the
// child is looked for again). A miss stays a miss while the child lives: a module added to its
// caller's tree after being called from outside it keeps its class name. The entries are
// strong references, but the pairs' addresses are only compared, so a freed module cannot be
// misnamed.
struct PairHash {
  size_t operator()(const std::pair<PyObject*, PyObject*>& p) const {
    return std::hash<PyObject*>()(p.first) * 31 + std::hash<PyObject*>()(p.second);
  }
};
std::unordered_map<std::pair<PyObject*, PyObject*>, PyObject*, PairHash> g_child_names;
constexpr size_t kMaxChildNames = 1 << 14;  // forgotten all at once beyond this

bool still_names(PyObject* parent, PyObject* children, PyObject* name, PyObject* child) {
  if (PyUnicode_CheckExact(name)) {
    PyObject* held = PyDict_GetItemWithError(children, name);
    if (held == nullptr) PyErr_Clear();
    return held == child;
  }
  if (PyTuple_CheckExact(name)) return still_leads_to(parent, name, child);
  return PyWeakref_GetObject(name) == child;  // a miss, while the child lives
}

// The key of `child` in `children`, its path tuple deeper in `parent`'s tree, or a weak
// reference to it when the tree does not hold it. A new reference, or nullptr.
PyObject* look_for(PyObject* parent, PyObject* children, PyObject* child) {
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(children, &pos, &key, &value)) {
    if (value != child || !PyUnicode_CheckExact(key)) continue;
    Py_INCREF(key);
    return key;
  }
  std::string path;
  std::vector<PyObject*> keys;
  if (find_module_path(parent, child, path, &keys) && !path.empty()) return path_tuple(path, keys);
  // Outside the caller's tree, the child is the top of a tree of its own for the gradient
  // contract (it is named by its class below the caller).
  add_root(child);
  PyObject* miss = PyWeakref_NewRef(child, nullptr);
  if (miss == nullptr) PyErr_Clear();
  return miss;
}

// The name `parent` holds `child` under (its _modules key, or its dotted path deeper in the
// parent's tree), else the child's class name. Valid while the name and `escaped` live: until
// the next call, at least.
std::string_view child_name(PyObject* parent, PyObject* child, std::string& escaped) {
  PyObject* children = module_children(parent);
  if (children == nullptr) return Py_TYPE(child)->tp_name;
  PyObject* name = nullptr;
  const auto known = g_child_names.find({parent, child});
  if (known != g_child_names.end() && still_names(parent, children, known->second, child)) {
    name = known->second;
  } else {
    name = look_for(parent, children, child);
    if (name == nullptr) return Py_TYPE(child)->tp_name;
    if (g_child_names.size() >= kMaxChildNames) {
      for (auto& [pair, n] : g_child_names) Py_DECREF(n);
      g_child_names.clear();
    }
    PyObject*& slot = g_child_names[{parent, child}];
    Py_XDECREF(slot);
    slot = name;
  }
  if (PyUnicode_CheckExact(name)) return utf8(name, escaped);
  if (PyTuple_CheckExact(name)) return utf8(PyTuple_GET_ITEM(name, 0), escaped);
  return Py_TYPE(child)->tp_name;
}

// The path that each module called outside every module call while a backward node ran was
// found under: a weak reference to the root whose tree holds it, and its path tuple there.
// Confirmed by a lookup per key; looked for again when the root died or the keys no longer
// lead to the module.
struct ModelPath {
  PyObject* root;  // a weak reference
  PyObject* path;  // a path tuple
};
std::unordered_map<PyObject*, ModelPath> g_model_paths;

void forget(const ModelPath& entry) {
  Py_DECREF(entry.root);
  Py_DECREF(entry.path);
}

// Whether `module` lies in the tree of an outermost module called before, with its path in
// the outermost such tree in `path`. Asked only for a module called outside every module call
// while a backward node runs: activation checkpointing recomputes a forward there (a module,
// or a function that calls modules), and its modules keep the paths they have in the model.
// A walk over the trees the first time, then a lookup per key.
bool path_among_roots(PyObject* module, std::string& path) {
  const auto known = g_model_paths.find(module);
  if (known != g_model_paths.end()) {
    PyObject* root = PyWeakref_GetObject(known->second.root);
    if (root != nullptr && root != Py_None && still_leads_to(root, known->second.path, module)) {
      std::string escaped;
      path = utf8(PyTuple_GET_ITEM(known->second.path, 0), escaped);
      return true;
    }
    forget(known->second);
    g_model_paths.erase(known);
  }
  PyErr_Clear();
  PyObject* best_root = nullptr;  // borrowed from `roots`
  PyObject* tuple = nullptr;      // its path tuple, a new reference
  std::string candidate;
  std::vector<PyObject*> keys;
  const std::vector<PyObject*> roots = live_roots();
  for (PyObject* root : roots) {
    // The longest path is the outermost tree's: a module that is a root itself and also part
    // of the model is named in the model.
    if (find_module_path(root, module, candidate, &keys) && (best_root == nullptr || candidate.size() > path.size())) {
      path = candidate;
      best_root = root;
      Py_XDECREF(tuple);
      tuple = path_tuple(path, keys);  // now: the keys are borrowed from the tree's dicts
    }
  }
  PyObject* root_ref = best_root != nullptr ? PyWeakref_NewRef(best_root, nullptr) : nullptr;
  for (PyObject* root : roots) Py_DECREF(root);
  if (root_ref != nullptr && tuple != nullptr) {
    if (g_model_paths.size() >= kMaxChildNames) {
      for (auto& [m, entry] : g_model_paths) forget(entry);
      g_model_paths.clear();
    }
    if (!g_model_paths.try_emplace(module, ModelPath{root_ref, tuple}).second) forget({root_ref, tuple});
  } else {
    Py_XDECREF(root_ref);
    Py_XDECREF(tuple);
  }
  PyErr_Clear();
  return best_root != nullptr;
}

// nn.Module.__call__(self, *args, **kwargs) with the path pushed; the arguments go on as they
// came (vectorcall in, vectorcall on).
PyObject* call_with_path(PyObject*, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  if (g_module_call == nullptr || PyVectorcall_NARGS(nargsf) < 1) {
    PyErr_SetString(PyExc_TypeError, "layoutguard_torch: the module-path wrapper needs a module to call");
    return nullptr;
  }
  PyObject* self = args[0];
  std::vector<PyObject*>& called = t_called;  // one thread-local lookup
  try {
    std::string_view name;
    std::string path_in_model;  // both outlive the scope's push
    std::string escaped;
    if (!called.empty()) {
      name = child_name(called.back(), self, escaped);
    } else if (lg::torch_bridge::in_backward_node() && path_among_roots(self, path_in_model)) {
      name = path_in_model;
    } else {
      add_root(self);
    }
    lg::guard::ModuleScope scope(name);
    called.push_back(self);
    struct Pop {
      std::vector<PyObject*>& called;
      ~Pop() { called.pop_back(); }
    } pop{called};
    return PyObject_Vectorcall(g_module_call, args, nargsf, kwnames);
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
}

// The callable binds like a function: read from a module it is that module's bound method;
// from the class, itself (so code that saves and restores nn.Module.__call__ keeps working).
// Python calls it as an unbound method with the module first (Py_TPFLAGS_METHOD_DESCRIPTOR):
// a module call makes no bound method and runs no Python frame of layoutguard's. A Python
// function in between cost each module call a frame and its arguments repacked twice.
struct ModuleCall {
  PyObject_HEAD
  vectorcallfunc vectorcall;
};

PyObject* bind(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

// What introspection asks of a function (inspect.signature, functools.wraps, error messages).
// The names and code are those of the function it calls (`_wrapped_call_impl` from torch 2.1,
// `_call_impl` before), for torch.compile: given a module, it compiles the module's
// `__call__`, and a callable with neither of those names it wraps in a Python function of its
// own, whose call of a bound method with a C function torch 2.5's compiler cannot trace
// ("expected FunctionType"); one with those names must have `__code__`. With them it calls
// this one as it calls the original and compiles the original's frame below. An original that
// lacks one (another tool's callable object) gives the fallback, or no such attribute.
PyObject* original_attribute(const char* name, const char* fallback) {
  if (g_module_call != nullptr) {
    PyObject* value = PyObject_GetAttrString(g_module_call, name);
    if (value != nullptr || !PyErr_ExceptionMatches(PyExc_AttributeError)) return value;
    PyErr_Clear();
  }
  if (fallback != nullptr) return PyUnicode_FromString(fallback);
  PyErr_SetString(PyExc_AttributeError, name);
  return nullptr;
}
PyObject* name_of(PyObject*, void*) { return original_attribute("__name__", "__call__"); }
PyObject* qualified_name_of(PyObject*, void*) { return original_attribute("__qualname__", "Module.__call__"); }
PyObject* code_of(PyObject*, void*) { return original_attribute("__code__", nullptr); }
PyObject* signature_of(PyObject*, void*) { return PyUnicode_FromString("($self, /, *args, **kwargs)"); }

PyGetSetDef g_attributes[] = {
    {"__name__", name_of, nullptr, nullptr, nullptr},
    {"__qualname__", qualified_name_of, nullptr, nullptr, nullptr},
    {"__code__", code_of, nullptr, nullptr, nullptr},
    {"__text_signature__", signature_of, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyTypeObject* module_call_type() {
  static PyTypeObject type = [] {
    PyTypeObject t{};
    Py_SET_REFCNT(reinterpret_cast<PyObject*>(&t), 1);
    t.tp_name = "layoutguard_torch._C.ModuleCall";
    t.tp_doc = "nn.Module.__call__ with the module path pushed (layoutguard_torch)";
    t.tp_basicsize = sizeof(ModuleCall);
    t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR;
    t.tp_vectorcall_offset = offsetof(ModuleCall, vectorcall);
    t.tp_call = PyVectorcall_Call;
    t.tp_descr_get = bind;
    t.tp_getset = g_attributes;
    return t;
  }();
  return &type;
}

}  // namespace

PyObject* make_module_call() {
  if (PyType_Ready(module_call_type()) < 0) return nullptr;
  ModuleCall* call = PyObject_New(ModuleCall, module_call_type());
  if (call == nullptr) return nullptr;
  call->vectorcall = call_with_path;
  return reinterpret_cast<PyObject*>(call);
}

void set_module_call(PyObject* original) {
  // The wrapper itself (the package imported again, a user's reload) would call itself.
  if (Py_TYPE(original) == module_call_type()) {
    Py_DECREF(original);
    return;
  }
  Py_XDECREF(g_module_call);
  g_module_call = original;
}

}  // namespace lg_python
