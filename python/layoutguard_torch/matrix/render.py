"""The table as JSON (the record `--check` compares with) and as Markdown (for people)."""
import json

from .verdicts import DIRECTIONS, VERDICTS


def read_table(path):
    """A table as write_json wrote it, or ValueError naming the path and what is wrong."""
    try:
        with open(path) as f:
            table = json.load(f)
        if not isinstance(table.get("meta"), dict) or not isinstance(table["meta"].get("torch"), str):
            raise ValueError("no meta.torch")
        if not isinstance(table.get("rows"), list):
            raise ValueError("no list of rows")
        for r in table["rows"]:
            if not (isinstance(r, dict) and isinstance(r.get("kind"), str) and isinstance(r.get("name"), str)
                    and all(isinstance(r.get(d), dict) for d in DIRECTIONS)):
                raise ValueError(f"a row without kind, name and {' and '.join(DIRECTIONS)}: {str(r)[:80]}")
    except (OSError, ValueError, AttributeError) as exc:
        raise ValueError(f"{path}: not a matrix table ({type(exc).__name__}: {exc})") from None
    return table


def write_json(result, path):
    with open(path, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def _cause(d):
    if d["verdict"] != "loses":
        return ""
    cause = f"`{d['root_cause']}`"
    if d.get("op") and d["op"] != d["root_cause"]:
        cause += f" in `{d['op']}`"
    if d.get("autograd_node"):
        cause += f" ({d['autograd_node']})"
    return cause


def _verdict(d):
    n = sum(d["samples"].values())
    v = d["verdict"]
    if n > 1 and d["samples"].get(v, 0) != n:
        return f"{v} ({d['samples'].get(v, 0)}/{n})"
    return v


def _note(r):
    notes = []
    for d in DIRECTIONS:
        text = r[d].get("error") or (r[d].get("note") if r[d]["verdict"] in ("n/a", "untested") else "")
        if text and text not in notes:
            notes.append(text)
    if r.get("cross_check"):
        notes.append("cross-check: " + ", ".join(sorted({c["direction"] + " " + c["kind"] for c in r["cross_check"]})))
    text = "; ".join(notes)
    return text if len(text) <= 110 else text[:107] + "..."


def _table(rows, what):
    lines = [f"| {what} | forward | backward | example sample | root cause (forward) | root cause (backward) | lifted | note |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        example = r["forward"].get("example") or r["backward"].get("example") or ""
        lines.append("| " + " | ".join(_cell(c) for c in (
            f"`{r['name']}`", _verdict(r["forward"]), _verdict(r["backward"]),
            example if len(example) <= 80 else example[:77] + "...",
            _cause(r["forward"]), _cause(r["backward"]), "yes" if r["lifted"] else "", _note(r))) + " |")
    return lines


def _counts(result):
    lines = ["| rows | direction | " + " | ".join(VERDICTS) + " |", "|---|---|" + "---|" * len(VERDICTS)]
    for kind, c in sorted(result["counts"].items()):
        for d in DIRECTIONS:
            lines.append(f"| {kind}s ({c['rows']}, {c['lifted']} lifted) | {d} | "
                         + " | ".join(str(c[d][v]) for v in VERDICTS) + " |")
    return lines


def write_markdown(result, path):
    m = result["meta"]
    lines = [f"# channels_last in PyTorch {m['torch']} on {m['device']}", "",
             f"Made by `python3 -m layoutguard_torch.matrix` ({' '.join(m['argv']) or 'no arguments'}) "
             f"in {m['duration_s']:.0f} s on {m['machine']}, {m['jobs']} worker(s), at most "
             f"{m['samples_per_op']} samples per op, backward {'on' if m['backward'] else 'off'}. "
             "How to read it: docs/torch-support/README.md.", ""]
    lines += _counts(result) + [""]
    ops = [r for r in result["rows"] if r["kind"] == "op"]
    modules = [r for r in result["rows"] if r["kind"] == "module"]
    for title, rows, what in (("Ops (OpInfo)", ops, "op"), ("Modules (ModuleInfo)", modules, "module")):
        tested = [r for r in rows if r["forward"]["verdict"] != "untested"]
        if not rows:
            continue
        lines += [f"## {title}", ""] + _table(tested, what) + [""]
        untested = [r["name"] for r in rows if r["forward"]["verdict"] == "untested"]
        if untested:
            lines += [f"Untested (no 4-D/5-D floating sample, none lifted): {len(untested)}: "
                      + ", ".join(f"`{n}`" for n in untested), ""]
    findings = [r for r in result["rows"] if r.get("cross_check")]
    if findings:
        lines += ["## Cross-check: where the bridge and the strides disagree", "",
                  "`strides_only`: a result reads as not channels_last while the bridge reported nothing; "
                  "`bridge_only`: the bridge reported a loss while every 4-D/5-D result kept the format.", ""]
        for r in findings:
            for c in r["cross_check"]:
                detail = c.get("tensors") or [v["op"] + (" < " + v["root_cause"] if v["root_cause"] else "")
                                              + f" out {v['outputs'][:1]}" for v in c.get("violations", [])]
                lines.append(f"- `{r['name']}` {c['direction']} {c['kind']}: {_cell(c['example'])[:80]}: {_cell(detail)[:300]}")
        lines.append("")
    with open(path, "w") as f:
        f.write("\n".join(lines))


def check(fresh, committed):
    """The differences, as lines, between the fresh rows and the same rows of a committed table:
    each direction's verdict and root cause. Rows the fresh run did not make are not compared."""
    known = {(r["kind"], r["name"]): r for r in committed["rows"]}
    problems = []
    for r in fresh["rows"]:
        old = known.get((r["kind"], r["name"]))
        if old is None:
            problems.append(f"{r['kind']} {r['name']}: not in the committed table")
            continue
        for d in DIRECTIONS:
            for key in ("verdict", "root_cause"):
                a, b = old[d].get(key, ""), r[d].get(key, "")
                if a != b:
                    problems.append(f"{r['kind']} {r['name']}: {d} {key}: committed {a or '-'}, now {b or '-'}")
    return problems
