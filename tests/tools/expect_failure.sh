# Sourced by the CLI tests: expect_failure WANT ARGS... runs "$tool" ARGS and requires exit
# status 2 with WANT in its stderr.
expect_failure() {
  local want="$1"; shift
  set +e
  err="$("$tool" "$@" 2>&1 >/dev/null)"; rc=$?
  set -e
  [ "$rc" -eq 2 ] || { echo "expected exit 2 from: $*; got $rc"; exit 1; }
  case "$err" in *"$want"*) ;; *) echo "expected '$want' in: $err"; exit 1 ;; esac
}
