"""Processes that multiprocessing starts from a switched-on thread by its spawn or forkserver
method (torch.multiprocessing.spawn, a DataLoader or a pool given a "spawn" context, every pool
where forkserver is the default) are fresh interpreters: they import the parent's code, not its
state, so the bridge would be off in them. Each process object started from a switched-on thread
carries a marker while it is pickled for the child; unpickling it there, after multiprocessing
has restored the parent's sys.path and main module and before the target runs, switches the
bridge on in the parent's mode and options. Forked children need nothing: they are copies of a
switched-on parent (and write none of its files, guard/inherited_files.h)."""
import functools
import multiprocessing.process
import multiprocessing.util
import os
import sys

_MARKER = "_layoutguard_torch_switch"


class _SwitchOn:
    """Pickles as a call of switch_on_in_child with what the child needs from the parent."""

    def __init__(self, mode, options_text, parents_paths):
        self.mode = mode
        self.options_text = options_text
        self.parents_paths = parents_paths

    def __reduce__(self):
        return (switch_on_in_child, (self.mode, self.options_text, self.parents_paths, os.getpid()))


def switch_on_in_child(mode, options_text, parents_paths, parent_pid):
    """Runs in the started process while its process object is unpickled."""
    from . import ConfigError, _C, enable, set_options
    # The report, baseline and summary are written at exit. A spawned child exits normally,
    # after its other threads; a forkserver's child ends in os._exit, which runs no exit
    # handler, right after multiprocessing's finalizers. It clears those as it starts and then
    # runs its after-fork callbacks (a spawned child runs none): one registers the finalizer.
    multiprocessing.util.register_after_fork(_C, _finish_at_the_end)
    enable(mode)
    if options_text is not None:
        set_options(options_text)
    try:
        paths = _C._output_paths()
    except ConfigError:
        return None  # the settings are broken: the first op raises it, as in any process
    shared = {key: path for key, path in paths.items() if path in parents_paths}
    _C._note_spawned_child(parent_pid, list(shared.values()))
    for key, path in sorted(shared.items()):
        print(f"[layoutguard] process {os.getpid()}, started by process {parent_pid}, writes no {key} file: "
              f"'{path}' is its parent's; put %p in the path for one per process", file=sys.stderr)
    return None


def _finish_at_the_end(_C):
    # Last among the finalizers: after those of the process's own code.
    multiprocessing.util.Finalize(None, _C._finish_process, exitpriority=-1000)


def _marker(options_text):
    """What a process started now from this thread needs, or None when it stays off."""
    from . import ConfigError, _C
    if not _C.enabled():
        return None
    try:
        mode = _C.mode()
        paths = list(_C._output_paths().values())
    except ConfigError:
        # LAYOUTGUARD or its options are broken: the child reads them again and its first op
        # raises the error, as this process's does.
        return _SwitchOn(None, options_text, [])
    return None if mode == "off" else _SwitchOn(mode, options_text, paths)


def watch_process_starts(options_text):
    """Makes every process started from a switched-on thread carry the marker. `options_text` is
    a callable giving the options set through set_options() (None: the environment's)."""
    start = multiprocessing.process.BaseProcess.start

    @functools.wraps(start)
    def start_switched_on(self):
        marker = _marker(options_text())
        if marker is None:
            return start(self)
        setattr(self, _MARKER, marker)
        try:
            return start(self)
        finally:
            # Pickled by now (spawn, forkserver) or never (fork); not part of the object after.
            self.__dict__.pop(_MARKER, None)

    multiprocessing.process.BaseProcess.start = start_switched_on
