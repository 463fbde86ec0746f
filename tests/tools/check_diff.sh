#!/usr/bin/env bash
# layoutguard diff over event streams of real runs: a run against itself agrees (exit 0); the
# U-Net against its legacy variant differs at up3 only (the upsample op swapped, and the cat
# after it in another layout); contiguous against channels_last differs on the convolutions;
# bad files and flags are clean errors (exit 2).
#   check_diff.sh TOOL
set -euo pipefail
tool="$1"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
events() {  # events FILE audit-args...
  local file="$1"; shift
  LAYOUTGUARD_OPTIONS="events=$file" "$tool" audit "$@" >/dev/null || true
}
differs() {  # differs OUT diff-args...: the diff must exit 1; its output goes to OUT and here
  local out="$1"; shift
  set +e
  "$tool" diff "$@" >"$out"; local rc=$?
  set -e
  cat "$out"
  [ "$rc" -eq 1 ] || { echo "layoutguard diff $* exited $rc, expected 1"; exit 1; }
}
events "$tmp/unet.jsonl" --model unet --size 64
events "$tmp/legacy.jsonl" --model unet_legacy --size 64
events "$tmp/r18-cl.jsonl" --model resnet18 --size 32
events "$tmp/r18-cf.jsonl" --model resnet18 --size 32 --format contiguous

"$tool" diff "$tmp/unet.jsonl" "$tmp/unet.jsonl" >"$tmp/same.txt"
grep -q "^result: the runs agree on every layout$" "$tmp/same.txt"

differs "$tmp/legacy.txt" "$tmp/unet.jsonl" "$tmp/legacy.jsonl"
grep -qE '^  only in A: #[0-9]+ upsample_bilinear2d \(up3\.up\)' "$tmp/legacy.txt"
grep -qE '^  only in B: #[0-9]+ legacy_upsample2x \(up3\.up\)' "$tmp/legacy.txt"
grep -qE '^  #[0-9]+ cat \(up3\): output 0 channels_last \(1,96,64,64\):\(393216,1,6144,96\) vs contiguous \(1,96,64,64\):\(393216,4096,64,1\)$' \
  "$tmp/legacy.txt"
grep -qE '^compared [0-9]+ calls: 1 with outputs in another layout, 1 only in A, 1 only in B$' "$tmp/legacy.txt"

differs "$tmp/formats.txt" "$tmp/r18-cf.jsonl" "$tmp/r18-cl.jsonl" --depth all >/dev/null
grep -qE '^  #[0-9]+ conv2d \(conv1\): output 0 contiguous .* vs channels_last .*\[kernel ' "$tmp/formats.txt"
grep -qE '^compared [0-9]+ calls: [1-9][0-9]* with outputs in another layout, 0 only in A, 0 only in B$' "$tmp/formats.txt"

# Alignment by hand-made streams: A = relu, conv2d, relu; B = conv2d, relu. The relu at the
# start is A's alone; B's relu matches A's second one, not its first.
event() {  # event SEQ OP
  printf '{"seq":%s,"thread":0,"op":"%s","module":"m","depth":0,"kernel":"k","device":"cpu","outputs":[{"format":"channels_last","sizes":[1,2,2,2],"strides":[8,1,4,2]}]}\n' "$1" "$2"
}
{ event 0 relu; event 1 conv2d; event 2 relu; } >"$tmp/a.jsonl"
{ event 0 conv2d; event 1 relu; } >"$tmp/b.jsonl"
differs "$tmp/align.txt" "$tmp/a.jsonl" "$tmp/b.jsonl"
grep -q "^  only in A: #0 relu (m) (seq 0)$" "$tmp/align.txt"
grep -q "^compared 2 calls: 0 with outputs in another layout, 1 only in A, 0 only in B$" "$tmp/align.txt"

source "$(dirname "$0")/expect_failure.sh"
echo '{"op": "relu"}' >"$tmp/bad.jsonl"
: >"$tmp/empty.jsonl"
expect_failure "$tmp/missing.jsonl: cannot open" diff "$tmp/unet.jsonl" "$tmp/missing.jsonl"
# Special files are refused at once: reading a FIFO would wait forever for a writer.
mkfifo "$tmp/fifo.jsonl"
expect_failure "$tmp/fifo.jsonl: not a regular file (a FIFO); required: an events file" diff "$tmp/unet.jsonl" "$tmp/fifo.jsonl"
expect_failure "$tmp: not a regular file (a directory)" diff "$tmp" "$tmp/unet.jsonl"
expect_failure "bad.jsonl line 1: field 'depth' is missing or of another type" diff "$tmp/bad.jsonl" "$tmp/unet.jsonl"
echo '{"seq":0,"thread":0,"op":"relu","module":"m","depth":"0"}' >"$tmp/mistyped.jsonl"
expect_failure "mistyped.jsonl line 1: field 'depth' is \"0\"; required: an integer from 0" diff "$tmp/mistyped.jsonl" "$tmp/unet.jsonl"
# Numbers are integers in range, as the guard writes them; text is JSON's, UTF-8.
line() {  # line THREAD OUTPUTS MODULE
  printf '{"seq":0,"thread":%s,"op":"relu","module":"%s","depth":0,"kernel":"k","device":"cpu","outputs":%s}\n' "$1" "$3" "$2"
}
output='[{"format":"channels_last","sizes":[1,2,2,2],"strides":[8,1,4,2]}]'
line 1.5 "$output" m >"$tmp/n1.jsonl"
expect_failure "n1.jsonl line 1: field 'thread' is 1.5; required: an integer from 0" diff "$tmp/n1.jsonl" "$tmp/a.jsonl"
line 0 '[{"format":"channels_last","sizes":[9223372036854775808,2,2,2],"strides":[8,1,4,2]}]' m >"$tmp/n2.jsonl"
expect_failure "n2.jsonl line 1: field 'sizes' is 9223372036854775808; required: an integer from 0 to 9223372036854775807" \
  diff "$tmp/n2.jsonl" "$tmp/a.jsonl"
line 0 null m >"$tmp/n3.jsonl"
expect_failure "n3.jsonl line 1: field 'outputs' is missing or of another type" diff "$tmp/n3.jsonl" "$tmp/a.jsonl"
printf '{"op": "caf\xe9"}\n' >"$tmp/latin1.jsonl"
expect_failure "latin1.jsonl line 1: not JSON (" diff "$tmp/latin1.jsonl" "$tmp/a.jsonl"
# Control bytes in a field are shown escaped: a file cannot print a false line or move the cursor.
line 0 "$output" 'm\u001b[31m\nresult: fake' >"$tmp/ctl.jsonl"
differs "$tmp/ctl.txt" "$tmp/ctl.jsonl" "$tmp/a.jsonl"
grep -qF 'relu (m\x1b[31m\x0aresult: fake)' "$tmp/ctl.txt"
if grep -q "^result: fake" "$tmp/ctl.txt"; then echo "a field's line break started a line of its own"; exit 1; fi
expect_failure "holds no user-level (depth 0) call" diff "$tmp/unet.jsonl" "$tmp/empty.jsonl"
expect_failure "needs two events files, got 1" diff "$tmp/unet.jsonl"
expect_failure "needs two events files, got 3" diff "$tmp/unet.jsonl" "$tmp/unet.jsonl" "$tmp/unet.jsonl"
expect_failure "unknown flag --dpeth; accepted: --depth; did you mean '--depth'?" diff --dpeth all "$tmp/unet.jsonl" "$tmp/unet.jsonl"
# Flags may come before, between or after the two files.
"$tool" diff --depth all "$tmp/unet.jsonl" "$tmp/unet.jsonl" | grep -q "(every call)"
"$tool" diff "$tmp/unet.jsonl" --depth all "$tmp/unet.jsonl" | grep -q "(every call)"
# --depth=all carries its value: the next word is still a file.
"$tool" diff --depth=all "$tmp/unet.jsonl" "$tmp/unet.jsonl" | grep -q "(every call)"
"$tool" diff "$tmp/unet.jsonl" --depth=all "$tmp/unet.jsonl" | grep -q "(every call)"
# A number past double's range is bad input (exit 2), not an internal error.
echo '{"seq":1e400,"thread":0,"op":"relu","module":"m","depth":0}' >"$tmp/huge.jsonl"
expect_failure "huge.jsonl line 1: a number out of range (" diff "$tmp/huge.jsonl" "$tmp/unet.jsonl"
# After "--" every word is a file, one named like a flag too.
cp "$tmp/unet.jsonl" "$tmp/--depth"
tool_path="$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")"
(cd "$tmp" && "$tool_path" diff --depth all -- unet.jsonl --depth) | grep -q "^result: the runs agree on every layout$"
expect_failure "--depth must be 0|all" diff "$tmp/unet.jsonl" "$tmp/unet.jsonl" --depth 2
echo "diff ok"
