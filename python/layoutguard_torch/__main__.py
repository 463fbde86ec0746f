"""python3 -m layoutguard_torch [--] script.py [args...]
python3 -m layoutguard_torch -m module [args...]
python3 -m layoutguard_torch - [args...]            (the program on standard input)

Runs a Python script, or a module as `python3 -m module` would, with every ATen op of its main
thread (and the threads it starts, and autograd's) checked for lost channels_last. LAYOUTGUARD
sets the mode (warn when unset; off runs the program with nothing switched on) and
LAYOUTGUARD_OPTIONS the rest, as for any layoutguard program: report=, summary=, events=,
suppressions=, write_suppressions=, allow=, min_bytes=, max_reports=, help=1.
Exit status: the program's; 2 for a usage error."""
import builtins
import importlib.machinery
import importlib.util
import io
import os
import runpy
import sys
import types
import zipfile

USAGE = "usage: python3 -m layoutguard_torch [--] script.py [args...] | -m module [args...] | - [args...]"


def fail(message):
    print(f"layoutguard_torch: {message}\n{USAGE}", file=sys.stderr)
    return 2


def switch_on():
    """Switches the checks on for the program; 1 after printing a ConfigError of a setting read
    now (LAYOUTGUARD_TORCH_UNBOXED), else None. LAYOUTGUARD and LAYOUTGUARD_OPTIONS are read
    at the program's first op, which raises their ConfigError in the program's traceback."""
    # Set before the library switches on: the mode is read at the first op.
    os.environ.setdefault("LAYOUTGUARD", "warn")
    import layoutguard_torch as lgt
    # Off switches nothing on: the program's ops cost what they cost without the bridge (its
    # own enable(mode) or guard(mode) still switches on).
    if os.environ["LAYOUTGUARD"].strip() not in ("", "off", "0"):
        try:
            lgt.enable()
        except lgt.ConfigError as e:
            return show_config_error(e)
        lgt._C._write_files_at_exit()  # also for a program that checks no op (a dry run)
    return None


def show_config_error(e):
    """Prints a ConfigError that no line of the program raised, as Python prints an uncaught
    exception but without a traceback; 1."""
    print(f"{type(e).__module__}.{type(e).__qualname__}: {e}", file=sys.stderr)
    return 1


def settings_checked(status):
    """The program's exit status, or 1 after printing the ConfigError of a setting that the
    program never read: one that ran no op would otherwise end as if LAYOUTGUARD and
    LAYOUTGUARD_OPTIONS held good values, and write none of their files."""
    import layoutguard_torch as lgt
    # By type and value, never by ==: sys.exit takes any object (a tensor, a NaN, one whose
    # __eq__ raises), which Python prints and ends with 1. An int's value (False and IntEnum
    # members are ints) is read without calling a method of its class.
    succeeded = status is None or (isinstance(status, int) and not int.__bool__(status))
    if not succeeded or not lgt.enabled():
        return status
    try:
        lgt._C.check_options()
    except lgt.ConfigError as e:
        return show_config_error(e)
    return status


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
    except SystemExit as e:
        if settings_checked(e.code) is not e.code:
            raise SystemExit(1) from None
        raise
    except KeyboardInterrupt:
        # Only Python can end a process by SIGINT as `python3 script.py` ends, so the exception
        # goes on up; on its way it takes the runner's frames in again, and Python prints it
        # through sys.excepthook, which leaves them out.
        shown_by = sys.excepthook

        def shown_without_runner_frames(kind, e, tb):
            tb = without_runner_frames(tb)
            shown_by(kind, e.with_traceback(tb), tb)

        sys.excepthook = shown_without_runner_frames
        raise
    except BaseException as e:
        return show_uncaught(e)
    return settings_checked(0)


def show_uncaught(e):
    """Prints an exception of the program's as python3 does, without the runner's frames; 1."""
    tb = without_runner_frames(e.__traceback__)
    sys.excepthook(type(e), e.with_traceback(tb), tb)  # Python shows the exception's own
    return 1


def run_as_main(code, **attributes):
    """Runs `code` in a fresh module that becomes __main__, and stays it after the program
    returns, as python3 leaves it: the program's atexit handlers, and pickle there, find its
    classes in __main__."""
    main_module = types.ModuleType("__main__")
    main_module.__dict__.update(attributes, __builtins__=builtins)
    sys.modules["__main__"] = main_module
    exec(code, main_module.__dict__)


def put_first_on_path(directory):
    """As python3 does: the directory first on sys.path, in place of the working directory that
    `python3 -m layoutguard_torch` put there (unless -P kept it off)."""
    if sys.path and sys.path[0] in ("", os.getcwd()) and not sys.flags.safe_path:
        sys.path[0] = directory
    elif not sys.path or sys.path[0] != directory:
        sys.path.insert(0, directory)


def run_module(module, args):
    # As `python3 -m`: the working directory first on the path, the module found before it runs
    # (finding it imports its package, which is then checked), a package run as its __main__.
    put_first_on_path(os.getcwd())
    if (status := switch_on()) is not None:
        return status
    try:
        spec = importlib.util.find_spec(module)
        if spec is not None and spec.submodule_search_locations is not None:
            spec = importlib.util.find_spec(module + ".__main__")
            if spec is None:
                return fail(f"{module} is a package without a __main__ module; it cannot be run")
    except ModuleNotFoundError as e:
        if e.name is not None and (module == e.name or module.startswith(e.name + ".")):
            return fail(f"no module named {module}")
        return fail(f"error while finding {module}: {type(e).__name__}: {e}")  # its package's import failed
    except (ImportError, ValueError) as e:
        return fail(f"error while finding {module}: {type(e).__name__}: {e}")
    except Exception as e:  # the package's own code raised while it was imported
        return show_uncaught(e)
    if spec is None:
        return fail(f"no module named {module}")
    try:
        code = spec.loader.get_code(spec.name) if spec.loader is not None and hasattr(spec.loader, "get_code") else None
    except SyntaxError as e:  # printed as for a script: the error, none of the import system's frames
        return show_syntax_error(e)
    if code is None:
        return fail(f"{module} has no code to run")
    sys.argv = [spec.origin] + list(args)
    return run_program(lambda: run_as_main(code, __name__="__main__", __file__=spec.origin, __cached__=spec.cached,
                                           __loader__=spec.loader, __spec__=spec, __package__=spec.parent))


def show_syntax_error(e):
    """Prints the program's SyntaxError as python3 does, without a traceback; 1."""
    sys.excepthook(type(e), e.with_traceback(None), None)
    return 1


def compiled(source, filename):
    """The program's code, or None after printing its SyntaxError as python3 does."""
    try:
        return compile(source, filename, "exec")
    except (SyntaxError, ValueError) as e:
        # A NUL byte: compile() raises a ValueError before Python 3.12, and words it with
        # "source code string"; python3 running the file says "source code".
        if "null bytes" in str(e):
            e = SyntaxError(str(e).replace("source code string", "source code"))
        elif not isinstance(e, SyntaxError):
            raise
        show_syntax_error(e)
    return None


def run_source(source, filename, **attributes):
    """Compiles the program and runs it as __main__ with `attributes`; 1 for a SyntaxError."""
    code = compiled(source, filename)
    if code is None:
        return 1
    return run_program(lambda: run_as_main(code, __name__="__main__", __spec__=None, __package__=None, **attributes))


def run_stdin(args):
    # As `python3 -`: the program read from standard input, the working directory on the path.
    if (status := switch_on()) is not None:
        return status
    sys.argv = ["-"] + list(args)
    put_first_on_path(os.getcwd())
    # No standard input (closed) is an empty program, as for python3.
    source = sys.stdin.buffer.read() if sys.stdin is not None else b""
    return run_source(source, "<stdin>", __file__="<stdin>", __cached__=None, __loader__=None)


def has_main_entry(zip_path):
    """Whether a zip file holds the __main__ module that runpy runs (source or compiled)."""
    try:
        with zipfile.ZipFile(zip_path) as archive:
            return bool({"__main__.py", "__main__.pyc"} & set(archive.namelist()))
    except (OSError, zipfile.BadZipFile):
        return True  # runpy reports what it cannot read


def run_script(script, args):
    if script == "-":
        return run_stdin(args)
    path = os.path.abspath(script)  # python3 gives __main__ the absolute path since 3.9
    if not os.path.exists(path):
        return fail(f"no such script: {script}")
    if (status := switch_on()) is not None:
        return status
    sys.argv = [script] + list(args)
    directory = os.path.dirname(path)
    if os.path.isdir(path):  # a directory with a __main__.py, first on the path
        directory, path = path, os.path.join(path, "__main__.py")
        if not os.path.isfile(path):
            return fail(f"no __main__.py in {script}")
    elif os.path.isfile(path) and zipfile.is_zipfile(path):
        # A zip file with a __main__.py: runpy puts it on the path and runs that. Only a
        # regular file is asked: asking reads a pipe's program (/dev/stdin, <(...)) away.
        if not has_main_entry(path):
            return fail(f"no __main__.py in {script}")
        put_first_on_path(os.getcwd())
        # Absolute, as python3 gives sys.path[0] and __file__ (its sys.argv[0] is the path as
        # typed; runpy makes it this path).
        return run_program(lambda: runpy.run_path(path, run_name="__main__"))
    put_first_on_path(directory)
    try:
        with io.open_code(path) as f:
            source = f.read()
    except OSError as e:  # as python3 says it, with its status
        print(f"layoutguard_torch: can't open file '{path}': [Errno {e.errno}] {e.strerror}", file=sys.stderr)
        return 2
    # python3's loader for a script: what warnings and linecache ask for the source lines.
    return run_source(source, path, __file__=path, __cached__=None,
                      __loader__=importlib.machinery.SourceFileLoader("__main__", path))


def main(argv):
    if argv and argv[0] == "--":
        if len(argv) < 2:
            return fail("-- needs a script")
        return run_script(argv[1], argv[2:])
    if argv and argv[0] == "-m":
        if len(argv) < 2:
            return fail("-m needs a module name")
        return run_module(argv[1], argv[2:])
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__ if argv else USAGE, file=sys.stderr if not argv else sys.stdout)
        return 0 if argv else 2
    return run_script(argv[0], argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
