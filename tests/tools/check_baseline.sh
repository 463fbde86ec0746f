#!/usr/bin/env bash
# The ratchet: `audit --write-suppressions` turns today's violations into a suppressions file;
# with it, the same audit is clean (exit 0), and a violation it does not list still fails.
#   check_baseline.sh TOOL
set -euo pipefail
tool="$1"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
set +e
"$tool" audit --model unet_legacy --size 64 --write-suppressions "$tmp/known.txt" >"$tmp/first.txt" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "first audit exited $rc, expected 1 (the legacy U-Net's violations)"; cat "$tmp/first.txt"; exit 1; }
grep -q "^wrote [1-9][0-9]* suppressions\? to $tmp/known.txt" "$tmp/first.txt"
cat "$tmp/known.txt"
grep -q "^legacy_upsample2x:up3.up$" "$tmp/known.txt"
grep -q "^# Use as LAYOUTGUARD_OPTIONS=suppressions=" "$tmp/known.txt"
# Every violation of the first run is a line of the file.
[ "$(grep -c '^[^#]' "$tmp/known.txt")" -ge 1 ]

LAYOUTGUARD_OPTIONS="suppressions=$tmp/known.txt" "$tool" audit --model unet_legacy --size 64 >"$tmp/second.txt" 2>&1 \
  || { echo "the audit with its own baseline is not clean"; cat "$tmp/second.txt"; exit 1; }
grep -q "^result: clean" "$tmp/second.txt"
# Each baseline line silenced a loss; a line for a module without one is reported as stale.
grep -q "^  legacy_upsample2x:up3.up: silenced 1 loss$" "$tmp/second.txt"
if grep -q "matched no loss" "$tmp/second.txt"; then echo "a line of the fresh baseline is reported unused"; exit 1; fi
{ cat "$tmp/known.txt"; echo "legacy_upsample2x:down1"; } >"$tmp/stale.txt"
LAYOUTGUARD_OPTIONS="suppressions=$tmp/stale.txt" "$tool" audit --model unet_legacy --size 64 >"$tmp/stale_out.txt" 2>&1 \
  || { echo "the audit with a stale line is not clean"; cat "$tmp/stale_out.txt"; exit 1; }
grep -q "^  legacy_upsample2x:down1: matched no loss in this run; the loss is gone or the line is wrong: remove it$" \
  "$tmp/stale_out.txt"

# A baseline that lists another module does not hide this one's loss.
sed 's/:up3\.up$/:up2.up/' "$tmp/known.txt" >"$tmp/other.txt"
set +e
LAYOUTGUARD_OPTIONS="suppressions=$tmp/other.txt" "$tool" audit --model unet_legacy --size 64 >"$tmp/third.txt" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "a baseline for another module hid the loss (exit $rc)"; exit 1; }

# Rewritten under the stale file, the baseline keeps the lines that silenced a loss and drops
# the stale one: the ratchet tightens.
LAYOUTGUARD_OPTIONS="suppressions=$tmp/stale.txt" "$tool" audit --model unet_legacy --size 64 \
  --write-suppressions "$tmp/tightened.txt" >"$tmp/tightened_out.txt" 2>&1 \
  || { echo "the audit under the stale file is not clean"; cat "$tmp/tightened_out.txt"; exit 1; }
diff <(grep -v '^#' "$tmp/known.txt") <(grep -v '^#' "$tmp/tightened.txt")

# A file that cannot be written is a clean error (exit 2), not a crash; so is writing a
# baseline while allow= hides violations from the run.
source "$(dirname "$0")/expect_failure.sh"
LAYOUTGUARD_OPTIONS="allow=cat" expect_failure "LAYOUTGUARD_OPTIONS has allow=" \
  audit --model unet_legacy --size 64 --write-suppressions "$tmp/again.txt"
expect_failure "cannot write the --write-suppressions file to '$tmp/missing/known.txt'" \
  audit --model resnet18 --size 32 --write-suppressions "$tmp/missing/known.txt"
echo "baseline ok"
