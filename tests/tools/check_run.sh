#!/usr/bin/env bash
# layoutguard run and the audit's bad arguments: a saved input runs in both formats to the same
# output; bad flags, missing files, wrong inputs and corrupt weights exit 2 naming the problem.
set -euo pipefail
tool="$1"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/expect_failure.sh"
# An input file: 2 x 3 x 32 x 32 float32 written with the format's own rules.
python3 - "$tmp/x.safetensors" <<'PY'
import json, random, struct, sys
n = 2 * 3 * 32 * 32
header = json.dumps({"x": {"dtype": "F32", "shape": [2, 3, 32, 32], "data_offsets": [0, 4 * n]}}).encode()
random.seed(1)
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<Q", len(header)) + header + struct.pack(f"<{n}f", *[random.uniform(-1, 1) for _ in range(n)]))
PY
for fmt in contiguous channels_last; do
  "$tool" run --model resnet18 --input "$tmp/x.safetensors" --output "$tmp/y_$fmt.safetensors" --format "$fmt"
done
python3 - "$tmp/y_contiguous.safetensors" "$tmp/y_channels_last.safetensors" <<'PY'
import json, struct, sys
def load(p):
    b = open(p, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    (name, info), = h.items()
    s, e = info["data_offsets"]
    assert name == "output" and info["dtype"] == "F32" and info["shape"] == [2, 1000], h
    return struct.unpack(f"<{(e - s) // 4}f", b[8 + n + s:8 + n + e])
a, b = load(sys.argv[1]), load(sys.argv[2])
scale = max(abs(v) for v in a)
err = max(abs(x - y) for x, y in zip(a, b))
assert err <= 1e-4 * scale, (err, scale)
print(f"run: contiguous and channels_last outputs agree (max diff {err:.3g}, scale {scale:.3g})")
PY
expect_failure "unknown flag --frob" audit --frob 1
expect_failure "--format must be channels_last|contiguous" audit --format nhwc
expect_failure "--batch must be an integer" audit --batch 0
expect_failure "--size must be H or HxW" audit --size 0x3
expect_failure "--size must be H or HxW" audit --size 2x3x4
expect_failure "--model must be resnet18" audit --model vgg16
expect_failure "--dtype must be" audit --dtype int8
expect_failure "--batch needs a value" audit --batch
expect_failure "--size must be H, HxW or TxHxW" audit --model r3d_18 --size 2x4x32x32
expect_failure "unknown flag --batch" run --model resnet18 --batch 2 --input "$tmp/x.safetensors" --output "$tmp/o.safetensors"
expect_failure "given twice" audit --batch 1 --batch 2
expect_failure "--max-conversion-bytes must be an integer in [0, " audit --max-conversion-bytes -1
expect_failure "--max-conversion-bytes must be an integer in [0, " audit --max-conversion-bytes 1x
expect_failure "--input FILE and --output FILE are required" run --model resnet18
expect_failure "cannot open" run --model resnet18 --input "$tmp/missing.safetensors" --output "$tmp/o.safetensors"
expect_failure "needs a floating-point (N, 3, H, W) input" run --model resnet18 --input "$tmp/y_contiguous.safetensors" --output "$tmp/o.safetensors"
expect_failure "needs a floating-point (N, 3, T, H, W) input" run --model r3d_18 --input "$tmp/x.safetensors" --output "$tmp/o.safetensors"
head -c 1000 "$tmp/x.safetensors" > "$tmp/truncated.safetensors"
expect_failure "truncated.safetensors: tensor \"x\": data_offsets" audit --model resnet18 --size 32 --weights "$tmp/truncated.safetensors"
expect_failure "missing keys (102)" audit --model resnet18 --size 32 --weights "$tmp/x.safetensors"
# Special files are refused at once: reading a FIFO would wait forever for a writer.
mkfifo "$tmp/fifo.safetensors"
expect_failure "fifo.safetensors: not a regular file (a FIFO); required: a safetensors file" \
  audit --model resnet18 --size 32 --weights "$tmp/fifo.safetensors"
expect_failure "$tmp: not a regular file (a directory)" audit --model resnet18 --size 32 --weights "$tmp"
# Output paths are checked before the model runs: nothing of the run is printed.
for flag in report dot write-suppressions; do
  set +e
  "$tool" audit --model resnet18 --size 32 --$flag "$tmp/missing/out" >"$tmp/out.txt" 2>"$tmp/err.txt"; rc=$?
  set -e
  [ "$rc" -eq 2 ] || { echo "audit --$flag into a missing directory exited $rc, expected 2"; exit 1; }
  grep -q -- "cannot write the --$flag file to '$tmp/missing/out': its directory does not exist" "$tmp/err.txt" \
    || { echo "unexpected error for --$flag:"; cat "$tmp/err.txt"; exit 1; }
  [ ! -s "$tmp/out.txt" ] || { echo "audit --$flag ran the model before refusing its output:"; cat "$tmp/out.txt"; exit 1; }
done
expect_failure "cannot write the --output file to '$tmp/missing/y.safetensors'" \
  run --model resnet18 --input "$tmp/x.safetensors" --output "$tmp/missing/y.safetensors"
# Refused before the model runs, too: a link to a file in a missing directory (the write
# follows links), an empty file name (an unset variable), and two outputs naming one file
# (only the last one written would be left), also through LAYOUTGUARD_OPTIONS.
ln -s "$tmp/missing/out.json" "$tmp/dangling.json"
refused_at_once() {  # refused_at_once WANT ARGS...: exit 2 with WANT, nothing of the run printed
  local want="$1"; shift
  set +e
  "$tool" "$@" >"$tmp/out.txt" 2>"$tmp/err.txt"; rc=$?
  set -e
  [ "$rc" -eq 2 ] || { echo "expected exit 2 from: $*; got $rc"; cat "$tmp/err.txt"; exit 1; }
  grep -qF -- "$want" "$tmp/err.txt" || { echo "expected '$want' from: $*"; cat "$tmp/err.txt"; exit 1; }
  [ ! -s "$tmp/out.txt" ] || { echo "the model ran before: $*"; cat "$tmp/out.txt"; exit 1; }
}
refused_at_once "cannot write the --report file to '$tmp/dangling.json': its directory does not exist" \
  audit --model resnet18 --size 32 --report "$tmp/dangling.json"
for flag in report dot write-suppressions weights; do
  refused_at_once "--$flag received an empty file name; required: a file name" audit --model resnet18 --size 32 --$flag ""
done
refused_at_once "--output received an empty file name" run --model resnet18 --input "$tmp/x.safetensors" --output ""
refused_at_once "--input received an empty file name" run --model resnet18 --input "" --output "$tmp/y.safetensors"
refused_at_once "--report and --dot name one file" \
  audit --model resnet18 --size 32 --report "$tmp/same.out" --dot "$tmp/./same.out"
refused_at_once "--report and --write-suppressions name one file" \
  audit --model resnet18 --size 32 --report "$tmp/same.out" --write-suppressions "$tmp/same.out"
LAYOUTGUARD_OPTIONS="report=$tmp/same.out" refused_at_once "--write-suppressions and LAYOUTGUARD_OPTIONS report= name one file" \
  audit --model resnet18 --size 32 --write-suppressions "$tmp/same.out"
LAYOUTGUARD_OPTIONS="events=$tmp/same.out" refused_at_once "--output and LAYOUTGUARD_OPTIONS events= name one file" \
  run --model resnet18 --input "$tmp/x.safetensors" --output "$tmp/same.out"
[ ! -e "$tmp/same.out" ] || { echo "a refused run wrote $tmp/same.out"; exit 1; }
# A read-only output file is refused, not replaced by a rename, even in a writable directory.
# Root may write any file, so as root the command runs as the unprivileged user nobody.
mkdir "$tmp/open"; chmod 0777 "$tmp/open"; chmod 0755 "$tmp"
cp "$tmp/y_contiguous.safetensors" "$tmp/open/ro.safetensors"; chmod 0444 "$tmp/open/ro.safetensors"
as_user=()
if [ "$(id -u)" -eq 0 ]; then
  if command -v setpriv >/dev/null; then as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  else echo "read-only output check skipped: running as root without setpriv to drop to an unprivileged user"; fi
fi
if [ "$(id -u)" -ne 0 ] || [ "${#as_user[@]}" -gt 0 ]; then
  set +e
  err="$("${as_user[@]}" "$tool" run --model resnet18 --input "$tmp/x.safetensors" --output "$tmp/open/ro.safetensors" 2>&1 >/dev/null)"
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || { echo "run over a read-only output exited $rc, expected 2: $err"; exit 1; }
  case "$err" in *"ro.safetensors': not writable: Permission denied"*) ;;
    *) echo "unexpected error for a read-only output: $err"; exit 1 ;; esac
  cmp "$tmp/y_contiguous.safetensors" "$tmp/open/ro.safetensors" || { echo "the read-only output was changed"; exit 1; }
  [ "$(ls -A "$tmp/open")" = "ro.safetensors" ] || { echo "files left beside the output: $(ls -A "$tmp/open")"; exit 1; }
fi
version_text="$("$tool" version)"
case "$version_text" in
  *"0 devices"*|*"built without CUDA"*) expect_failure "cuda" audit --model resnet18 --size 32 --device cuda ;;
esac
echo "run ok"
