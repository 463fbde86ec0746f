"""Prints one row per callgrind dump named by a client request: the dump's instructions divided
by the calls it holds (CALLS, or N for a dump named "... /N"). Used by scripts/host-overhead and
scripts/torch-instructions.
    python3 scripts/callgrind_table.py DIR CALLS COLUMN     (DIR holds the cg.* files)"""
import glob
import re
import sys


def main(work, calls, column):
    rows = []
    for path in glob.glob(f"{work}/cg.*"):
        text = open(path).read()
        trigger = re.search(r"^desc: Trigger: Client Request: (.*)$", text, re.M)
        total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        part = re.search(r"\.(\d+)$", path)
        if trigger and total:
            rows.append((int(part.group(1)) if part else 0, trigger.group(1), int(total.group(1))))
    if not rows:
        sys.exit("callgrind wrote no named dump")
    print(f"{column:<32} {'instructions per call':>22}")
    for _, name, total in sorted(rows):
        per = re.match(r"^(.*) /(\d+)$", name)
        name, count = (per.group(1), int(per.group(2))) if per else (name, calls)
        print(f"{name:<32} {total / count:>22.0f}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
