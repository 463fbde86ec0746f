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
grep -q "^finished; output float32 cpu (2,8,32,32):(8192,1,256,8) order=acdb channels_last" <<<"$out"
echo "find_layout_loss ok"
