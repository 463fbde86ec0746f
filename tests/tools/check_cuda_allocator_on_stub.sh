#!/usr/bin/env bash
# The CUDA allocator's host cache without a GPU: the CUDA suite's allocator cases that launch no
# kernel run on bench/host_stub's libcudart.so.13 (device memory is host memory there), with
# the cache on, with LAYOUTGUARD_CUDA_CACHE=0, and with a bad value, which must fail naming it.
#   check_cuda_allocator_on_stub.sh LG_CUDA_TESTS STUB_LIBRARY
set -euo pipefail
tests="$1"
stub_dir=$(mktemp -d)
trap 'rm -rf "$stub_dir"' EXIT
cp "$2" "$stub_dir/libcudart.so.13"
cases='cuda allocator: a freed*,cuda allocator: out of memory*,cuda allocator: the 256*'
run() { LD_LIBRARY_PATH="$stub_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tests" -tc="$cases" "$@"; }
out=$(run 2>&1) || { echo "$out"; echo "FAIL: the allocator cases with the cache on"; exit 1; }
grep -q "layoutguard host stub" <<<"$out" || { echo "$out"; echo "FAIL: the stub was not the runtime"; exit 1; }
grep -Eq "test cases: +3 \| +3 passed" <<<"$out" || { echo "$out"; echo "FAIL: expected 3 cases to run and pass"; exit 1; }
out=$(LAYOUTGUARD_CUDA_CACHE=0 run 2>&1) || { echo "$out"; echo "FAIL: the allocator cases with the cache off"; exit 1; }
grep -q "the cache is off" <<<"$out" || { echo "$out"; echo "FAIL: LAYOUTGUARD_CUDA_CACHE=0 did not turn the cache off"; exit 1; }
grep -Eq "test cases: +3 \| +3 passed" <<<"$out" || { echo "$out"; echo "FAIL: expected 3 cases to run and pass with the cache off"; exit 1; }
if out=$(LAYOUTGUARD_CUDA_CACHE=maybe run 2>&1); then
  echo "$out"; echo "FAIL: LAYOUTGUARD_CUDA_CACHE=maybe was accepted"; exit 1
fi
grep -q "LAYOUTGUARD_CUDA_CACHE='maybe' is not a switch" <<<"$out" || { echo "$out"; echo "FAIL: no error naming the bad value"; exit 1; }
echo "cuda allocator on the host stub: ok"
