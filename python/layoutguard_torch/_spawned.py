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
# run its target, and a Pool would start another one, forever. sys_path is the one
# multiprocessing sets right after, for the main module.
_CHILD_START = """
import os, sys
sys.path[:] = sys_path
try:
    from layoutguard_torch._spawned import prepare_child
except Exception as e:
    print(f"[layoutguard] process {os.getpid()}, started by process {parent_pid}, checks nothing: "
          f"layoutguard_torch cannot be imported here ({type(e).__name__}: {e})", file=sys.stderr)
else:
    prepare_child(mode, options_text, parents_paths, parent_pid)
"""

# What each output file is, for the message of a child that leaves it to its parent.
_FILE_NAMES = {"report": "report", "events": "event stream", "write_suppressions": "baseline"}


class _SwitchOn:
    """Pickles as the child's start-up snippet, with what the child needs from the parent."""

    def __init__(self, mode, options_text, parents_paths, sys_path):
        self.names = {"mode": mode, "options_text": options_text, "parents_paths": parents_paths,
                      "sys_path": sys_path}

    def __reduce__(self):
        return (exec, (_CHILD_START, dict(self.names, parent_pid=os.getpid())))


def prepare_child(mode, options_text, parents_paths, parent_pid):
    """Takes the parent's settings in a started process, or says why it stays off."""
    from . import ConfigError, _C, set_options
    try:
        # Loading the library switched this thread on where LAYOUTGUARD is set: the main
        # module's top level, which runs next, is the parent's, and checked there already.
        _C.disable()
        if _C._in_forked_child():
            # Forked from a forkserver that switched on: its settings (expanded for it) and its
            # records are not this process's.
            _C.reset_to_environment()
            _C.clear_report()
        if mode is not None:
            _C.set_mode(mode)
        if options_text is not None:
            set_options(options_text)
        try:
            paths = _C._output_paths()
        except ConfigError:
            paths = {}  # the environment's settings are broken: the first op raises it, as anywhere
        shared = {key: path for key, path in paths.items() if path in parents_paths}
        _C._note_spawned_child(parent_pid, list(shared.values()))
    except Exception as e:
        print(f"[layoutguard] process {os.getpid()}, started by process {parent_pid}, checks nothing: "
              f"{type(e).__name__}: {e}", file=sys.stderr)
        return
    for key, path in sorted(shared.items()):
        print(f"[layoutguard] process {os.getpid()}, started by process {parent_pid}, writes no "
              f"{_FILE_NAMES.get(key, key)}: '{path}' is its parent's; put %p in the path for one per process",
              file=sys.stderr)
    bootstrap = multiprocessing.process.BaseProcess._bootstrap

    @functools.wraps(bootstrap)
    def bootstrap_switched_on(self, *args, **kwargs):
        from . import enable
        try:
            enable()
        except Exception as e:  # a setting read as the bridge switches on (LAYOUTGUARD_TORCH_UNBOXED)
            print(f"[layoutguard] process {os.getpid()}, started by process {parent_pid}, checks nothing: "
                  f"{type(e).__name__}: {e}", file=sys.stderr)
        try:
            return bootstrap(self, *args, **kwargs)
        finally:
            # After the target and the process's other threads. A spawned child would finish
            # at exit too, but a forkserver's child ends in os._exit, which runs no exit
            # handler. (A child forked from this one later finishes nothing: it is a forked
            # child.)
            _C._finish_process()

    multiprocessing.process.BaseProcess._bootstrap = bootstrap_switched_on


def _switch_on_entry(current_options_text, sys_path):
    """The preparation data's entry for a process started now from this thread, or None when
    the thread is off."""
    from . import ConfigError, _C
    try:
        if not _C.enabled():
            return None
        mode = _C.mode()
        paths = list(_C._output_paths().values())
    except ConfigError:
        # LAYOUTGUARD or its options are broken: the child reads them again and its first op
        # raises the error, as this process's does.
        return _SwitchOn(None, current_options_text, [], sys_path)
    except Exception as e:  # never the user's Process.start() that fails
        print(f"[layoutguard] a process started now stays off: {type(e).__name__}: {e}", file=sys.stderr)
        return None
    return None if mode == "off" else _SwitchOn(mode, current_options_text, paths, sys_path)


def watch_process_starts(current_options_text):
    """Adds the entry to the preparation data of every process started from a switched-on
    thread (multiprocessing builds it on the starting thread). `current_options_text` gives the
    options set through set_options(), None for the environment's."""
    prepare = multiprocessing.spawn.get_preparation_data

    @functools.wraps(prepare)
    def preparation_data_switching_on(name):
        data = prepare(name)
        entry = _switch_on_entry(current_options_text(), data.get("sys_path", list(sys.path)))
        if entry is not None:
            data["layoutguard_torch"] = entry  # multiprocessing's prepare() passes over keys it does not know
        return data

    multiprocessing.spawn.get_preparation_data = preparation_data_switching_on
