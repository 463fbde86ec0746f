"""scripts/count_tests.py on made-up meson test logs: skipped tests are not passes, a run that
shows no test fails, and the last line is exactly 'N passed, N failed'."""
import json
import os
import subprocess
import sys
import tempfile

COUNT = os.path.join(sys.argv[1], "scripts", "count_tests.py")


def entry(name, result, stdout=""):
    return {"name": name, "result": result, "stdout": stdout}


def run(tmp, *logs, extra=()):
    paths = []
    for i, entries in enumerate(logs):
        path = os.path.join(tmp, f"log{i}.json")
        if entries is None:  # no log at all
            if os.path.exists(path):
                os.remove(path)
        else:
            with open(path, "w") as f:
                f.writelines(json.dumps(e) + "\n" for e in entries)
        paths.append(path)
    out = subprocess.run([sys.executable, COUNT, *paths, *extra], capture_output=True, text=True)
    return out.returncode, out.stdout.splitlines()


CASES = [
    # (logs, extra args, expected status, expected last line, a line expected before it)
    ([[entry("plain", "OK"), entry("gone", "SKIP", "no GPU visible\n")]], (), 0, "1 passed, 0 failed",
     "skipped gone: no GPU visible"),
    ([[entry("doctest", "OK", "[doctest] test cases: 12 | 12 passed | 0 failed | 0 skipped\n")]], (), 0,
     "12 passed, 0 failed", None),
    ([[entry("unittest", "OK", "Ran 5 tests in 0.1s\n\nOK (skipped=2)\n")]], (), 0, "3 passed, 0 failed",
     "2 skipped"),
    ([[entry("unittest", "FAIL", "Ran 6 tests in 0.1s\n\nFAILED (failures=1, errors=1, skipped=1)\n")]], (), 1,
     "3 passed, 2 failed", "1 skipped"),
    ([[entry("unittest", "OK", "Ran 3 tests in 0.1s\n\nOK (expected failures=1)\n")]], (), 0,
     "3 passed, 0 failed", None),
    ([[entry("unittest", "FAIL", "Ran 2 tests in 0.1s\n\nFAILED (unexpected successes=1)\n")]], (), 1,
     "1 passed, 1 failed", None),
    ([[entry("gtest", "OK", "[  PASSED  ] 4 tests.\n[  SKIPPED ] 1 test, listed below:\n")]], (), 0,
     "4 passed, 0 failed", "1 skipped"),
    # A sanitizer failing a program whose framework said fine.
    ([[entry("doctest", "FAIL", "[doctest] test cases: 3 | 3 passed | 0 failed | 0 skipped\n")]], (), 1,
     "3 passed, 1 failed", None),
    # Nothing ran: a filter that matched no test case, an empty log, a missing log.
    ([[entry("doctest", "OK", "[doctest] test cases: 0 | 0 passed | 0 failed | 0 skipped\n")]], (), 1,
     "0 passed, 1 failed", "failed doctest: its summary says it ran no test"),
    ([[]], (), 1, "0 passed, 1 failed", None),
    ([None], (), 1, "0 passed, 1 failed", None),
    # Checks run outside meson.
    ([[entry("plain", "OK")]], ("fuzz-a=PASS", "fuzz-b=FAIL"), 1, "2 passed, 1 failed", None),
]

failures = 0
with tempfile.TemporaryDirectory() as tmp:
    for logs, extra, status, last, before in CASES:
        code, lines = run(tmp, *logs, extra=extra)
        ok = code == status and lines and lines[-1] == last and (before is None or before in lines[:-1])
        if not ok:
            failures += 1
            print(f"FAILED: logs {logs} {extra}: status {code} (expected {status}), output {lines}")
print(f"{len(CASES) - failures} of {len(CASES)} cases as expected")
sys.exit(1 if failures else 0)
