"""Prints one row per callgrind dump named by a client request: the dump's instructions divided
by the calls it holds (CALLS, or N for a dump named "... /N"), and the same without glibc's
malloc and free. What malloc executes depends on the heap's state, which differs between the
ways of one run (a chunk found in a bin, or the bins consolidated first): it moves a way's
count by up to 150 instructions per call although no way allocates more than another. Used by
scripts/host-overhead and scripts/torch-instructions.

With OBJECT (a substring of the objects' paths) and dumps made with --dump-instr=yes, a third
column counts the 64-byte lines of those objects' code that the dump ran, each once: for a dump
of one op called again and again, the code one call runs; for a training step, what the step's
calls run between them. A host-bound step fetches about that much code again at every call
(docs/performance.md, "Caches"), so it ranks two versions of a hot path by their code size as
the instruction counts rank them by work, without a cache simulation's dependence on where the
linker put each function.
    python3 scripts/callgrind_table.py DIR CALLS COLUMN [OBJECT]     (DIR holds the cg.* files)"""
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


def code_lines(text, marker):
    """The distinct 64-byte lines of code run in the objects whose path holds `marker`, or None
    when the dump has no instruction addresses. Reads callgrind's format: `ob=`/`fn=` name the
    object of the cost lines below them (`(id) name` once, `(id)` after), a cost line starts
    with its position (an address, `+n`/`-n` from the last one, or `*` for the same), and a
    `calls=` line's own position is its callee's, which does not move the last one."""
    if not re.search(r"^positions:.*\binstr\b", text, re.M):
        return None
    names, lines = {}, set()
    counted, last = False, 0
    for line in text.splitlines():
        if line.startswith("ob="):
            m = re.match(r"\((\d+)\)(?: (.*))?", line[3:])
            if m and m.group(2) is not None:
                names[m.group(1)] = m.group(2)
            counted = marker in (names.get(m.group(1), "") if m else line[3:])
        elif line.startswith("cob="):
            m = re.match(r"\((\d+)\) (.*)", line[4:])
            if m:
                names[m.group(1)] = m.group(2)
        elif line.startswith("calls="):
            continue
        elif line and (line[0].isdigit() or line[0] in "+-*"):
            position = line.split()[0]
            if position == "*":
                pass
            elif position[0] == "+":
                last += int(position[1:], 0)
            elif position[0] == "-":
                last -= int(position[1:], 0)
            else:
                last = int(position, 0)
            if counted:
                lines.add(last >> 6)
    return len(lines)


def main(work, calls, column, marker=None):
    rows = []
    for path in glob.glob(f"{work}/cg.*"):
        text = open(path).read()
        trigger = re.search(r"^desc: Trigger: Client Request: (.*)$", text, re.M)
        total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        part = re.search(r"\.(\d+)$", path)
        if trigger and total:
            rows.append((int(part.group(1)) if part else 0, trigger.group(1), int(total.group(1)),
                         malloc_instructions(path), code_lines(text, marker) if marker else None))
    if not rows:
        sys.exit("callgrind wrote no named dump")
    lines_column = f" {'lines of ' + marker + ' code':>26}" if marker else ""
    print(f"{column:<32} {'instructions per call':>22} {'without malloc':>15}{lines_column}")
    for _, name, total, in_malloc, lines in sorted(rows):
        per = re.match(r"^(.*) /(\d+)$", name)
        name, count = (per.group(1), int(per.group(2))) if per else (name, calls)
        without = f"{(total - in_malloc) / count:>15.0f}" if in_malloc is not None else f"{'-':>15}"
        shown = f" {lines if lines is not None else '-':>26}" if marker else ""
        print(f"{name:<32} {total / count:>22.0f} {without}{shown}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
