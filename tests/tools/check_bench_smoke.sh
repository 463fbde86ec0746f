#!/usr/bin/env bash
# Smoke run of every benchmark program (--smoke: the smallest case of --quick): each starts,
# exits 0 and writes valid JSON with records (or says why it skipped, e.g. no GPU); then
# bench/report.py merges the files and renders a copy of docs/performance.md from them.
# Timings are not looked at: benchmarks are never pass/fail.
#   check_bench_smoke.sh SOURCE_ROOT PROGRAM...
set -euo pipefail
root="$1"; shift
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
inputs=()
for exe in "$@"; do
  name="$(basename "$exe")"
  "$exe" --smoke --json "$tmp/$name.json" >"$tmp/$name.out" || { cat "$tmp/$name.out"; echo "$name failed"; exit 1; }
  python3 - "$tmp/$name.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["mode"] == "smoke", d["mode"]
assert d["machine"]["cpu"] and d["machine"]["layoutguard"], "machine facts missing"
assert d["records"] or d.get("skipped"), "no records and no reason"
for r in d["records"]:
    assert "section" in r, r
    for key in ("median_ms", "min_ms", "max_ms"):
        if key in r:
            assert r[key] >= 0, r
PY
  case "$name" in hook_overhead | models) label=hooks ;; *) label="" ;; esac
  inputs+=("$label=$tmp/$name.json")
  echo "$name: ok"
done
# cuda_ops refuses contradicting section flags with its usage line (exit 2), GPU or not.
for exe in "$@"; do
  [ "$(basename "$exe")" = cuda_ops ] || continue
  rc=0
  "$exe" --conv-only --bandwidth-only >"$tmp/usage.out" 2>&1 || rc=$?
  if [ "$rc" -ne 2 ] || ! grep -q "usage: cuda_ops" "$tmp/usage.out"; then
    cat "$tmp/usage.out"
    echo "cuda_ops took --conv-only with --bandwidth-only (exit $rc)"
    exit 1
  fi
  echo "cuda_ops: contradicting flags refused"
done
mkdir -p "$tmp/docs"
cp "$root/docs/performance.md" "$tmp/docs/"
python3 "$root/bench/report.py" merge "$tmp/all.json" "${inputs[@]}"
python3 "$root/bench/report.py" render "$tmp/all.json" "$tmp/docs"
report="$(cat "$tmp/docs/performance.md")"
grep -q "goals met" <<<"$report"
echo "bench smoke ok"
