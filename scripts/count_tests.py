#!/usr/bin/env python3
"""Adds up test results from meson's testlog.json files and ends with the line 'N passed, N failed'
(the skipped ones are counted on the line before it).

A doctest executable counts its test cases (from doctest's own summary line), a GoogleTest
executable its tests (from its [  PASSED  ] / [  FAILED  ] / [  SKIPPED ] lines), a Python
unittest its tests (from "Ran N tests" and "OK (skipped=S)" or "FAILED (failures=F, errors=E,
skipped=S)"); any other meson test counts as one. A test that failed without a summary (a
crash, a timeout, a sanitizer report) counts as one failure. doctest's own "skipped" figure is
not used: with --test-suite it counts the test cases of the other suites, which did not run
here. A run that shows no test is a failure: a missing or empty testlog, or a test program whose
summary says it ran none (a filter that matched nothing).
"""
import json
import re
import sys

SUMMARY = re.compile(r"test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed\s*\|\s*(\d+) skipped")
GTEST_PASSED = re.compile(r"^\[  PASSED  \] (\d+) tests?\.", re.M)
GTEST_FAILED = re.compile(r"^\[  FAILED  \] (\d+) tests?, listed below", re.M)
UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ", re.M)
UNITTEST_RESULT = re.compile(r"^(?:OK|FAILED) \(([^)]*)\)", re.M)
GTEST_SKIPPED = re.compile(r"^\[  SKIPPED \] (\d+) tests?, listed below", re.M)


def framework_counts(stdout):
    """(passed, failed, skipped) from a doctest, unittest or GoogleTest summary, or None."""
    match = SUMMARY.search(stdout)
    if match:
        return int(match.group(2)), int(match.group(3)), 0
    ran = UNITTEST_RAN.search(stdout)
    if ran:  # Python's unittest: "Ran N tests", then "OK" or "FAILED", each with "(key=N, ...)"
        result = UNITTEST_RESULT.search(stdout, ran.end())
        figures = {}
        for part in result.group(1).split(",") if result else []:
            key, _, n = part.partition("=")
            figures[key.strip()] = int(n)
        # Expected failures pass; an unexpected success fails the run, as unittest says.
        failed = figures.get("failures", 0) + figures.get("errors", 0) + figures.get("unexpected successes", 0)
        skipped = figures.get("skipped", 0)
        return int(ran.group(1)) - failed - skipped, failed, skipped
    passed, failed, skipped = GTEST_PASSED.search(stdout), GTEST_FAILED.search(stdout), GTEST_SKIPPED.search(stdout)
    if passed or failed or skipped:
        return tuple(int(m.group(1)) if m else 0 for m in (passed, failed, skipped))
    return None


def count(path):
    """(passed, failed, skipped) of one testlog.json; a missing or empty log is one failure."""
    passed = failed = skipped = entries = 0
    try:
        log = open(path, encoding="utf-8")
    except OSError as e:
        print(f"failed {path}: no test log ({e.strerror})")
        return 0, 1, 0
    with log:
        for line in log:
            entry = json.loads(line)
            entries += 1
            name, result = entry.get("name"), entry.get("result", "")
            counts = framework_counts(entry.get("stdout", "") or "")
            if counts:
                p, f, s = counts
                if result not in ("OK", "EXPECTEDFAIL") and f == 0:
                    f = 1  # the framework said fine but the process still failed (e.g. sanitizer)
                if p + f + s == 0:
                    print(f"failed {name}: its summary says it ran no test")
                    f = 1
                passed, failed, skipped = passed + p, failed + f, skipped + s
            elif result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
                reason = (entry.get("stdout", "") or "").strip().splitlines()
                print(f"skipped {name}: {reason[-1] if reason else 'no reason given'}")
            else:
                failed += 1
    if entries == 0:
        print(f"failed {path}: the log holds no test")
        failed += 1
    return passed, failed, skipped


def main(args):
    """args: testlog.json paths, and NAME=PASS|FAIL for checks run outside meson (one each)."""
    total = [0, 0, 0]
    for arg in args:
        if arg.endswith(("=PASS", "=FAIL")):
            total[0 if arg.endswith("=PASS") else 1] += 1
            continue
        for i, n in enumerate(count(arg)):
            total[i] += n
    if total[2]:
        print(f"{total[2]} skipped")
    print(f"{total[0]} passed, {total[1]} failed")
    return 1 if total[1] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
