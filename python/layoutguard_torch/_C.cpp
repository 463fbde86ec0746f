// layoutguard_torch._C: the Python side's door to liblayoutguard_torch. It adds what only
// Python knows -- the user's source line, the nn.Module path -- and raises violations as the
// package's LayoutViolationError, a RuntimeError subclass, at the offending call.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <frameobject.h>

#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/version.h>
#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/python_anomaly_mode.h>
#endif

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <layoutguard/error.h>
#include <layoutguard/guard.h>
#include <layoutguard/report.h>
#include <layoutguard/torch.h>
#include <layoutguard/torch_contracts.h>

#include "core/printable_text.h"
#include "guard/inherited_files.h"
#include "guard/records.h"
#include "module_call.h"
#include "module_roots.h"
#include "module_tree.h"
#include "py_text.h"
#include "torch/backward_node.h"

namespace py = pybind11;
using lg_python::utf8_of;

namespace {

PyObject* g_violation_type = nullptr;  // layoutguard_torch.LayoutViolationError (a strong ref)
PyObject* g_config_error_type = nullptr;  // layoutguard_torch.ConfigError
PyObject* g_mismatch_type = nullptr;  // layoutguard_torch.ShadowMismatchError

// torch's Python bindings turn a PyTorchError into its python_type() with the message.
struct PythonViolation : torch::PyTorchError {
  using torch::PyTorchError::PyTorchError;
  PyObject* python_type() override { return g_violation_type ? g_violation_type : PyExc_RuntimeError; }
};

// torch's translation of a PyTorchError decodes its message strictly: valid UTF-8 for it.
void raise_violation(const lg::LayoutViolation& v) { throw PythonViolation(lg::detail::valid_utf8(v.what())); }

struct PythonMismatch : torch::PyTorchError {
  using torch::PyTorchError::PyTorchError;
  PyObject* python_type() override { return g_mismatch_type ? g_mismatch_type : PyExc_RuntimeError; }
};

void raise_mismatch(const lg::ShadowMismatch& m) { throw PythonMismatch(lg::detail::valid_utf8(m.what())); }

// A bad setting met at an op: the same layoutguard_torch.ConfigError as enable() raises.
struct PythonConfigError : torch::PyTorchError {
  using torch::PyTorchError::PyTorchError;
  PyObject* python_type() override { return g_config_error_type ? g_config_error_type : PyExc_RuntimeError; }
};

void raise_config_error(const lg::ConfigError& e) { throw PythonConfigError(lg::detail::valid_utf8(e.what())); }

// Where files that are not the user's begin (torch, the package, the standard library) and
// where the user's begin again inside those (site-packages): the longest prefix decides.
struct Root {
  std::string prefix;
  bool library;
};

bool is_library_file(std::string_view file, const std::vector<Root>& roots) {
  size_t longest = 0;
  bool library = false;
  for (const Root& root : roots)
    if (root.prefix.size() > longest && file.compare(0, root.prefix.size(), root.prefix) == 0) {
      longest = root.prefix.size();
      library = root.library;
    }
  // Also PyTorch's generated code: the forward of an FX GraphModule ("<eval_with_key>.3"), which
  // torch.compile's eager backends, compiled autograd and torch.export's programs run.
  return library || file.starts_with("<frozen ") || file.starts_with("<eval_with_key>") ||
         file.find("/runpy.py") != std::string_view::npos;
}

std::vector<Root> g_library_roots;  // set once at import, read under the GIL
std::string g_package_root;          // this package's directory: its frames are never shown

std::string attr_string(PyObject* obj, const char* name) {
  PyObject* v = PyObject_GetAttrString(obj, name);
  if (!v) {
    PyErr_Clear();
    return {};
  }
  std::string out = utf8_of(v);
  Py_DECREF(v);
  return out;
}

// "file:line in function" of the innermost user frame in the traceback that PyTorch's anomaly
// mode stored when the autograd node running on this thread was made: the forward call that
// made it. "" without anomaly mode at that time, and in torch 1.x, which has no way to reach
// the running node (get_current_node is 2.x). Under the GIL.
std::string forward_site_of_running_node() {
#if TORCH_VERSION_MAJOR >= 2
  const auto node = torch::autograd::get_current_node();  // shared_ptr, intrusive_ptr from 2.13
  if (!node) return {};
  // In a Python process the engine is PythonEngine, whose nodes carry PyAnomalyMetadata (its
  // type info is not exported, so no dynamic_cast).
  auto* meta = static_cast<torch::autograd::PyAnomalyMetadata*>(node->metadata());
  PyObject* frames = meta ? PyDict_GetItemString(meta->dict(), torch::autograd::PyAnomalyMetadata::ANOMALY_TRACE_KEY)
                          : nullptr;  // borrowed
  if (frames == nullptr || !PyList_Check(frames)) return {};
  // traceback.format_list() entries, outermost first: '  File "f.py", line 3, in g\n    code\n'.
  for (Py_ssize_t i = PyList_Size(frames) - 1; i >= 0; --i) {
    const char* entry = PyUnicode_Check(PyList_GetItem(frames, i)) ? PyUnicode_AsUTF8(PyList_GetItem(frames, i)) : nullptr;
    if (entry == nullptr) continue;
    const std::string text = entry;
    const size_t file_at = text.find("File \"");
    const size_t file_end = file_at == std::string::npos ? file_at : text.find("\", line ", file_at + 6);
    if (file_end == std::string::npos) continue;
    const std::string file = text.substr(file_at + 6, file_end - file_at - 6);
    if (is_library_file(file, g_library_roots)) continue;
    const size_t line_at = file_end + 8;
    const size_t in_at = text.find(", in ", line_at);
    const size_t eol = text.find('\n', line_at);
    if (in_at == std::string::npos || eol == std::string::npos || in_at > eol) continue;
    return file + ":" + text.substr(line_at, in_at - line_at) + " in " + text.substr(in_at + 5, eol - in_at - 5);
  }
#endif
  return {};
}

// The innermost frame of the thread `origin` (a new reference), or nullptr: the thread that
// called backward() waits in it while a device thread runs the backward ops. Under the GIL.
PyFrameObject* frame_of_thread(uint64_t origin) {
  try {
    py::dict frames = py::module_::import("sys").attr("_current_frames")();
    py::object frame = frames.attr("get")(py::int_(origin));
    if (frame.is_none()) return nullptr;
    return reinterpret_cast<PyFrameObject*>(frame.release().ptr());
  } catch (const py::error_already_set&) {
    return nullptr;
  }
}

// The GIL for a walk over the Python frames, and the error indicator as the walk found it: a
// lookup's failure during the walk is cleared, an exception already pending is kept. Released
// however the walk ends.
class FrameWalk {
 public:
  FrameWalk() : gil_(PyGILState_Ensure()) {
#if PY_VERSION_HEX >= 0x030C0000
    pending_ = PyErr_GetRaisedException();
#else
    PyErr_Fetch(&type_, &pending_, &traceback_);
#endif
  }
  ~FrameWalk() {
    if (PyErr_Occurred()) PyErr_Clear();
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(pending_);
#else
    PyErr_Restore(type_, pending_, traceback_);
#endif
    PyGILState_Release(gil_);
  }
  FrameWalk(const FrameWalk&) = delete;
  FrameWalk& operator=(const FrameWalk&) = delete;

 private:
  PyGILState_STATE gil_;
  PyObject* pending_ = nullptr;
#if PY_VERSION_HEX < 0x030C0000
  PyObject* type_ = nullptr;
  PyObject* traceback_ = nullptr;
#endif
};

// Where the thread's work came from when it runs no frame of the user's: the line that
// submitted its innermost pool task, or else the one that started the thread, with a note
// saying which ("" when neither is known). Defined with the tasks' tokens below.
std::string handed_over_site();

// The innermost frame of the user's code ("train.py:42 in step") and the Python stack, most
// recent call first. A thread that runs no Python (autograd's device threads) has neither:
// it reports the stack of the thread that called backward(), marked so. A pool task that runs
// no code of the user's (submit(torch.cumsum, x, 1)) reports the submit() call's line.
void locate(std::string& source_location, std::string& stack) {
  if (!Py_IsInitialized()) return;
  const FrameWalk walk;
  PyFrameObject* frame = PyEval_GetFrame();
  Py_XINCREF(frame);
  bool from_origin = false;
  if (frame == nullptr) {
    if (const std::optional<uint64_t> origin = lg::torch::backward_origin()) {
      frame = frame_of_thread(*origin);
      from_origin = frame != nullptr;
      if (from_origin) stack += "    (autograd's worker thread; the thread that called backward():)\n";
    }
  }
  if (const std::string made = forward_site_of_running_node(); !made.empty())
    stack += "    (the autograd node was made by the forward call at " + made + ")\n";
  int shown = 0;
  while (frame != nullptr) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    const std::string file = attr_string(reinterpret_cast<PyObject*>(code), "co_filename");
    const std::string function = attr_string(reinterpret_cast<PyObject*>(code), "co_name");
    const int line = PyFrame_GetLineNumber(frame);
    Py_DECREF(code);
    // The package's own wrappers (a pool task's, a thread's run) are never the user's, nor telling.
    const bool own = !g_package_root.empty() && file.compare(0, g_package_root.size(), g_package_root) == 0;
    const bool library = own || is_library_file(file, g_library_roots);
    if (source_location.empty() && !library)
      source_location = file + ":" + std::to_string(line) + " in " + function;
    if (!own && shown < 32 && (!library || shown == 0)) {
      stack += "    #" + std::to_string(shown) + " " + function + " at " + file + ":" + std::to_string(line) + "\n";
      ++shown;
    }
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  if (from_origin && !source_location.empty()) source_location += " (the backward() call)";
  if (source_location.empty()) {
    if (std::string site = handed_over_site(); !site.empty()) {
      stack = "    (no frame of the user's on this thread; the work was handed to it at " + site + ")\n" + stack;
      source_location = std::move(site);
    }
  }
}

// Option forward_calls: the innermost frame of the user's code ("model.py:42 in forward"), or
// nothing on a thread that runs no Python. Asked after each forward call that made autograd
// nodes: one walk up to the first frame of the user's, no stack text.
void find_call_site(std::string& call_site) {
  if (!Py_IsInitialized()) return;
  const FrameWalk walk;
  PyFrameObject* frame = PyEval_GetFrame();
  Py_XINCREF(frame);
  while (frame != nullptr) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    // The code object's own strings, whose UTF-8 form the str caches: no attribute lookup.
    Py_ssize_t size = 0;
    const char* cached = PyUnicode_AsUTF8AndSize(code->co_filename, &size);
    if (cached == nullptr) PyErr_Clear();
    // A name without a UTF-8 form (a file name that is not UTF-8) is converted; not a str:
    // the frame is skipped.
    const std::string converted = cached == nullptr ? utf8_of(code->co_filename) : std::string();
    const std::string_view file = cached != nullptr ? std::string_view(cached, static_cast<size_t>(size)) : converted;
    if (!file.empty() && !is_library_file(file, g_library_roots)) {
      const std::string function = utf8_of(code->co_name);
      call_site.append(file)
          .append(":")
          .append(std::to_string(PyFrame_GetLineNumber(frame)))
          .append(" in ")
          .append(function.empty() ? "?" : function);
    }
    Py_DECREF(code);
    PyFrameObject* back = call_site.empty() ? PyFrame_GetBack(frame) : nullptr;
    Py_DECREF(frame);
    frame = back;
  }
}

// Whether the thread's innermost Python frame is the program's: its code, not PyTorch's (the
// Python side of backward(), a checkpoint's node, an autograd Function's machinery) or this
// package's, made the call that asks. A thread that runs no Python (autograd's device
// threads between Python nodes) runs a derivative formula.
bool program_code_runs() {
  if (!Py_IsInitialized()) return false;
  const FrameWalk walk;
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  if (frame == nullptr) return false;
  PyCodeObject* code = PyFrame_GetCode(frame);
  const std::string file = utf8_of(code->co_filename);
  Py_DECREF(code);
  const bool own = !g_package_root.empty() && file.compare(0, g_package_root.size(), g_package_root) == 0;
  return !file.empty() && !own && !is_library_file(file, g_library_roots);
}

// The objects behind a thread's tokens (its open guard() blocks, handed-over tasks and
// backward calls), innermost last. A token is taken back only as its thread's innermost one:
// a wrong or stale token is a ValueError, never a delete of something else. A thread that
// ends inside a block (an abandoned generator) leaves its objects undestroyed: at thread exit
// the thread-locals they would restore may already be gone.
template <typename T>
class TokenStack {
 public:
  uintptr_t push(std::unique_ptr<T> object) {
    objects_.push_back(object.get());
    return reinterpret_cast<uintptr_t>(object.release());
  }
  const T* innermost() const { return objects_.empty() ? nullptr : objects_.back(); }
  void pop(uintptr_t token, const char* misuse) {
    if (objects_.empty() || reinterpret_cast<uintptr_t>(objects_.back()) != token) throw py::value_error(misuse);
    const std::unique_ptr<T> innermost(objects_.back());
    objects_.pop_back();
  }

 private:
  std::vector<T*> objects_;
};

// A pool task run in the state of the code that submitted it, and that code's line.
struct HandedOverTask {
  HandedOverTask(const lg::torch::Handover& handover, std::string submitted_at)
      : scope(handover), site(std::move(submitted_at)) {}
  lg::torch::HandoverScope scope;
  std::string site;  // "file.py:12 in main", or ""
};

thread_local TokenStack<lg::torch::Scope> t_guard_scopes;
thread_local TokenStack<HandedOverTask> t_handed_over_tasks;
thread_local std::string t_thread_start_site;  // the Thread.start() call's line, or ""

std::string handed_over_site() {
  // A pool's thread was started by some earlier submit(): its start says nothing of this task.
  if (const HandedOverTask* task = t_handed_over_tasks.innermost())
    return task->site.empty() ? std::string() : task->site + " (the submit() call)";
  return t_thread_start_site.empty() ? std::string() : t_thread_start_site + " (the Thread.start() call)";
}
thread_local TokenStack<lg::torch::BackwardOrigin> t_backward_origins;

lg::guard::Mode parse_mode(const std::string& text) {
  // The native parser: the same values and the same ConfigError text.
  return lg::guard::parse_options(text, "").mode;
}

// A Handover from _handover_state's answer.
lg::torch::Handover handover_of(const std::optional<std::string>& state) {
  lg::torch::Handover handover;
  handover.switched_on = state.has_value();
  if (state && !state->empty()) handover.scope_mode = parse_mode(*state);
  return handover;
}

// lg::ConfigError reaches Python as layoutguard_torch.ConfigError (a ValueError), a violation
// as LayoutViolationError, a mismatch as ShadowMismatchError, other lg::Error as RuntimeError,
// with their messages.
// PyErr_SetString decodes strictly, and a message it cannot decode leaves the exception without
// one: bytes that are not UTF-8 (a path or module name from C++) go as \xNN.
void set_error(PyObject* type, const char* what) {
  PyObject* message = PyUnicode_DecodeUTF8(what, static_cast<Py_ssize_t>(std::strlen(what)), "backslashreplace");
  if (message == nullptr) return;  // out of memory: that error stays set
  PyErr_SetObject(type, message);
  Py_DECREF(message);
}

void translate_errors() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (PythonViolation& e) {  // a contract checked from Python (check_gradients)
      set_error(e.python_type(), e.what());
    } catch (const lg::LayoutViolation& e) {  // the gradient contract, raised by the guard itself
      set_error(g_violation_type ? g_violation_type : PyExc_RuntimeError, e.what());
    } catch (const lg::ShadowMismatch& e) {
      set_error(g_mismatch_type ? g_mismatch_type : PyExc_RuntimeError, e.what());
    } catch (const lg::ConfigError& e) {
      set_error(g_config_error_type ? g_config_error_type : PyExc_ValueError, e.what());
    } catch (const lg::Error& e) {
      set_error(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "layoutguard for PyTorch: the native part (see layoutguard_torch)";
  translate_errors();
  lg::torch::set_locator(&locate);
  lg::torch::set_call_site_finder(&find_call_site);
  lg::torch::set_program_code_check(&program_code_runs);

  m.def("built_torch_version", [] { return std::string(lg::torch::built_torch_version()); });
  // The directories are str as Python has them, lone surrogates too (a directory whose name is
  // not UTF-8), compared in the frames' files' form (utf8_of).
  m.def("_set_types", [](py::object violation, py::object config_error,
                         const std::vector<std::pair<py::str, bool>>& roots, const py::str& package_root) {
    Py_XDECREF(g_violation_type);
    Py_XDECREF(g_config_error_type);
    g_violation_type = violation.release().ptr();
    g_config_error_type = config_error.release().ptr();
    g_library_roots.clear();
    for (const auto& [prefix, library] : roots)
      if (std::string text = utf8_of(prefix.ptr()); !text.empty()) g_library_roots.push_back({std::move(text), library});
    g_package_root = utf8_of(package_root.ptr());
    lg::torch::set_raiser(&raise_violation);
    lg::torch::set_config_raiser(&raise_config_error);
  });
  m.def("_set_mismatch_type", [](py::object mismatch) {
    Py_XDECREF(g_mismatch_type);
    g_mismatch_type = mismatch.release().ptr();
    lg::torch::set_mismatch_raiser(&raise_mismatch);
  });
  m.def("enable", [](const std::string& mode) {
    if (mode.empty())
      lg::torch::enable();
    else
      lg::torch::enable(parse_mode(mode));
  });
  m.def("disable", [] { lg::torch::disable(); });
  m.def("enabled", [] { return lg::torch::enabled(); });
  m.def("mode", [] { return std::string(lg::guard::mode_name(lg::torch::mode())); });
  // The calling thread's state, for a thread it starts (threading.Thread.start) or a task it
  // hands to a pool's thread: None when it is off, "" to follow the process-wide mode, else the
  // mode of the block it is in.
  m.def("_handover_state", []() -> py::object {
    const lg::torch::Handover handover = lg::torch::Handover::here();
    if (!handover.switched_on) return py::none();
    return py::str(handover.scope_mode ? lg::guard::mode_name(*handover.scope_mode) : "");
  });
  // The innermost line of the user's code on this thread ("file.py:12 in main"), or "": where
  // a thread is started or a task submitted, for the reports of ops that run no user code.
  m.def("_call_site", [] {
    std::string site;
    find_call_site(site);
    return site;
  });
  // In a new thread, for its life; `site` is where it was started.
  m.def("_adopt_handover", [](const std::optional<std::string>& state, const std::string& site) {
    handover_of(state).adopt();
    t_thread_start_site = site;
  });
  // Around one task of a pool's thread, submitted at `site`: returns a token for _pop_handover.
  m.def("_push_handover", [](const std::optional<std::string>& state, const std::string& site) {
    return t_handed_over_tasks.push(std::make_unique<HandedOverTask>(handover_of(state), site));
  });
  m.def("_pop_handover", [](uintptr_t token) {
    t_handed_over_tasks.pop(token, "layoutguard_torch: _pop_handover needs the token of its thread's innermost task");
  });
  m.def("set_mode", [](const std::string& mode) { lg::guard::set_mode(parse_mode(mode)); });
  m.def("reset_to_environment", [] { lg::guard::reset_to_environment(); });
  m.def("set_options", [](const std::string& text) { lg::guard::set_options_keeping_mode(text); });
  // A mode for the calling thread, nested (lgt.guard()): returns a token for pop_scope, which
  // takes only the thread's innermost one (a Scope restores what was in force when it began).
  m.def("push_scope", [](const std::string& mode) {
    return t_guard_scopes.push(std::make_unique<lg::torch::Scope>(parse_mode(mode)));
  });
  m.def("pop_scope", [](uintptr_t token) {
    t_guard_scopes.pop(token,
                       "layoutguard_torch: a guard() block was left out of order, or on a thread other than the one "
                       "that entered it; guard blocks must nest, each left on its own thread");
  });
  // Around backward() and autograd.grad(): the calling thread, for the reports of the device
  // threads that run the backward ops.
  m.def(
      "push_backward_origin",
      [](bool builds_graph) {
        return t_backward_origins.push(
            std::make_unique<lg::torch::BackwardOrigin>(PyThread_get_thread_ident(), builds_graph));
      },
      py::arg("builds_graph") = false);
  m.def("pop_backward_origin", [](uintptr_t token) {
    t_backward_origins.pop(token,
                           "layoutguard_torch: pop_backward_origin needs the token of its thread's innermost backward");
  });
  // The outermost modules called, for the gradient contract (module_roots.h).
  m.def("_collect_roots", [] { lg_python::collect_roots(); });
  m.def("_roots", [] {
    py::list roots;
    for (PyObject* root : lg_python::live_roots()) roots.append(py::reinterpret_steal<py::object>(root));
    return roots;
  });
  m.def("_set_module_call", [](py::object call) { lg_python::set_module_call(call.release().ptr()); });
  PyObject* module_call = lg_python::make_module_call();
  if (module_call == nullptr) throw py::error_already_set();
  m.attr("call_module_with_path") = py::reinterpret_steal<py::object>(module_call);
  // The gradient contract over a module's parameters (module_tree.cpp).
  m.def("check_gradients", [](const py::object& modules) {
    if (!py::isinstance<py::list>(modules))
      throw py::type_error("layoutguard_torch: check_gradients needs a list of nn.Module objects, got " +
                           std::string(Py_TYPE(modules.ptr())->tp_name));
    std::vector<PyObject*> roots;  // borrowed: the list keeps them
    for (const py::handle module : modules) {
      if (lg_python::module_parameters(module.ptr()) == nullptr && lg_python::module_children(module.ptr()) == nullptr &&
          !py::hasattr(module, "named_parameters"))
        throw py::type_error("layoutguard_torch: check_gradients needs nn.Module objects (with _parameters and "
                             "_modules, or named_parameters()), got " +
                             std::string(Py_TYPE(module.ptr())->tp_name));
      roots.push_back(module.ptr());
    }
    lg_python::check_parameter_gradients(roots);
  });
  // Whether a backward node runs on this thread (a backward() inside one is a reentrant
  // checkpoint's: the parameters' gradients are not complete yet).
  m.def("in_backward_node", [] { return lg::torch_bridge::in_backward_node(); });
  m.def("report_json", [] { return lg::guard::report_json(lg::guard::report()); });
  m.def("summary_text", [] { return lg::detail::valid_utf8(lg::guard::summary_text(lg::guard::report())); });
  m.def("clear_report", [] { lg::guard::clear_report(); });
  m.def("options_help", [] { return lg::detail::valid_utf8(lg::guard::describe_options(lg::guard::options())); });
  m.def("check_options", [] { (void)lg::guard::options(); });
  // The files this process's settings write, by key: a spawned child compares its own with its
  // parent's and writes none of those that came out the same (guard/inherited_files.h).
  m.def("_output_paths", [] {
    const lg::guard::Options o = lg::guard::options();
    // As os.fsdecode makes a path: bytes that are not UTF-8 as lone surrogates.
    py::dict paths;
    for (const auto& [key, path] : {std::pair{"report", &o.report_path}, {"events", &o.events_path},
                                    {"write_suppressions", &o.write_suppressions_path}})
      if (!path->empty())
        paths[key] = py::reinterpret_steal<py::object>(
            PyUnicode_DecodeUTF8(path->data(), static_cast<Py_ssize_t>(path->size()), "surrogateescape"));
    return paths;
  });
  m.def("_in_forked_child", [] { return lg::guard::detail::in_forked_child(); });
  m.def("_start_collecting_afresh", [] { lg::guard::detail::start_collecting_afresh(); });
  m.def("_note_spawned_child", [](int64_t parent, std::vector<std::string> parents_paths) {
    lg::guard::detail::note_spawned_child(static_cast<pid_t>(parent), std::move(parents_paths));
  });
  // The exit handler's work, now and once (a forkserver's children end in _exit).
  m.def("_finish_process", [] { lg::guard::detail::finish_process(); });
  // Writes the report= and write_suppressions= files at exit even if no op is checked (the
  // runner's process); a bad setting is left for the first op to raise.
  m.def("_write_files_at_exit", [] {
    try {
      lg::guard::detail::ensure_exit_handler();
    } catch (const lg::Error&) {
    }
  });
}
