"""python3 -m layoutguard_torch [--] script.py [args...]

Runs a Python script with every ATen op of its main thread (and the threads it starts, and
autograd's) checked for lost channels_last. LAYOUTGUARD sets the mode (warn when unset; off
runs the script with nothing switched on) and LAYOUTGUARD_OPTIONS the rest, as for any
layoutguard program: report=, summary=, events=, suppressions=, write_suppressions=, allow=,
min_bytes=, max_reports=, help=1.
Exit status: the script's; 2 for a usage error."""
import os
import runpy
import sys

USAGE = "usage: python3 -m layoutguard_torch [--] script.py [args...]"


def main(argv):
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__ if argv else USAGE, file=sys.stderr if not argv else sys.stdout)
        return 0 if argv else 2
    script = argv[0]
    if not os.path.isfile(script):
        print(f"layoutguard_torch: no such script: {script}\n{USAGE}", file=sys.stderr)
        return 2
    os.environ.setdefault("LAYOUTGUARD", "warn")
    import layoutguard_torch as lgt  # after LAYOUTGUARD is set: the library reads it at load
    # Off switches nothing on: the script's ops cost what they cost without the bridge (its
    # own enable(mode) or guard(mode) still switches on).
    if os.environ["LAYOUTGUARD"].strip() not in ("", "off", "0"):
        lgt.enable()
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
