// The module path of a PyTorch program's ops: nn.Module.__call__ replaced by a C callable that
// pushes the called module's name in its caller module (layer3 -> 1 -> conv2 =
// "layer3.1.conv2") for the ops inside, and pops it however the call ends. A ResNet-50 step
// makes about 170 module calls, so what each costs shows in a host-bound GPU step.
#include "module_call.h"

#include <cstddef>
#include <exception>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <layoutguard/hooks.h>

#include "module_tree.h"

namespace lg_python {
namespace {

PyObject* g_module_call = nullptr;  // nn.Module.__call__ as it was before (a strong ref)
PyObject* g_roots = nullptr;        // layoutguard_torch's weak set of the outermost modules called

// The modules being called on this thread, innermost last. Borrowed: each is an argument of a
// call still running below.
thread_local std::vector<PyObject*> t_called;

// The key each (parent, child) pair was last found under in parent._modules: a module's
// children rarely change, so the name is looked for once and then confirmed with one dict
// lookup (a key that no longer holds the child is looked for again). The keys are strong
// references; the pairs' addresses are only compared, so a freed module cannot be misnamed.
struct PairHash {
  size_t operator()(const std::pair<PyObject*, PyObject*>& p) const {
    return std::hash<PyObject*>()(p.first) * 31 + std::hash<PyObject*>()(p.second);
  }
};
std::unordered_map<std::pair<PyObject*, PyObject*>, PyObject*, PairHash> g_child_keys;
constexpr size_t kMaxChildKeys = 1 << 14;  // forgotten all at once beyond this

std::string_view utf8(PyObject* str) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(str, &size);
  if (data == nullptr) {
    PyErr_Clear();
    return {};
  }
  return {data, static_cast<size_t>(size)};
}

// The name `parent` holds `child` under (its _modules key), else the child's class name.
// Valid while the key lives: until the next call, at least.
std::string_view child_name(PyObject* parent, PyObject* child) {
  PyObject* children = module_children(parent);
  if (children != nullptr) {
    const auto known = g_child_keys.find({parent, child});
    if (known != g_child_keys.end()) {
      if (PyDict_GetItemWithError(children, known->second) == child) return utf8(known->second);
      PyErr_Clear();
    }
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(children, &pos, &key, &value)) {
      if (value != child || !PyUnicode_Check(key)) continue;
      if (g_child_keys.size() >= kMaxChildKeys) {
        for (auto& [pair, k] : g_child_keys) Py_DECREF(k);
        g_child_keys.clear();
      }
      Py_INCREF(key);
      PyObject*& slot = g_child_keys[{parent, child}];
      Py_XDECREF(slot);
      slot = key;
      return utf8(key);
    }
  }
  return Py_TYPE(child)->tp_name;
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
    if (!called.empty()) {
      name = child_name(called.back(), self);
    } else if (g_roots != nullptr) {
      PyObject* added = PyObject_CallMethod(g_roots, "add", "O", self);
      if (added == nullptr) return nullptr;
      Py_DECREF(added);
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
PyObject* name_of(PyObject*, void*) { return PyUnicode_FromString("__call__"); }
PyObject* qualified_name_of(PyObject*, void*) { return PyUnicode_FromString("Module.__call__"); }
PyObject* signature_of(PyObject*, void*) { return PyUnicode_FromString("($self, /, *args, **kwargs)"); }

PyGetSetDef g_attributes[] = {
    {"__name__", name_of, nullptr, nullptr, nullptr},
    {"__qualname__", qualified_name_of, nullptr, nullptr, nullptr},
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
  Py_XDECREF(g_module_call);
  g_module_call = original;
}

void set_roots(PyObject* roots) {
  Py_XDECREF(g_roots);
  g_roots = roots;
}

}  // namespace lg_python
