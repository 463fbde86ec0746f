#!/usr/bin/env bash
# The layoutguard CLI: golden output of `explain`, and exit status 2 with a reason on bad input.
set -euo pipefail
tool="$1"; dir="$2"
diff -u "$dir/explain_nc11.expected" <("$tool" explain 2,3,1,1 3,1,1,1)
diff -u "$dir/explain_cl_slice.expected" <("$tool" explain '(2,3,2,5)' '(60,1,30,3)')
source "$(dirname "${BASH_SOURCE[0]}")/expect_failure.sh"
expect_failure "STRIDES has 2" explain 2,3,4 60,1
expect_failure "comma-separated integers" explain 2,x 1,1
expect_failure "negative stride" explain 2,3 -1,1
expect_failure "negative size" explain 2,-3 3,1
expect_failure "usage:" frobnicate
expect_failure "unknown command 'frobnicate'" frobnicate
expect_failure "ops takes no argument but --markdown" ops --html
expect_failure "explain takes SIZES and STRIDES, got 1 argument(s)" explain 2,3,4,5
expect_failure "version takes no argument" version --verbose
# explain reads layouts only: sizes no machine could hold are explained, not allocated.
huge="$("$tool" explain 1000000000000,3,4,5 60,20,5,1)"
grep -q "to(channels_last) .*(copy)  suggests channels_last" <<<"$huge"
help_text="$("$tool" audit --help)"  # exit 0, usage on stdout
grep -q "^usage: layoutguard audit" <<<"$help_text"
grep -q "^exit status: 0 success" <<<"$help_text"
grep -q "^environment: LAYOUTGUARD, LAYOUTGUARD_OPTIONS" <<<"$help_text"
# One verb's help is that verb's alone; no arguments print every verb's, start no audit.
diff_help="$("$tool" diff --help)"
grep -q "^usage: layoutguard diff A.jsonl B.jsonl" <<<"$diff_help"
! grep -q "layoutguard audit" <<<"$diff_help"
bare="$("$tool")"
grep -q "^usage: layoutguard audit" <<<"$bare"
grep -q "^usage: layoutguard diff" <<<"$bare"
! grep -q "conversion weights" <<<"$bare"  # the audit's header line
grep -q "^layoutguard [0-9]" <<<"$("$tool" --version)"
# A mistyped verb gets a suggestion; errors carry one prefix, not the library's second one.
expect_failure "unknown command 'audti'; did you mean 'audit'?" audti
expect_failure "layoutguard: SIZES must be comma-separated integers" explain 2,x 1,1
case "$err" in *"[layoutguard explain]"*) echo "doubled prefix in: $err"; exit 1 ;; esac
# Mistyped flags and values get one too; a value far from every choice gets none.
expect_failure "unknown flag --modle; accepted: --model" audit --modle resnet18
expect_failure "did you mean '--model'?" audit --modle resnet18
expect_failure "got \"resnt18\"; did you mean 'resnet18'?" audit --model resnt18
expect_failure "got \"channel_last\"; did you mean 'channels_last'?" audit --format channel_last
expect_failure "got \"transformer\"" audit --model transformer
case "$err" in *"did you mean"*) echo "a guess for a word far from every model: $err"; exit 1 ;; esac
# --device cuda without a usable GPU is the flag's error, before any model is built.
if ! "$tool" version | grep -qE "^cuda: .*[1-9][0-9]* devices?:"; then
  expect_failure "layoutguard: --device cuda: no CUDA device can be used here" audit --model resnet18 --device cuda
fi
case "$err" in *"[layoutguard explain]"*) echo "doubled prefix in: $err"; exit 1 ;; esac
# docs/operators.md is the generated catalogue: regenerate it with
#   build/tools/layoutguard ops --markdown > docs/operators.md
# The page lists the CUDA kernels of a CUDA build, so only a CUDA build can reproduce it.
if ! grep -q "^cuda: built without CUDA" <<<"$("$tool" version)"; then
  diff -u "$dir/../../docs/operators.md" <("$tool" ops --markdown) \
    || { echo "docs/operators.md is stale: regenerate it with layoutguard ops --markdown"; exit 1; }
else
  echo "docs/operators.md check skipped: CPU-only build (the page lists a CUDA build's kernels)"
  markdown="$("$tool" ops --markdown)"  # captured first: grep -q on a pipe would SIGPIPE the tool
  grep -q "^| \`conv2d\` | Conv | ConvLike |" <<<"$markdown"
fi
table="$("$tool" ops)"
# What was printed must have arrived: a full disk or a closed standard output is a failure.
work_err="$(mktemp)"
set +e
"$tool" ops --markdown >/dev/full 2>"$work_err"; rc_full=$?
"$tool" version >&- 2>>"$work_err"; rc_closed=$?
set -e
[ "$rc_full" -eq 2 ] && [ "$rc_closed" -eq 2 ] \
  || { echo "writing to a full or closed standard output exited $rc_full and $rc_closed, expected 2"; cat "$work_err"; exit 1; }
grep -q "cannot write to standard output (No space left on device)" "$work_err"
grep -q "cannot write to standard output (Bad file descriptor)" "$work_err"
rm -f "$work_err"
# help VERB is VERB --help; an unknown verb with --help is still unknown; after "--" every
# word is a file, --help included.
[ "$("$tool" help diff)" = "$("$tool" diff --help)" ]
expect_failure "unknown command 'bogus'" bogus --help
expect_failure "unknown command 'bogus'" help bogus
expect_failure "--help: cannot open" diff -- --help other.jsonl
# A mistyped flag last on the line is unknown, not short of a value.
expect_failure "unknown flag --modle; accepted: --model" audit --modle
expect_failure "did you mean '--model'?" audit --modle
expect_failure "unexpected argument \"--\"" audit --
# explain: every message says what is required; giant layouts are explained, not refused.
expect_failure "required: one stride for each size" explain 2,3 3
expect_failure "address beyond int64; required:" explain 9223372036854775807,2 1,1
grep -q "^(2305843009213693952):(1) order=a contiguous" <<<"$("$tool" explain 2305843009213693952 1)"
grep -q "^conv2d .*conv_cpu" <<<"$table"

version_text="$("$tool" version)"
grep -q "^layoutguard " <<<"$version_text"
# report= naming the audit's --report file by a relative name, before the file exists: the
# guard's exit report must not replace the audit's.
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
tool_path="$(realpath "$tool")"
(cd "$work" && LAYOUTGUARD_OPTIONS=report=same.json "$tool_path" audit --model resnet18 --size 32 --report same.json >/dev/null)
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert "guard" in r and "ops" in r, sorted(r)' \
  "$work/same.json"
echo "cli ok"
