#!/usr/bin/env bash
# The measurement and packing scripts of the PyTorch bridge refuse a missing build or missing
# arguments with exit status 2 and a line naming what is missing, before doing anything.
#   check_script_usage.sh SOURCE_ROOT
set -uo pipefail
root=$1
failed=0
expect() {  # expect 'TEXT' SCRIPT ARGS...: exit 2, TEXT on stderr
  local text=$1
  shift
  local err rc
  err=$("$root/scripts/$1" "${@:2}" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -ne 2 ] || [[ "$err" != *"$text"* ]]; then
    echo "FAIL: scripts/$* exited $rc, wanted 2 and '$text'; said: $err"
    failed=1
  else
    echo "ok: scripts/$*"
  fi
}
missing=/nonexistent/build
expect "usage: scripts/pack-torch-device BUILD [OUT]" pack-torch-device
expect "$missing is not a build directory" pack-torch-device "$missing"
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT
expect "no bridge built in $empty" pack-torch-device "$empty" "$empty/out"
expect "usage: scripts/torch-device-check BUILD_DIR PYTHON OUT_DIR" torch-device-check "$missing"
expect "$missing is not a build directory" torch-device-check "$missing" python3 /tmp/unused
expect "$missing/bench/torch_overhead missing" torch-instructions "$missing"
expect "$missing/python/layoutguard_torch missing" torch-step-instructions "$missing"
exit $failed
