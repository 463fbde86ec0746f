"""What changed between two tables: the ops and modules whose verdict moved between keeps and
loses, in either direction (a version, a device or a change of one's own against another).

    python3 -m layoutguard_torch.matrix.compare OLD.json NEW.json     # a Markdown table

Rows that are n/a, error or untested on either side say nothing about the format and are left
out. Exit status 0; 2 for a file that cannot be read as a table."""
import sys

from . import PROG
from .render import _cause, read_table
from .verdicts import DIRECTIONS

JUDGED = ("keeps", "loses")


def changes(old, new):
    """(kind, name, direction, old row's direction, new row's direction) for each verdict that
    moved between keeps and loses."""
    before = {(r["kind"], r["name"]): r for r in old["rows"]}
    moved = []
    for r in new["rows"]:
        o = before.get((r["kind"], r["name"]))
        if o is None:
            continue
        for d in DIRECTIONS:
            if o[d]["verdict"] != r[d]["verdict"] and {o[d]["verdict"], r[d]["verdict"]} <= set(JUDGED):
                moved.append((r["kind"], r["name"], d, o[d], r[d]))
    return moved


def markdown(old, new):
    label = lambda t: f"torch {t['meta']['torch']} {t['meta']['device']}"
    lines = [f"| op | direction | {label(old)} | {label(new)} | root cause of the loss |", "|---|---|---|---|---|"]
    for kind, name, d, o, n in changes(old, new):
        cause = _cause(n) or _cause(o)
        lines.append(f"| `{name}`{' (module)' if kind == 'module' else ''} | {d} | {o['verdict']} | {n['verdict']} | {cause} |")
    return "\n".join(lines) + "\n"


def main(argv):
    if len(argv) != 2:
        print(f"usage: python3 -m {PROG}.compare OLD.json NEW.json", file=sys.stderr)
        return 2
    tables = []
    for path in argv:
        try:
            tables.append(read_table(path))
        except ValueError as exc:
            print(f"{PROG}.compare: error: {exc}", file=sys.stderr)
            return 2
    sys.stdout.write(markdown(*tables))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
