#!/usr/bin/env bash
# The README's example is examples/readme.cpp verbatim, and it prints what its comments say.
set -euo pipefail
readme="$1"; source_file="$2"; exe="$3"
diff -u "$source_file" <(awk '/^```cpp$/{on=1; next} /^```$/{on=0} on' "$readme")
expected=$'float32 cpu (10,3,32,32):(3072,1,96,3) order=acdb channels_last\n1\n1\n(16,1,4,1)'
diff -u <(echo "$expected") <("$exe")
echo "README example ok"
