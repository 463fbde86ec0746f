#!/usr/bin/env bash
# examples/find_layout_loss under LAYOUTGUARD=throw: the violation names the NCHW-only op and
# its module, the dump shows the operands, and the any-layout fix keeps channels_last.
set -euo pipefail
out="$(LAYOUTGUARD=throw "$1")"
echo "$out"
grep -q "^guard mode: throw" <<<"$out"
grep -q "^layout lost at op app.box_blur, module head.blur" <<<"$out"
grep -q "^  input 0:  float32 cpu (2,16,32,32):(16384,1,512,16) order=acdb channels_last" <<<"$out"
grep -q "^  output 0: float32 cpu (2,16,32,32):(16384,1024,32,1) order=abcd contiguous" <<<"$out"
grep -q "stack trace (most recent call first):" <<<"$out"
# The recorded flow: the blur's row, and its loss span ending at the next conv.
grep -qE '^!!  *[0-9]+ app\.box_blur +head\.blur +NHWC -> NCHW .* 128\.0 KiB$' <<<"$out"
grep -qE '^  lost at #[0-9]+ app\.box_blur \(head\.blur\) !!: NHWC -> NCHW, converted 128\.0 KiB$' <<<"$out"
grep -qE '^    restored at #[0-9]+ conv2d \(head\.proj\): NCHW -> NHWC$' <<<"$out"
grep -q "^finished; output float32 cpu (2,8,32,32):(8192,1,256,8) order=acdb channels_last" <<<"$out"
echo "find_layout_loss ok"
