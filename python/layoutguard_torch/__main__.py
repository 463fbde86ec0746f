"""python3 -m layoutguard_torch [--] script.py [args...]
python3 -m layoutguard_torch -m module [args...]

Runs a Python script, or a module as `python3 -m module` would, with every ATen op of its main
thread (and the threads it starts, and autograd's) checked for lost channels_last. LAYOUTGUARD
sets the mode (warn when unset; off runs the program with nothing switched on) and
LAYOUTGUARD_OPTIONS the rest, as for any layoutguard program: report=, summary=, events=,
suppressions=, write_suppressions=, allow=, min_bytes=, max_reports=, help=1.
Exit status: the program's; 2 for a usage error."""
import importlib.util
import os
import runpy
import sys

USAGE = "usage: python3 -m layoutguard_torch [--] script.py [args...] | -m module [args...]"


def fail(message):
    print(f"layoutguard_torch: {message}\n{USAGE}", file=sys.stderr)
    return 2


def switch_on():
    # Set before the library switches on: the mode is read at the first op.
    os.environ.setdefault("LAYOUTGUARD", "warn")
    import layoutguard_torch as lgt
    # Off switches nothing on: the program's ops cost what they cost without the bridge (its
    # own enable(mode) or guard(mode) still switches on).
    if os.environ["LAYOUTGUARD"].strip() not in ("", "off", "0"):
        lgt.enable()


def without_runner_frames(tb):
    """The traceback from the program's first frame on: this runner's and runpy's frames, which
    come first, are not the program's."""
    runner = {os.path.abspath(__file__), os.path.abspath(runpy.__file__), "<frozen runpy>"}

    def in_runner(frame):
        name = frame.f_code.co_filename  # as the module was found: relative on a relative path
        return name in runner or (not name.startswith("<") and os.path.abspath(name) in runner)

    first = tb
    while first is not None and in_runner(first.tb_frame):
        first = first.tb_next
    return first if first is not None else tb


def run_program(run):
    """Runs the program; an exception it does not catch is printed as Python prints it for
    `python3 script.py` (through sys.excepthook), without the runner's frames, and exits 1.
    SystemExit keeps the program's status; KeyboardInterrupt ends it as Python does."""
    try:
        run()
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as e:
        tb = without_runner_frames(e.__traceback__)
        sys.excepthook(type(e), e.with_traceback(tb), tb)  # Python shows the exception's own
        return 1
    return 0


def main(argv):
    if argv and argv[0] == "--":
        argv = argv[1:]
    elif argv and argv[0] == "-m":
        if len(argv) < 2:
            return fail("-m needs a module name")
        module = argv[1]
        # As `python3 -m`: the working directory first on the path, and the module found before
        # it runs; finding it imports its package, which is then checked and sees the arguments.
        sys.path.insert(0, os.getcwd())
        switch_on()
        sys.argv = [module] + list(argv[2:])  # run_module puts the module's file first
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return fail(f"no module named {module}")
        return run_program(lambda: runpy.run_module(module, run_name="__main__", alter_sys=True))
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__ if argv else USAGE, file=sys.stderr if not argv else sys.stdout)
        return 0 if argv else 2
    script = argv[0]
    if not os.path.isfile(script):
        return fail(f"no such script: {script}")
    switch_on()
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    return run_program(lambda: runpy.run_path(script, run_name="__main__"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
