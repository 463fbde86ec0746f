#!/usr/bin/env bash
# One model's audit as a test: `layoutguard audit --model M` must exit with the expected status
# (0: clean, 1: violations or over --max-conversion-bytes), print the per-op table and totals, and write a JSON report and a
# Graphviz file that agree with it.
#   check_audit.sh TOOL MODEL EXPECTED_STATUS SIZE [extra audit flags...]
# Environment: LG_AUDIT_OPTIONS, more LAYOUTGUARD_OPTIONS for the run; LG_EXPECT_BUDGET_OVER=0|1,
# what the report's conversion_budget.over must say (with --max-conversion-bytes);
# LG_EXPECT_UNCONVERTED=N, how many convolutions must have channels-last input and a weight in
# another format (default 0).
set -euo pipefail
tool="$1"; model="$2"; want="$3"; size="$4"; shift 4
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
set +e
# report= naming the same file must not let the guard's exit report overwrite the audit's.
LAYOUTGUARD_OPTIONS="report=$tmp/report.json${LG_AUDIT_OPTIONS:+:$LG_AUDIT_OPTIONS}" \
  "$tool" audit --model "$model" --size "$size" --report "$tmp/report.json" --dot "$tmp/flow.dot" "$@" >"$tmp/out.txt" 2>"$tmp/err.txt"
rc=$?
set -e
cat "$tmp/out.txt"
[ "$rc" -eq "$want" ] || { echo "audit of $model exited $rc, expected $want"; cat "$tmp/err.txt"; exit 1; }
out="$(cat "$tmp/out.txt")"
grep -q "^layoutguard audit: $model" <<<"$out"
grep -q "^totals: [0-9]* ops" <<<"$out"
if grep -q '"over": true' "$tmp/report.json"; then grep -q "^result: over the conversion budget" <<<"$out"; fi
python3 - "$tmp/report.json" "$want" "${LG_EXPECT_BUDGET_OVER:-}" "${LG_EXPECT_UNCONVERTED:-0}" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
want = int(sys.argv[2])
expect_over = sys.argv[3]
unconverted = sum(1 for op in r["ops"] if op["unconverted_weight"])
assert unconverted == int(sys.argv[4]), ("convolutions with an unconverted weight", unconverted, sys.argv[4])
t = r["totals"]
assert t["ops"] == len(r["ops"]) > 10, t
flagged = sum(1 for op in r["ops"] if op["violation"])
if want == 0:
    assert t["violations"] == 0 and flagged == 0 and r["guard"]["violations"] == [], t
else:
    assert t["violations"] > 0 or r["conversion_budget"]["over"], t
# Loss spans: one per violating row not already inside an earlier span; every row of a span
# comes after its lost row and reads NCHW data; a restoring row gives channels_last back.
ops, spans = r["ops"], r["loss_spans"]
if t["violations"] == 0:
    assert spans == [], spans
else:
    assert spans, "violations but no loss span"
    inside = set()
    for sp in spans:
        lost = sp["lost_at"]
        assert ops[lost]["violation"] and ops[lost]["op"] == sp["op"], sp
        for i in sp["nchw_ops"]:
            assert i > lost and ops[i]["out"].startswith("NC"), (i, ops[i])
            inside.add(i)
        for i in sp["restored_at"]:
            assert i > lost and ops[i]["out"].startswith(("NHWC", "NDHWC")), (i, ops[i])
            assert any(s in [lost] + sp["nchw_ops"] for s in ops[i]["sources"]), (i, ops[i])
    for i, op in enumerate(ops):  # a violation is a span's start or inside one
        if op["violation"]:
            assert i in inside or any(sp["lost_at"] == i for sp in spans), (i, op)
budget = r.get("conversion_budget")
if budget:  # --max-conversion-bytes: over exactly when more bytes were converted
    assert budget["over"] == (t["conversion_bytes"] > budget["max_bytes"]), (budget, t)
if expect_over:
    assert budget and budget["over"] == (expect_over == "1"), (budget, expect_over)
print("report ok:", t)
PY
if [ "${LG_EXPECT_UNCONVERTED:-0}" -gt 0 ]; then
  grep -q "^${LG_EXPECT_UNCONVERTED} convolutions with channels_last input and a weight in another format" <<<"$out"
fi
if grep -q "^!!" <<<"$out"; then grep -q "^loss spans: where channels_last was lost" <<<"$out"; fi
grep -q "^digraph layout_flow" "$tmp/flow.dot"
[ "$(grep -cE '^  n[0-9]+ -> n[0-9]+;$' "$tmp/flow.dot")" -gt 10 ] || { echo "flow graph has no edges"; exit 1; }
if command -v dot >/dev/null; then dot -Tsvg "$tmp/flow.dot" -o "$tmp/flow.svg"; fi
echo "audit $model ok"
