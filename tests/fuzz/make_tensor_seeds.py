#!/usr/bin/env python3
"""Writes the seed inputs of the tensor-API fuzzer (tests/fuzz/fuzz_tensor_api.cpp) into
tests/fuzz/corpus_tensor/: sizes, strides and offsets at INT64_MAX, INT64_MAX/2, 2^32 and 2^62
through every creator and the views, plus a few ordinary programs for the fuzzer to mutate.
Run it after changing the input format there; the encoding below mirrors Program::value()."""
import pathlib

MAX = 2**63 - 1
# Program::value()'s table, in order (the last tag, 0xEF, means 8 raw bytes).
EDGE = [MAX, MAX // 2, 2**32, 2**62, -2**63, 2**31, 2**32 + 1, MAX - 1, 2**40, 3 * 2**61, -2**32,
        2**61, 2**16, 65535, -1]

# Creators and opcodes, as numbered in create() and step().
EMPTY, EMPTY_STRIDED, ZEROS, FULL, FROM_BLOB, AS_STRIDED, EMPTY_LIKE = range(7)
(VIEW, RESHAPE, FLATTEN, PERMUTE, TRANSPOSE, SQUEEZE, SQUEEZE_DIM, UNSQUEEZE, SELECT, NARROW, SLICE,
 EXPAND, AS_STRIDED_OP, CONTIGUOUS, TO_FORMAT, TO_DTYPE, CLONE, ZEROS_LIKE, ASK_STRIDES, ASK_RAW) = range(20)
FLOAT32, INT64, BOOL = 0, 4, 7
CONTIG, CL, CL3D, PRESERVE = range(4)


def value(v):
    if -16 <= v < 0xE0 - 16:
        return bytes([v + 16])
    if v in EDGE:
        return bytes([0xE0 + EDGE.index(v)])
    return bytes([0xEF]) + (v % 2**64).to_bytes(8, "little")


def values(*vs):
    return b"".join(value(v) for v in vs)


def ints(*bs):
    return bytes(bs)


SEEDS = {
    # as_strided over a 256-element storage with each extreme as a stride, and as an offset.
    "as_strided_extreme_strides": ints(AS_STRIDED, FLOAT32, 4) + values(2, 3, 4, 5) + values(MAX, MAX // 2, 2**32, 2**62) + value(0),
    "as_strided_extreme_offset": ints(AS_STRIDED, INT64, 1) + values(2) + values(1) + value(MAX),
    "as_strided_extreme_sizes": ints(AS_STRIDED, BOOL, 2) + values(2**62, 0) + values(2**32, 1) + value(MAX // 2),
    "empty_strided_2p62": ints(EMPTY_STRIDED, FLOAT32, 2) + values(2, 2**32) + values(2**62, 1),
    "empty_strided_max": ints(EMPTY_STRIDED, INT64, 3) + values(MAX, 1, 1) + values(1, MAX // 2, 2**32),
    "empty_channels_last_max": ints(EMPTY, FLOAT32, 4) + values(MAX, 2, 1, 1) + ints(CL),
    "empty_channels_last_3d_2p32": ints(EMPTY, FLOAT32, 5) + values(1, 2**32, 2**32, 1, 1) + ints(CL3D),
    "zeros_2p32_squared": ints(ZEROS, FLOAT32, 2) + values(2**32, 2**32),
    "full_max_half": ints(FULL, INT64, 2) + values(MAX // 2, 2),
    "from_blob_extreme_strides": ints(FROM_BLOB, FLOAT32, 3) + values(2, 2, 2) + values(2**62, MAX, 2**32),
    # A small channels_last tensor through every view with extreme arguments.
    "views_with_extremes": ints(EMPTY, FLOAT32, 4) + values(2, 3, 4, 5) + ints(CL)
    + ints(UNSQUEEZE) + value(MAX)
    + ints(SELECT) + values(0, 2**62)
    + ints(NARROW) + values(1, MAX // 2, 2**32)
    + ints(SLICE) + values(2, MAX // 2, MAX, 2**32)
    + ints(FLATTEN) + values(-2**63, MAX)
    + ints(TRANSPOSE) + values(2**32, 0)
    + ints(EXPAND, 5) + values(2**62, 2, 3, 4, 5)
    + ints(VIEW, 2) + values(MAX, -1)
    + ints(AS_STRIDED_OP, 4) + values(2, 3, 4, 5) + values(2**62, 1, 1, 1) + value(0),
    # Ordinary programs: format conversions and dtype casts that succeed.
    "formats_round_trip": ints(EMPTY_LIKE, FLOAT32, 0) + ints(CL)
    + ints(CONTIGUOUS, CONTIG) + ints(TO_FORMAT, CL, 1) + ints(TO_DTYPE, INT64, 0, PRESERVE)
    + ints(PERMUTE) + values(0, 2, 3, 1) + ints(CLONE, PRESERVE) + ints(ZEROS_LIKE, CL)
    + ints(RESHAPE, 2) + values(4, -1) + ints(SQUEEZE),
    "expand_then_contiguous": ints(ZEROS, FLOAT32, 4) + values(1, 3, 1, 1)
    + ints(EXPAND, 4) + values(2, 3, 4, 5) + ints(CONTIGUOUS, CL) + ints(SQUEEZE_DIM) + value(0),
    # The predicates and generators on raw arrays with extreme entries.
    "layout_questions_extreme": ints(ZEROS, FLOAT32, 4) + values(2, 3, 4, 5)
    + ints(ASK_STRIDES) + values(MAX, 2**62, 2**32, MAX // 2) + ints(CL)
    + ints(ASK_RAW, 4) + values(2**32, 2**32, 2, 2) + ints(1) + values(2**62, 1, MAX, 0) + ints(CL)
    + ints(ASK_RAW, 5) + values(MAX, 2, 1, 1, 1) + ints(0) + values(1, 1, 1, 1, 1, 1) + ints(CL3D),
}


def main():
    out = pathlib.Path(__file__).resolve().parent / "corpus_tensor"
    out.mkdir(exist_ok=True)
    # Files named found_* are inputs the fuzzer once failed on, kept as they were found.
    for name, data in SEEDS.items():
        (out / name).write_bytes(data)
    print(f"wrote {len(SEEDS)} seeds to {out}")


if __name__ == "__main__":
    main()
