"""Processes that multiprocessing starts from a switched-on thread by its spawn or forkserver
method (torch.multiprocessing.spawn, a DataLoader or a pool given a "spawn" context, every pool
where forkserver is the default) are fresh interpreters: they import the parent's code, not its
state, so the bridge would be off in them. multiprocessing sends each child a dict of
"preparation data" (sys.path, the main module's path...) and unpickles it there before it
imports the main module or unpickles the process object. An entry added to that dict, unpickled
first, switches the bridge on in the child in the parent's mode and options and notes which
output files are the parent's, before any of the parent's code runs there (a script's top
level runs again as the child's main module). Forked children need nothing: they are copies of
a switched-on parent and write none of its files (guard/inherited_files.h)."""
import functools
import multiprocessing.spawn
import multiprocessing.util
import os
import sys

# Runs in the child, from the pickled entry. A snippet of builtins' exec, so that unpickling
# cannot fail where the child cannot import this package (another interpreter chosen by
# multiprocessing.set_executable, a sys.path without it): the child must still run its target.
# The parent's sys.path is the one multiprocessing sets right after, for the main module.
_CHILD_START = """
import os, sys
sys.path[:] = sys_path
try:
    from layoutguard_torch._spawned import switch_on_in_child
except Exception as e:
    print(f"[layoutguard] process {os.getpid()}, started by process {parent_pid}, checks nothing: "
          f"layoutguard_torch cannot be imported here ({type(e).__name__}: {e})", file=sys.stderr)
else:
    switch_on_in_child(mode, options_text, parents_paths, parent_pid)
"""


class _SwitchOn:
    """Pickles as the child's start-up snippet, with what the child needs from the parent."""

    def __init__(self, mode, options_text, parents_paths):
        self.mode = mode
        self.options_text = options_text
        self.parents_paths = parents_paths

    def __reduce__(self):
        names = {"mode": self.mode, "options_text": self.options_text, "parents_paths": self.parents_paths,
                 "parent_pid": os.getpid(), "sys_path": list(sys.path)}
        return (exec, (_CHILD_START, names))


def switch_on_in_child(mode, options_text, parents_paths, parent_pid):
    """Switches the bridge on in a started process, or says why it stays off."""
    from . import ConfigError, _C, disable, enable, set_options
    try:
        enable(mode)
        if options_text is not None:
            set_options(options_text)
        try:
            paths = _C._output_paths()
        except ConfigError:
            paths = {}  # the environment's settings are broken: the first op raises it, as anywhere
        shared = {key: path for key, path in paths.items() if path in parents_paths}
        _C._note_spawned_child(parent_pid, list(shared.values()))
    except Exception as e:
        disable()
        print(f"[layoutguard] process {os.getpid()}, started by process {parent_pid}, checks nothing: "
              f"{type(e).__name__}: {e}", file=sys.stderr)
        return
    for key, path in sorted(shared.items()):
        print(f"[layoutguard] process {os.getpid()}, started by process {parent_pid}, writes no {key} file: "
              f"'{path}' is its parent's; put %p in the path for one per process", file=sys.stderr)
    # The report, baseline and summary are written at exit. A spawned child exits normally,
    # after its other threads. A forkserver's child ends in os._exit, which runs no exit
    # handler, right after multiprocessing's finalizers (so ops of its threads still running
    # then are left out); it empties their registry as its process object starts, then runs
    # the after-fork callbacks, which register this one. (A spawned child runs none of them:
    # SpawnProcess._after_fork does nothing.)
    multiprocessing.util.register_after_fork(_C, functools.partial(_finish_last, os.getpid()))


def _finish_last(switched_on_pid, bridge):
    # A child forked from this one later runs the after-fork callbacks it inherited; it is a
    # forked child, whose files are this one's.
    if os.getpid() == switched_on_pid:
        # Last among the finalizers: after those of the process's own code.
        multiprocessing.util.Finalize(None, bridge._finish_process, exitpriority=-1000)


def _switch_on_entry(current_options_text):
    """The preparation data's entry for a process started now from this thread, or None when
    the thread is off."""
    from . import ConfigError, _C
    if not _C.enabled():
        return None
    try:
        mode = _C.mode()
        paths = list(_C._output_paths().values())
    except ConfigError:
        # LAYOUTGUARD or its options are broken: the child reads them again and its first op
        # raises the error, as this process's does.
        return _SwitchOn(None, current_options_text, [])
    return None if mode == "off" else _SwitchOn(mode, current_options_text, paths)


def watch_process_starts(current_options_text):
    """Adds the entry to the preparation data of every process started from a switched-on
    thread (multiprocessing builds it on the starting thread). `current_options_text` gives the
    options set through set_options(), None for the environment's."""
    prepare = multiprocessing.spawn.get_preparation_data

    @functools.wraps(prepare)
    def preparation_data_switching_on(name):
        data = prepare(name)
        entry = _switch_on_entry(current_options_text())
        if entry is not None:
            data["layoutguard_torch"] = entry  # multiprocessing's prepare() passes over keys it does not know
        return data

    multiprocessing.spawn.get_preparation_data = preparation_data_switching_on
