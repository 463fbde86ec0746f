#!/usr/bin/env python3
"""Adds up test results from meson's testlog.json files and prints 'N passed, N failed'.

A doctest executable counts its test cases (from doctest's own summary line), a GoogleTest
executable its tests (from its [  PASSED  ] / [  FAILED  ] lines), a Python unittest its tests
(from "Ran N tests" and "FAILED (failures=F, errors=E)"); any other meson test counts
as one. A test that failed without a doctest summary (a crash, a timeout, a
sanitizer report) counts as one failure. doctest's own "skipped" figure is not used: with
--test-suite it counts the test cases of the other suites, which did not run here.
"""
import json
import re
import sys

SUMMARY = re.compile(r"test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed\s*\|\s*(\d+) skipped")
GTEST_PASSED = re.compile(r"^\[  PASSED  \] (\d+) tests?\.", re.M)
GTEST_FAILED = re.compile(r"^\[  FAILED  \] (\d+) tests?, listed below", re.M)
UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ", re.M)
UNITTEST_FAILED = re.compile(r"^FAILED \(([^)]*)\)", re.M)


def framework_counts(stdout):
    """(passed, failed) from a doctest or GoogleTest summary, or None."""
    match = SUMMARY.search(stdout)
    if match:
        return int(match.group(2)), int(match.group(3))
    ran = UNITTEST_RAN.search(stdout)
    if ran:  # Python's unittest: "Ran N tests", then "OK" or "FAILED (failures=F, errors=E)"
        bad = UNITTEST_FAILED.search(stdout)
        failed = sum(int(n) for k, n in re.findall(r"(failures|errors)=(\d+)", bad.group(1))) if bad else 0
        return int(ran.group(1)) - failed, failed
    passed, failed = GTEST_PASSED.search(stdout), GTEST_FAILED.search(stdout)
    if passed or failed:
        return (int(passed.group(1)) if passed else 0), (int(failed.group(1)) if failed else 0)
    return None


def count(path):
    passed = failed = skipped = 0
    with open(path, encoding="utf-8") as log:
        for line in log:
            entry = json.loads(line)
            result = entry.get("result", "")
            counts = framework_counts(entry.get("stdout", "") or "")
            if counts:
                p, f = counts
                if result not in ("OK", "EXPECTEDFAIL") and f == 0:
                    f = 1  # the framework said fine but the process still failed (e.g. sanitizer)
                passed, failed = passed + p, failed + f
            elif result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
                reason = (entry.get("stdout", "") or "").strip().splitlines()
                print(f"skipped {entry.get('name')}: {reason[-1] if reason else 'no reason given'}")
            else:
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
    line = f"{total[0]} passed, {total[1]} failed"
    if total[2]:
        line += f", {total[2]} skipped"
    print(line)
    return 1 if total[1] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
