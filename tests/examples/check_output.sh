#!/usr/bin/env bash
# Runs an example and compares its output with the golden file, ignoring the one line that
# depends on whether a GPU is visible.
set -euo pipefail
exe="$1"; expected="$2"
filter() { grep -v -e '^(skipped: ' -e '^x.cuda().stride()' -e '^cuda: ' || true; }
diff -u <(filter < "$expected") <("$exe" | filter)
echo "output matches $(basename "$expected")"
