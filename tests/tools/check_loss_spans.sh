#!/usr/bin/env bash
# The legacy U-Net's loss span, end to end: its NCHW-only upsample in up3 loses channels_last,
# the skip-connection cat runs in NCHW, and up3's first conv gives channels_last back. The
# guard's own span (its report under the audit's "guard", followed while the run went on)
# must say the same as the audit's, which FlowRecorder reads from all rows afterwards.
#   check_loss_spans.sh TOOL
set -euo pipefail
tool="$1"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
set +e
"$tool" audit --model unet_legacy --size 64 --report "$tmp/report.json" >"$tmp/out.txt" 2>&1
rc=$?
set -e
cat "$tmp/out.txt"
[ "$rc" -eq 1 ] || { echo "audit exited $rc, expected 1"; exit 1; }
grep -qE '^  lost at #[0-9]+ legacy_upsample2x \(up3\.up\) !!: NHWC -> NCHW, converted 256\.0 KiB$' "$tmp/out.txt"
grep -qE '^    ran in NCHW: 1 op: #[0-9]+ cat \(up3\) !!; [0-9.]+ MiB of NCHW outputs$' "$tmp/out.txt"
grep -qE '^    restored at #[0-9]+ conv2d \(up3\.conv\.double_conv\.0\): NCHW -> NHWC$' "$tmp/out.txt"
python3 - "$tmp/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ops, spans = r["ops"], r["loss_spans"]
assert len(spans) == 1, spans
s = spans[0]
assert ops[s["lost_at"]]["op"] == "legacy_upsample2x" and s["module"] == "up3.up", s
assert [ops[i]["op"] for i in s["nchw_ops"]] == ["cat"], s
assert [ops[i]["module"] for i in s["restored_at"]] == ["up3.conv.double_conv.0"], s
assert s["conversion_bytes"] == 256 * 1024 and not s["ends_in_nchw"], s
g = r["guard"]["loss_spans"]
assert len(g) == 1, g
gs = g[0]
assert (gs["op"], gs["module"], gs["losses"]) == ("legacy_upsample2x", "up3.up", 1), gs
assert [(x["op"], x["module"]) for x in gs["nchw_ops"]] == [(ops[i]["op"], ops[i]["module"]) for i in s["nchw_ops"]], gs
assert [(x["op"], x["module"]) for x in gs["restored_at"]] == [(ops[i]["op"], ops[i]["module"]) for i in s["restored_at"]], gs
assert gs["left_at"] == [] and s["left_at"] == [], (gs, s)
assert gs["conversion_bytes"] == s["conversion_bytes"] and gs["nchw_output_bytes"] == s["nchw_output_bytes"], (gs, s)
print("loss span ok:", s)
print("the guard's span agrees:", gs)
PY
