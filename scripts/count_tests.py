#!/usr/bin/env python3
"""Adds up test results from meson's testlog.json files and prints 'N passed, N failed'.

A doctest executable counts its test cases (from doctest's own summary line); any other meson
test counts as one. A test that failed without a doctest summary (a crash, a timeout, a
sanitizer report) counts as one failure. doctest's own "skipped" figure is not used: with
--test-suite it counts the test cases of the other suites, which did not run here.
"""
import json
import re
import sys

SUMMARY = re.compile(r"test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed\s*\|\s*(\d+) skipped")


def count(path):
    passed = failed = skipped = 0
    with open(path, encoding="utf-8") as log:
        for line in log:
            entry = json.loads(line)
            result = entry.get("result", "")
            match = SUMMARY.search(entry.get("stdout", "") or "")
            if match:
                p, f = int(match.group(2)), int(match.group(3))
                if result not in ("OK", "EXPECTEDFAIL") and f == 0:
                    f = 1  # doctest said fine but the process still failed (e.g. sanitizer)
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


def main(paths):
    total = [0, 0, 0]
    for path in paths:
        for i, n in enumerate(count(path)):
            total[i] += n
    line = f"{total[0]} passed, {total[1]} failed"
    if total[2]:
        line += f", {total[2]} skipped"
    print(line)
    return 1 if total[1] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
