"""python3 -m layoutguard_torch.matrix [options]: the channels_last support table.

Exit status: 0 done; 1 --check found rows that differ from the committed table; 2 a bad
argument or environment (--device cuda without a GPU, a glob that matches nothing, no
expecttest), with one line on stderr."""
import argparse
import math
import os
import platform
import sys
import time

from . import PROG, UsageError

MAX_JOBS = 64  # each worker imports torch: a mistyped count would fill the memory

EPILOG = """\
Rows: by default every OpInfo and every ModuleInfo. --ops alone runs only ops, --modules alone
only modules; both run both. GLOBS is a comma-separated list of fnmatch patterns on full names
(an OpInfo's name, plus '.VARIANT' for a variant: 'nn.functional.pad.reflect';
a ModuleInfo's name: 'nn.Conv2d').
Each sample runs in a worker process; a crash or a timeout is that op's 'error' row.
Needs the PyPI package expecttest (torch's op_db imports it)."""


def parse(argv):
    p = argparse.ArgumentParser(prog="python3 -m " + PROG, description=__doc__.splitlines()[0],
                                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="where the ops run (default cpu)")
    p.add_argument("--backward", action=argparse.BooleanOptionalAction, default=True,
                   help="also take backward through ops that support autograd (default on)")
    p.add_argument("--ops", metavar="GLOBS", help="OpInfos to run (comma-separated globs)")
    p.add_argument("--modules", metavar="GLOBS", help="ModuleInfos to run (comma-separated globs)")
    p.add_argument("--samples", type=int, default=8, metavar="N",
                   help="at most N samples per op or module (default 8)")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), metavar="N",
                   help="worker processes side by side (default min(2, CPUs))")
    p.add_argument("--timeout", type=float, default=180.0, metavar="S",
                   help="seconds one op (all its samples) may take before it is an error (default 180)")
    p.add_argument("--json", metavar="OUT", help="write the table as JSON")
    p.add_argument("--markdown", metavar="OUT", help="write the table as Markdown")
    p.add_argument("--check", metavar="JSON",
                   help="compare the rows of this run with a committed table; exit 1 where they differ")
    p.add_argument("--list", action="store_true", help="print the selected names and exit")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    args = p.parse_args(argv)
    if args.samples < 1:
        raise UsageError(f"--samples must be at least 1, got {args.samples}")
    if not 1 <= args.jobs <= MAX_JOBS:
        raise UsageError(f"--jobs must be from 1 to {MAX_JOBS} (each worker imports torch), got {args.jobs}")
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise UsageError(f"--timeout must be a positive number of seconds, got {args.timeout}")
    for flag, path in (("--json", args.json), ("--markdown", args.markdown)):
        if path is not None:
            check_writable(flag, path)
    return args


def check_writable(flag, path):
    """Before the run, which may take long: a file the table can be written to at its end."""
    directory = os.path.dirname(path) or "."
    if os.path.isdir(path):
        raise UsageError(f"{flag} {path}: is a directory; the table needs a file name")
    if not os.path.isdir(directory):
        raise UsageError(f"{flag} {path}: no directory {directory}")
    if not os.access(directory, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise UsageError(f"{flag} {path}: not writable")


def load_databases():
    try:
        import expecttest  # noqa: F401  (op_db imports it; say so before torch's long traceback)
    except ImportError:
        raise UsageError(f"the Python package 'expecttest' is not installed for {sys.executable} "
                         "(torch's op_db needs it: pip install expecttest)") from None
    try:
        from torch.testing._internal.common_methods_invocations import op_db
        from torch.testing._internal.common_modules import module_db
    except Exception as exc:
        raise UsageError(f"cannot import torch's OpInfo/ModuleInfo databases: {type(exc).__name__}: "
                         f"{str(exc).splitlines()[0] if str(exc) else ''}") from None
    return op_db, module_db


def select_tasks(args, op_db, module_db):
    from .samples import full_name, select
    if args.ops is None and args.modules is None:
        op_globs = module_globs = "*"
    else:
        op_globs, module_globs = args.ops, args.modules
    tasks = []
    for kind, globs, names in (("op", op_globs, [full_name(o) for o in op_db]),
                               ("module", module_globs, [m.name for m in module_db])):
        if globs is None:
            continue
        chosen = select(dict.fromkeys(names), globs)
        if not chosen:
            flag = "--ops" if kind == "op" else "--modules"
            raise UsageError(f"{flag} {globs!r} matches no {'OpInfo' if kind == 'op' else 'ModuleInfo'} "
                             f"of torch {__import__('torch').__version__} (--list shows the names)")
        tasks += [(kind, n) for n in chosen]
    return tasks


def machine():
    try:
        with open("/proc/cpuinfo") as f:
            model = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        model = platform.processor() or platform.machine()
    return f"{os.cpu_count()}-CPU {model}"


def main(argv):
    args = parse(argv)
    import torch
    if args.device == "cuda" and not torch.cuda.is_available():
        raise UsageError(f"--device cuda, but torch {torch.__version__} sees no CUDA device "
                         f"(torch.cuda.is_available() is False)")
    committed = None
    if args.check:
        from .render import read_table
        try:
            committed = read_table(args.check)
        except ValueError as exc:
            raise UsageError(f"--check {exc}") from None
    op_db, module_db = load_databases()
    tasks = select_tasks(args, op_db, module_db)
    if args.list:
        print("\n".join(f"{k} {n}" for k, n in tasks))
        return 0
    del op_db, module_db

    from . import render, supervisor, verdicts
    env = dict(os.environ)
    env["LAYOUTGUARD_OPTIONS"] = ":".join(filter(None, [env.get("LAYOUTGUARD_OPTIONS", ""), "summary=0"]))
    env.update(LG_MATRIX_DEVICE=args.device, LG_MATRIX_CAP=str(args.samples),
               LG_MATRIX_BACKWARD="1" if args.backward else "0", OMP_NUM_THREADS="1",
               # Some sample generators iterate over sets of strings: a fixed hash seed makes
               # the samples (and the table's examples) the same every run.
               PYTHONHASHSEED="0")
    rows = {}
    started = time.monotonic()

    def on_result(task, summary, samples, seconds):
        r = verdicts.row(task[0], task[1], summary, samples, seconds)
        rows[task] = r
        if not args.quiet:
            print(f"[{len(rows)}/{len(tasks)}] {task[0]} {task[1]}: forward {r['forward']['verdict']}, "
                  f"backward {r['backward']['verdict']} ({seconds:.1f} s)", file=sys.stderr, flush=True)

    try:
        supervisor.run(tasks, env, args.jobs, args.timeout, on_result)
    except supervisor.WorkerStartError as exc:
        raise UsageError(str(exc)) from None
    ordered = [rows[t] for t in tasks]
    result = {"meta": {"torch": torch.__version__, "device": args.device, "python": platform.python_version(),
                       "backward": args.backward, "samples_per_op": args.samples, "jobs": args.jobs,
                       "timeout_s": args.timeout, "machine": machine(),
                       "duration_s": round(time.monotonic() - started, 1), "argv": list(argv)},
              "counts": verdicts.counts(ordered), "rows": ordered}
    if args.json:
        render.write_json(result, args.json)
    if args.markdown:
        render.write_markdown(result, args.markdown)
    if committed is not None:
        problems = render.check(result, committed)
        for line in problems:
            print(f"{PROG}: check: {line}", file=sys.stderr)
        if problems:
            return 1
        if not args.quiet:
            print(f"{PROG}: check: {len(ordered)} rows agree with {args.check}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        sys.exit(2)
