#!/usr/bin/env bash
# Every doctest case of lg_tests belongs to one of the suites that meson runs (one meson test
# per suite, `--test-suite=NAME`); a case outside them all compiles and never runs. Lists any.
#   check_no_unsuited_cases.sh LG_TESTS SUITE,SUITE,...
set -euo pipefail
out="$("$1" --test-suite-exclude="$2" --list-test-cases --no-version)"
count=$("$1" --test-suite-exclude="$2" --count --no-version | grep -oE "filters: [0-9]+" | grep -oE "[0-9]+")
if [ "$count" != 0 ]; then
  echo "$count test case(s) outside the suites $2, which no meson test runs:"
  echo "$out"
  exit 1
fi
echo "every test case is in one of: $2"
