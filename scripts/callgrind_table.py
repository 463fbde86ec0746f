"""Prints one row per callgrind dump named by a client request: the dump's instructions divided
by the calls it holds (CALLS, or N for a dump named "... /N"), and the same without glibc's
malloc and free. What malloc executes depends on the heap's state, which differs between the
ways of one run (a chunk found in a bin, or the bins consolidated first): it moves a way's
count by up to 150 instructions per call although no way allocates more than another. Used by
scripts/host-overhead and scripts/torch-instructions.
    python3 scripts/callgrind_table.py DIR CALLS COLUMN     (DIR holds the cg.* files)"""
import glob
import re
import shutil
import subprocess
import sys


def malloc_instructions(path):
    """The instructions executed in glibc's malloc.c (callgrind_annotate's per-function table),
    or None when callgrind_annotate is missing."""
    if not shutil.which("callgrind_annotate"):
        return None
    out = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no", path],
                         capture_output=True, text=True, check=True).stdout
    total = 0
    for line in out.splitlines():
        m = re.match(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*)$", line)
        if m and "/malloc/malloc.c:" in m.group(2):
            total += int(m.group(1).replace(",", ""))
    return total


def main(work, calls, column):
    rows = []
    for path in glob.glob(f"{work}/cg.*"):
        text = open(path).read()
        trigger = re.search(r"^desc: Trigger: Client Request: (.*)$", text, re.M)
        total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        part = re.search(r"\.(\d+)$", path)
        if trigger and total:
            rows.append((int(part.group(1)) if part else 0, trigger.group(1), int(total.group(1)),
                         malloc_instructions(path)))
    if not rows:
        sys.exit("callgrind wrote no named dump")
    print(f"{column:<32} {'instructions per call':>22} {'without malloc':>15}")
    for _, name, total, in_malloc in sorted(rows):
        per = re.match(r"^(.*) /(\d+)$", name)
        name, count = (per.group(1), int(per.group(2))) if per else (name, calls)
        without = f"{(total - in_malloc) / count:>15.0f}" if in_malloc is not None else f"{'-':>15}"
        print(f"{name:<32} {total / count:>22.0f} {without}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
