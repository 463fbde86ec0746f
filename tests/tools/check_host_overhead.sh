#!/usr/bin/env bash
# scripts/host-overhead works end to end without a GPU: bench/host_stub's libcudart.so.13 stands
# in for the runtime (every symbol the library and the bench take from libcudart is there, and
# the probe kernel "runs"), host_instructions runs under callgrind, and the table has one row
# per op with a positive count. The counts themselves are not judged.
#   check_host_overhead.sh SOURCE_ROOT BUILD_ROOT
set -euo pipefail
out="$("$1/scripts/host-overhead" "$2" 20)"
echo "$out"
grep -q "layoutguard host stub (kernels do not run).*probe kernel ran" <<<"$out" || { echo "the stub was not the runtime"; exit 1; }
# Each row: the op, its instructions per call, and the same without malloc (or "-").
rows=$(grep -cE "\(c(uda|pu)\) +[1-9][0-9]* +([1-9][0-9]*|-)$" <<<"$out" || true)
[ "$rows" -eq 11 ] || { echo "expected 11 op rows with a positive count, got $rows"; exit 1; }
echo "host-overhead: ok"
