"""Processes that multiprocessing starts from a switched-on thread by its spawn or forkserver
method (torch.multiprocessing.spawn, a DataLoader or a pool given a "spawn" context, every pool
where forkserver is the default) are fresh interpreters: they import the parent's code, not its
state, so the bridge would be off in them.

multiprocessing sends each such child a dict of "preparation data" (sys.path, the main module's
path...), unpickles it there, runs the parent's main module again for its definitions, then
unpickles the process object and calls its _bootstrap, which runs the target. The bridge adds
an entry to the dict. Unpickled first, it sets the parent's mode and options and notes which
output files are the parent's, so that nothing the child runs writes them, and it wraps
_bootstrap, which switches the child's thread on for the target and finishes the process's
files after it. The main module's top level runs in between, unchecked as any code before
enable() is (the parent has run it already), unless it switches the bridge on itself.

Forked children need none of this: they are copies of a switched-on parent and write none of
its files (guard/inherited_files.h)."""
import functools
import multiprocessing.process
import multiprocessing.spawn
import os
import sys

# Runs in the child, from the pickled entry: builtins' exec of this snippet, so that unpickling
# cannot fail where the child cannot import this package (another interpreter chosen by
# multiprocessing.set_executable, a sys.path without it). A child that died there would never
# run its target, and a Pool would start another one, forever. sys_path and cwd are what
# multiprocessing sets right after, for the main module.
_CHILD_START = """
import os, sys
sys.path[:] = sys_path
os.chdir(cwd)
try:
    from layoutguard_torch._spawned import prepare_child
except Exception as e:
    sys.stderr.write(f"[layoutguard] process {os.getpid()}, started by process {parent_pid}, checks nothing: "
                     f"layoutguard_torch cannot be imported here ({type(e).__name__}: {e})\\n")
else:
    prepare_child(mode, options_text, parents_paths, parent_pid)
"""

# What each output file is, for the message of a child that leaves it to its parent.
_FILE_NAMES = {"report": "report", "events": "event stream", "write_suppressions": "baseline"}


class _SwitchOn:
    """Pickles as the child's start-up snippet, with what the child needs from the parent."""

    def __init__(self, mode, options_text, parents_paths, data):
        self.names = {"mode": mode, "options_text": options_text, "parents_paths": parents_paths,
                      "sys_path": data.get("sys_path", list(sys.path)), "cwd": data.get("dir", os.getcwd())}

    def __reduce__(self):
        return (exec, (_CHILD_START, dict(self.names, parent_pid=os.getpid())))


def _say(text):
    # One write: stderr writes through, so print()'s text and its newline would be two, and a
    # sibling process's line could land between them.
    try:
        sys.stderr.write(text + "\n")
    except OSError:  # a closed stderr must not stop the child before its target
        pass


def _say_as_child(parent_pid, text):
    _say(f"[layoutguard] process {os.getpid()}, started by process {parent_pid}, {text}")


def prepare_child(mode, options_text, parents_paths, parent_pid):
    """Takes the parent's settings in a started process, or says why it stays off. Mode "off"
    (started from a thread that is off) keeps the child off, with the parent's files noted."""
    from . import ConfigError, _C
    import layoutguard_torch
    try:
        # Loading the library switched this thread on where LAYOUTGUARD is set: the main
        # module's top level, which runs next, is the parent's, and checked there already.
        _C.disable()
        # A forkserver's child is forked from a process that may have loaded the library and
        # set its own settings (expanded for it) and records: none of them are this process's.
        _C.reset_to_environment()
        layoutguard_torch._options_text = None
        if _C._in_forked_child():
            _C._start_collecting_afresh()  # an idle worker writes none of the server's files
        if mode is not None:
            _C.set_mode(mode)
        if options_text is not None:
            layoutguard_torch.set_options(options_text)
        try:
            paths = _C._output_paths()
        except ConfigError:
            paths = {}  # the environment's settings are broken: the first op raises it, as anywhere
        shared = {key: path for key, path in paths.items() if path in parents_paths}
        _C._note_spawned_child(parent_pid, [os.fsencode(path) for path in shared.values()])
    except Exception as e:
        _say_as_child(parent_pid, f"checks nothing: {type(e).__name__}: {e}")
        return
    if mode == "off":
        return
    for key, path in sorted(shared.items()):
        _say_as_child(parent_pid, f"writes no {_FILE_NAMES.get(key, key)}: '{path}' is its parent's; "
                                  "put %p in the path for one per process")
    bootstrap = multiprocessing.process.BaseProcess._bootstrap
    this_process = os.getpid()

    @functools.wraps(bootstrap)
    def bootstrap_switched_on(self, *args, **kwargs):
        # A child that this one forks later inherits the wrapper, and the thread state of the
        # thread that started it, which decides there, as in any forked child.
        if os.getpid() != this_process:
            return bootstrap(self, *args, **kwargs)
        from . import enable
        try:
            enable()
        except Exception as e:  # a setting read as the bridge switches on (LAYOUTGUARD_TORCH_UNBOXED)
            _say_as_child(parent_pid, f"checks nothing: {type(e).__name__}: {e}")
        try:
            return bootstrap(self, *args, **kwargs)
        finally:
            # After the target and the process's other threads. A spawned child would finish
            # at exit too, but a forkserver's child ends in os._exit, which runs no exit
            # handler. Never in place of the target's exit code.
            try:
                _C._finish_process()
            except Exception as e:
                _say(f"[layoutguard] process {os.getpid()} could not write its files: {type(e).__name__}: {e}")

    multiprocessing.process.BaseProcess._bootstrap = bootstrap_switched_on


def _switch_on_entry(current_options_text, data):
    """The preparation data's entry for a process started now from this thread, or None."""
    from . import ConfigError, _C
    try:
        mode = _C.mode() if _C.enabled() else "off"
        if mode == "off" and os.environ.get("LAYOUTGUARD", "").strip() in ("", "off", "0"):
            return None  # nothing switches the child on: it may not even import torch
        # From a thread that is off, where LAYOUTGUARD is set: the library would switch the
        # child on as soon as its code imports the package. The entry keeps it off, with the
        # parent's files noted.
        paths = list(_C._output_paths().values())
    except ConfigError:
        # LAYOUTGUARD or its options are broken: the child reads them again and its first op
        # raises the error, as this process's does.
        return _SwitchOn(None, current_options_text, [], data)
    except Exception as e:  # never the user's Process.start() that fails
        _say(f"[layoutguard] a process started now stays off: {type(e).__name__}: {e}")
        return None
    return _SwitchOn(mode, current_options_text, paths, data)


def watch_process_starts(current_options_text):
    """Adds the entry to the preparation data of every process started from a switched-on
    thread (multiprocessing builds it on the starting thread). `current_options_text` gives the
    options set through set_options(), None for the environment's."""
    prepare = multiprocessing.spawn.get_preparation_data

    @functools.wraps(prepare)
    def preparation_data_switching_on(name):
        data = prepare(name)
        entry = _switch_on_entry(current_options_text(), data)
        if entry is not None:
            data["layoutguard_torch"] = entry  # multiprocessing's prepare() passes over keys it does not know
        return data

    multiprocessing.spawn.get_preparation_data = preparation_data_switching_on
