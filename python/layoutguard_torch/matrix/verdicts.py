"""From sample verdicts to one row per op or module.

The rule, per direction: an op **loses** channels_last if any sample loses it (the example and
root cause are the first such sample's); else it **keeps** if any sample keeps it (samples that
were n/a or failed do not overturn the ones that ran); else **error** if any sample failed;
else **n/a**. An op with no 4-D/5-D sample, even after lifting, is **untested**."""
DIRECTIONS = ("forward", "backward")
VERDICTS = ("keeps", "loses", "n/a", "error", "untested")
_PRECEDENCE = ("loses", "keeps", "error", "n/a")


def _direction(samples, direction):
    counts = {}
    for s in samples:
        v = s[direction]["verdict"]
        counts[v] = counts.get(v, 0) + 1
    for v in _PRECEDENCE:
        chosen = next((s for s in samples if s[direction]["verdict"] == v), None)
        if chosen is None:
            continue
        d = chosen[direction]
        row = {"verdict": v, "samples": counts, "example": chosen["example"]}
        if v == "loses":
            row["root_cause"] = d.get("root_cause", "")
            row["op"] = d.get("op", "")
            if d.get("autograd_node"):
                row["autograd_node"] = d["autograd_node"]
        failed = d if d.get("error") else next(
            (s[direction] for s in samples if s[direction].get("error")), None)
        if failed:  # shown even when other samples decided the verdict: a crash must not hide
            row["error"] = failed["error"]
        if d.get("note"):
            row["note"] = d["note"]
        if d.get("outputs"):
            row["outputs"] = d["outputs"]
        return row
    return {"verdict": "untested", "samples": {}}


def row(kind, name, summary, samples, seconds):
    """One table row from a worker's summary and its sample results."""
    out = {"kind": kind, "name": name, "lifted": bool(summary.get("lifted", False)),
           "dtype": summary.get("dtype", ""), "seconds": round(seconds, 2)}
    if summary.get("error") and not samples:
        for d in DIRECTIONS:
            out[d] = {"verdict": "error", "samples": {}, "error": "samples: " + summary["error"]}
        return out
    if not samples:
        for d in DIRECTIONS:
            out[d] = {"verdict": "untested", "samples": {}, "note": summary.get("note", "")}
        return out
    for d in DIRECTIONS:
        out[d] = _direction(samples, d)
    findings = []
    for s in samples:
        for d in DIRECTIONS:
            cc = s[d].get("cross_check")
            if cc:
                findings.append(dict(direction=d, example=s["example"], **cc))
    if findings:
        out["cross_check"] = findings
    return out


def counts(rows):
    """Per kind and direction, the number of rows of each verdict; lifted and cross-checked rows."""
    total = {}
    for r in rows:
        k = total.setdefault(r["kind"], {"rows": 0, "lifted": 0, "cross_check": 0,
                                         **{d: {v: 0 for v in VERDICTS} for d in DIRECTIONS}})
        k["rows"] += 1
        k["lifted"] += r["lifted"]
        k["cross_check"] += bool(r.get("cross_check"))
        for d in DIRECTIONS:
            k[d][r[d]["verdict"]] += 1
    return total
