"""layoutguard for PyTorch programs: the channels_last guard on every ATen op.

Every ATen op that the switched-on threads dispatch -- forward and backward, CPU and CUDA -- is
checked after it ran: a channels_last input whose output comes back in another format is a
violation. The settings are layoutguard's (LAYOUTGUARD, LAYOUTGUARD_OPTIONS); see docs/torch.md.

    python3 -m layoutguard_torch train.py --epochs 1      # the whole script, warn by default

    import layoutguard_torch as lgt
    lgt.enable("throw")                 # this thread, and the threads its work reaches
    with lgt.guard("record"):           # a block of this thread
        model(x).sum().backward()
    lgt.report()                        # what was collected, as a dict (the JSON report)
"""
import atexit
import contextlib
import functools
import json
import os
import reprlib
import sys
import sysconfig
import threading

import torch

from . import _build_info


class LayoutViolationError(RuntimeError):
    """An ATen op lost channels_last (throw mode). The message is the whole dump: the op, every
    operand's sizes, strides and format, the module path, the root cause and the stack."""


class ShadowMismatchError(RuntimeError):
    """With shadow=1, an ATen op's result differs from the same call on contiguous copies of its
    arguments (raised in every mode). The message names the op, the output, the largest
    difference and where, every operand's layout, the module path and the stack."""


class ConfigError(ValueError, RuntimeError):
    """LAYOUTGUARD or LAYOUTGUARD_OPTIONS holds a value layoutguard does not accept, or a function
    of this package was given one. A ValueError, and a RuntimeError as torch's op errors usually
    are: a bad environment value raises it at the program's first op."""


if torch.__version__ != _build_info.TORCH_VERSION:
    raise ImportError(
        f"layoutguard_torch was built against torch {_build_info.TORCH_VERSION} but this Python "
        f"imports torch {torch.__version__} from {os.path.dirname(torch.__file__)}; rebuild it with "
        f"meson setup -Dtorch-python={sys.executable}")

from . import _C  # noqa: E402  (after the version check: a mismatched torch may not even load it)


def _library_roots():
    """Where the files that are not the user's begin, as (prefix, is_library): the longest
    prefix of a file decides. Torch, this package and the standard library are not the user's;
    site-packages are, although some installs (pyenv, python.org, conda) keep them inside the
    standard library's directory."""
    paths = sysconfig.get_paths()
    roots = {paths["stdlib"]: True, paths["platstdlib"]: True, paths["purelib"]: False, paths["platlib"]: False,
             os.path.dirname(torch.__file__): True, os.path.dirname(os.path.abspath(__file__)): True}
    return sorted((os.path.join(root, ""), library) for root, library in roots.items())


_package_root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")  # its frames are never shown
_C._set_types(LayoutViolationError, ConfigError, _library_roots(), _package_root)
_C._set_mismatch_type(ShadowMismatchError)

MODES = ("off", "warn", "throw", "record")
_MODE_TEXTS = MODES + ("1", "0")  # what LAYOUTGUARD accepts: 1 = throw, 0 = off

__all__ = ["enable", "disable", "enabled", "guard", "report", "clear_report", "summary", "mode", "set_options",
           "LayoutViolationError", "ShadowMismatchError", "ConfigError", "module_path_tracking", "check_gradients"]


def _mode_text(function, mode):
    """`mode` checked where the caller passed it, as the native parser's text."""
    if isinstance(mode, bool) or not isinstance(mode, (str, int)):
        raise TypeError(f"layoutguard_torch.{function}: mode must be one of {', '.join(MODES)} (or 1 = throw, "
                        f"0 = off), got {type(mode).__name__} {mode!r}")
    # An int by its value (a subclass's __str__ may say anything), a str as LAYOUTGUARD is read.
    text = int.__repr__(mode) if isinstance(mode, int) else str.strip(mode, " \t\r\n")
    if text not in _MODE_TEXTS:
        shown = text if isinstance(mode, int) else str.__str__(mode)
        shown = repr(shown) if len(shown) <= 512 else f"{shown[:512]!r}... ({len(shown)} characters)"
        raise ConfigError(f"layoutguard_torch.{function}: {shown} is not a mode; allowed values: "
                          f"{', '.join(MODES)}, 1 (= throw), 0 (= off)")
    return text


def enable(mode=None):
    """Checks the calling thread's ATen ops from now on, those of threads it starts with
    `threading`, and those of processes that multiprocessing starts from it. With a mode
    ("off", "warn", "throw", "record"; 1 = throw, 0 = off), also sets the process-wide mode;
    without one, LAYOUTGUARD decides (read at the first op)."""
    _C.enable("" if mode is None else _mode_text("enable", mode))
    _install_python_hooks()


def disable():
    """Stops checking the calling thread's ops (the settings stay)."""
    _C.disable()


_options_text = None  # the last set_options() text: processes spawned later get it too


def set_options(text):
    """Replaces the process-wide options with `text`, in LAYOUTGUARD_OPTIONS syntax
    ("nested=0:summary=0"); the mode stays. A bad key or value raises ConfigError."""
    global _options_text
    if not isinstance(text, str):
        raise TypeError(f"layoutguard_torch.set_options: needs a string in LAYOUTGUARD_OPTIONS syntax, got "
                        f"{type(text).__name__} {text!r}")
    try:
        # As the environment would hold it: a file name that is not UTF-8 (os.fsdecode's lone
        # surrogates) goes as its bytes.
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise ConfigError(f"layoutguard_torch.set_options: {text!r} holds lone surrogates that stand for no "
                          "byte (only U+DC80..U+DCFF do, as os.fsdecode makes them); pass the text as "
                          "LAYOUTGUARD_OPTIONS would hold it") from None
    try:
        _C.set_options(raw)
    except ConfigError as e:
        raise ConfigError(f"layoutguard_torch.set_options: {e}") from None
    _options_text = text


def enabled():
    """Whether the calling thread is switched on: its ops go through the bridge, and are
    checked unless mode() is "off"."""
    return _C.enabled()


def mode():
    """The mode the calling thread's ops are checked in while it is switched on ("off",
    "warn", "throw" or "record"): its innermost guard's, else the one it took along from the
    thread that started it, else the process's. Whether it is switched on at all (enable(),
    a guard, a starting thread that was) is enabled(): after disable() nothing is checked
    whatever this says."""
    return _C.mode()


class guard(contextlib.ContextDecorator):
    """A block of the calling thread checked in `mode` (nests; restores on exit), or a function
    each of whose calls is such a block. Threads and processes started inside keep the mode:

        with lgt.guard("throw"):
            y = model(x)

        @lgt.guard("record")
        def train_step(x): ...

    One guard may be entered again inside itself and from several threads at once; blocks must
    nest, each left on the thread that entered it (else ValueError). On a coroutine or generator
    function the block covers making the coroutine or generator, not running it."""

    def __init__(self, mode="throw"):
        self._mode = _mode_text("guard", mode)
        self._tokens = {}  # thread id -> the tokens of its open entries, innermost last

    def __enter__(self):
        _install_python_hooks()
        token = _C.push_scope(self._mode)
        self._tokens.setdefault(threading.get_ident(), []).append(token)
        return self

    def __exit__(self, *exc):
        tokens = self._tokens.get(threading.get_ident())
        if not tokens:
            raise ValueError("layoutguard_torch: a guard() block was left more often than entered, or on a "
                             "thread that did not enter it")
        _C.pop_scope(tokens[-1])  # raises, and keeps the token, when blocks did not nest
        tokens.pop()
        if not tokens:
            del self._tokens[threading.get_ident()]
        return False


def report():
    """What warn and record mode collected so far, as the dict of the JSON report
    (LAYOUTGUARD_OPTIONS report=FILE writes the same at exit)."""
    return json.loads(_C.report_json())


_clears = 0  # how many times clear_report() ran: the pytest helpers tell a cleared report by it


def clear_report():
    """Forgets what was collected."""
    global _clears
    _C.clear_report()
    _clears += 1


def summary():
    """The exit summary's table, as text."""
    return _C.summary_text()


# ---- Python-side context: module paths, threads, gradient contracts ----

_hooks_installed = False
_hooks_lock = threading.Lock()


def _tell_dynamo(original_call, replacement):
    """torch.compile's tracer notes nn.Module.__call__ when it is imported, and traces a module
    whose __call__ is another one as a Python function, which the replacement (C) is not:
    torch 2.7 fails there ("expected FunctionType"). Imported after the replacement, it notes
    the replacement and traces the module's own call; imported before, it is told now, alike."""
    for name in ("torch._dynamo.utils", "torch._dynamo.variables.nn_module"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "unpatched_nn_module_call", None) is original_call:
            module.unpatched_nn_module_call = replacement


def _install_python_hooks():
    global _hooks_installed
    with _hooks_lock:
        if _hooks_installed:
            return
        # The outermost modules called from now on: their parameters' gradients are checked.
        _C._collect_roots()
        # The module path of the ops inside: each module call pushes the module's name in its
        # caller module (layer3 -> 1 -> conv2 = "layer3.1.conv2"). The wrapper is C that binds
        # like a function (_C.cpp, ModuleCall): code that saves and restores
        # nn.Module.__call__ keeps working, and a module call runs no Python frame of ours.
        original_call = torch.nn.Module.__call__
        _C._set_module_call(original_call)
        torch.nn.Module.__call__ = _C.call_module_with_path
        _tell_dynamo(original_call, _C.call_module_with_path)

        backward = torch.autograd.backward
        grad = torch.autograd.grad

        # Both mark the calling thread as the origin of the backward ops, which autograd runs
        # on its own device threads for CUDA tensors: their reports show this thread's stack.
        # create_graph (a pass that builds a graph, for double backward) is backward()'s fourth
        # argument and grad()'s fifth; Tensor.backward passes it by position.
        # The wrappers below mark their frames __tracebackhide__, which pytest and IPython
        # leave out of the tracebacks they show: an exception raised in the user's code or in
        # backward passes through them.
        def _builds_graph(create_graph):
            # Only a plain truth value is read here; anything else goes to torch unread, which
            # raises its own error for it.
            return isinstance(create_graph, int) and bool(create_graph)

        def backward_with_contracts(*args, **kwargs):
            __tracebackhide__ = True
            token = _C.push_backward_origin(_builds_graph(args[3] if len(args) > 3 else kwargs.get("create_graph")))
            try:
                result = backward(*args, **kwargs)
            finally:
                _C.pop_backward_origin(token)
            # A backward inside a backward node (a reentrant checkpoint's recomputation) leaves
            # the parameters' gradients half done: the outermost backward checks them.
            if _C.enabled() and _C.mode() != "off" and not _C.in_backward_node():
                check_gradients()
            return result

        def grad_with_origin(*args, **kwargs):
            __tracebackhide__ = True
            token = _C.push_backward_origin(_builds_graph(args[4] if len(args) > 4 else kwargs.get("create_graph")))
            try:
                return grad(*args, **kwargs)
            finally:
                _C.pop_backward_origin(token)

        torch.autograd.backward = backward_with_contracts
        torch.autograd.grad = grad_with_origin

        # Threads started with `threading` from now on take along what PyTorch hands its own
        # threads: a thread started from a switched-on one switches itself on, in the mode of
        # the block it was started in; one started from a thread that is off stays off. Start
        # notes the starter's state and gives the Thread a run() of its own (an attribute, so
        # it wraps a subclass's run() too) that adopts the state in the new thread first. No
        # profile or trace hook is taken: those belong to the user's profilers.
        start = threading.Thread.start

        no_run = object()

        def put_back_run(thread, own_run):
            # The instance's own run attribute, if it had one (the user's, or the wrapper of a
            # start that has not run yet), else none.
            if own_run is no_run:
                thread.__dict__.pop("run", None)
            else:
                thread.run = own_run

        @functools.wraps(start)
        def start_handing_over(self, *args, **kwargs):
            state = _C._handover_state()
            site = "" if state is None else _C._call_site()  # for reports of ops that run no user code
            run, own_run = self.run, self.__dict__.get("run", no_run)

            def run_handed_over():
                __tracebackhide__ = True
                put_back_run(self, own_run)  # the Thread and its run() no longer hold each other
                _C._adopt_handover(state, site)
                run()

            self.run = run_handed_over
            try:
                return start(self, *args, **kwargs)
            except BaseException:  # not started (started twice; no thread left)
                if self.__dict__.get("run") is run_handed_over:
                    put_back_run(self, own_run)
                raise

        # A ThreadPoolExecutor starts its threads from the first submit()s, and runs later
        # tasks on them: each task runs in the state of the code that submitted it.
        from concurrent.futures import thread as futures_thread
        submit = futures_thread.ThreadPoolExecutor.submit

        @functools.wraps(submit)
        def submit_handing_over(self, fn, /, *args, **kwargs):
            state = _C._handover_state()
            site = "" if state is None else _C._call_site()  # for reports of ops that run no user code

            def task():
                __tracebackhide__ = True
                token = _C._push_handover(state, site)
                try:
                    return fn(*args, **kwargs)
                finally:
                    _C._pop_handover(token)
            return submit(self, task)

        threading.Thread.start = start_handing_over
        futures_thread.ThreadPoolExecutor.submit = submit_handing_over
        # Processes that multiprocessing spawns from a switched-on thread switch on in the
        # same mode and options (_spawned.py); forked ones are copies of this one.
        from . import _spawned
        _spawned.watch_process_starts(lambda: _options_text)
        _hooks_installed = True


def module_path_tracking():
    """Whether nn.Module calls push their path (after enable() or a guard())."""
    return _hooks_installed


def check_gradients(modules=None):
    """The gradient contract: after backward, each parameter's .grad must have the parameter's
    strides (DDP's "grad strides do not match bucket view strides" warning, with the
    parameter named). Checks `modules` (default: every outermost module called so far) and
    reports each mismatch as a violation of op "autograd::grad_strides" at the parameter's
    name, under the effective mode. One module may be passed alone. A parameter is checked
    once, under its name in the outermost module that holds it."""
    def modules_checked(items):
        # Each item is checked as it is taken: a generator that never ends fails at its first
        # item that is not a module instead of filling memory.
        for root in items:
            if not isinstance(root, torch.nn.Module):
                raise TypeError("layoutguard_torch.check_gradients: needs torch.nn.Module objects, "
                                f"got {type(root).__name__}")
            yield root

    if modules is None:
        targets = _C._roots()
    elif isinstance(modules, torch.nn.Module):
        targets = [modules]
    elif isinstance(modules, (str, bytes, bytearray, dict)):
        # Iterable, but of characters, bytes or keys: never the modules meant.
        raise TypeError("layoutguard_torch.check_gradients: needs a torch.nn.Module or an iterable of them, "
                        f"got {type(modules).__name__} {reprlib.repr(modules)}")
    else:
        try:
            items = iter(modules)
        except TypeError:  # not iterable: named as received
            items = iter([modules])
        targets = list(modules_checked(items))
    _C.check_gradients(targets)


def _finish_if_interrupted():
    # An uncaught KeyboardInterrupt (Ctrl-C) ends CPython by SIGINT after its exit handlers and
    # finalization, so the C exit handler that prints the summary and writes report= and
    # write_suppressions= never runs. Python's own atexit handlers do, after the exception was
    # printed (sys.last_value): the files are written here then, once.
    if isinstance(getattr(sys, "last_value", None), KeyboardInterrupt):
        _C._finish_process()


atexit.register(_finish_if_interrupted)

# A LAYOUTGUARD set when the package loaded switched the importing thread on, as linking the
# library does in C++: the Python side of the checks (module paths, threads, processes, the
# gradient contract) comes with it.
if _C.enabled():
    _install_python_hooks()
