#!/usr/bin/env python3
"""Turns benchmark JSON into the report: scripts/bench runs every program with --json, then

    bench/report.py merge OUT.json LABEL=IN.json...  one results file for the whole run
    bench/report.py render RESULTS.json DOCS_DIR     the generated blocks of DOCS_DIR/performance.md
                                                      and the plots in DOCS_DIR/img/*.png

Each input is one program's output (bench/report.h, bench/peer/pytorch_models.py); its LABEL
says which build or peer produced it (hooks, nohooks, pytorch, scaling, scaling-pytorch, gpu,
gpu-pytorch). The generated blocks sit between
<!-- bench:NAME --> and <!-- /bench:NAME --> in performance.md; text outside them is not
touched. Every figure printed here comes from the results file; nothing is typed in.
"""
import datetime
import json
import math
import os
import re
import statistics
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def merge(out_path, in_paths):
    runs = []
    for arg in in_paths:
        label, _, path = arg.rpartition("=")
        run = load(path)
        run["label"] = label or None
        runs.append(run)
    doc = {"created": datetime.datetime.now().isoformat(timespec="seconds"), "runs": runs}
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=1)


def runs_of(doc, program, label=None):
    return [r for r in doc["runs"] if r["program"] == program and (label is None or r.get("label") == label)]


def records(doc, program, section, label=None):
    out = []
    for r in runs_of(doc, program, label):
        out += [rec for rec in r["records"] if rec.get("section") == section]
    return out


def geomean(values):
    values = [v for v in values if v and v > 0 and not math.isnan(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def fmt(v, digits=2, suffix=""):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return f"{v:.{digits}f}{suffix}"


def spread(t):
    """A timing's median with its min-max, in ms."""
    return f"{t['median_ms']:.1f} ({t['min_ms']:.1f}–{t['max_ms']:.1f})"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


class Report:
    def __init__(self, doc):
        self.doc = doc
        self.blocks = {}
        self.summary = []  # (measurement, ours, peer, ratio, goal, met)

    # --- the machine ---------------------------------------------------------------------
    def machine(self):
        """The machine once (from the first program), then what differs per program: its mode,
        the load average when it started, and peer versions."""
        runs = self.doc["runs"]
        m = runs[0].get("machine", {})
        common = [f"{k.replace('_', ' ')}: {m[k]}" for k in ("cpu", "logical_cores", "omp_threads", "os", "compiler",
                                                              "openblas", "cuda") if k in m]
        lines = [f"Results file created {self.doc['created']}. " + "; ".join(str(c) for c in common) + ".", ""]
        groups = {}  # one line per (program, label): the sweep's many processes share one
        for r in runs:
            groups.setdefault((r["program"], r.get("label")), []).append(r)
        for (program, label), group in groups.items():
            r, mm = group[0], group[0].get("machine", {})
            bits = [f"`{program}`" + (f" ({label})" if label else ""), f"mode {r.get('mode')}"]
            if len(group) > 1:
                bits.append(f"{len(group)} processes")
            loads = [g["machine"]["load_average"][0] for g in group if "load_average" in g.get("machine", {})]
            if loads:
                bits.append("1-minute load " + (f"{loads[0]:.2f}" if len(loads) == 1 else f"{min(loads):.2f}–{max(loads):.2f}"))
            if r.get("onednn"):
                bits.append(f"oneDNN {r['onednn']}")
            for k in ("torch", "models_from", "gpu"):
                if k in mm:
                    bits.append(f"{k.replace('_', ' ')} {mm[k]}")
            if r.get("skipped"):
                bits.append(f"skipped: {r['skipped']}")
            lines.append("- " + ", ".join(bits))
        self.blocks["machine"] = "\n".join(lines)

    def peak(self):
        recs = records(self.doc, "peak_fma", "peak")
        if not recs:
            return None
        best = max(recs, key=lambda r: r["threads"])
        one = min(recs, key=lambda r: r["threads"])
        self.blocks["peak"] = (f"Measured float32 peak ({best['isa']}): {best['gflops']:.1f} GFLOPS on {best['threads']} "
                               f"threads, {one['gflops']:.1f} GFLOPS on 1 thread (`bench/peak_fma`).")
        return best["gflops"]

    # --- 1. hooks ------------------------------------------------------------------------
    def hooks(self):
        on = records(self.doc, "hook_overhead", "hook_overhead", "hooks")
        off = {r["op"]: r for r in records(self.doc, "hook_overhead", "hook_overhead", "nohooks")}
        rows = []
        deltas = []
        for r in on:
            base = off.get(r["op"])
            delta = r["off_ns"] - base["off_ns"] if base else None
            if delta is not None:
                deltas.append(delta)
            rows.append([r["op"], fmt(base["off_ns"] if base else None, 1), fmt(r["off_ns"], 1), fmt(delta, 1),
                         fmt(r["record_ns"], 1), fmt(r["throw_ns"], 1)])
        text = table(["op (ns per call)", "hooks compiled out", "guard off", "off − compiled out", "record", "throw"], rows)
        if deltas:
            worst = max(deltas)
            self.summary.append(["per op: guard off vs hooks compiled out (worst of 3 tiny ops)", fmt(worst, 1, " ns"),
                                 "", "", "≤ +10 ns", met(worst <= 10, worst)])
        checking = [r["record_ns"] - r["off_ns"] for r in on if r.get("record_ns") is not None]
        if checking:
            worst = max(checking)
            self.summary.append(["per op: guard record vs off, no violation (worst of 3 tiny ops)", fmt(worst, 0, " ns"),
                                 "", "", "≤ +300 ns", met(worst <= 300, worst)])
        e2e = records(self.doc, "models", "guard_end_to_end", "hooks")
        nohooks = records(self.doc, "models", "models", "nohooks")
        e2e_rows = []
        for r in e2e:
            # The compiled-out build runs before and after the hooks build; its faster run counts.
            bases = [n["channels_last"]["median_ms"] for n in nohooks if n["model"] == r["model"] and n["batch"] == r["batch"]]
            out_ms = min(bases) if bases else None
            off_ms, rec_ms = r["off"]["median_ms"], r["record"]["median_ms"]
            off_pct = 100 * (off_ms / out_ms - 1) if out_ms else None
            rec_pct = r["record_overhead_pct"]
            e2e_rows.append([f"{r['model']} batch {r['batch']} {r['input']}", fmt(out_ms, 1), fmt(off_ms, 1),
                             fmt(off_pct, 1, " %"), fmt(rec_ms, 1), fmt(rec_pct, 1, " %")])
            self.summary.append([f"{r['model']} forward, guard off vs hooks compiled out (batch {r['batch']})",
                                 fmt(off_ms, 1, " ms"), fmt(out_ms, 1, " ms"), fmt(off_pct, 1, " %"), "≤ +1 %",
                                 met(off_pct is not None and off_pct <= 1.0, off_pct)])
            self.summary.append([f"{r['model']} forward, guard record vs off (batch {r['batch']})",
                                 fmt(rec_ms, 1, " ms"), fmt(off_ms, 1, " ms"), fmt(rec_pct, 1, " %"), "≤ +3 %",
                                 met(rec_pct <= 3.0, rec_pct)])
        if e2e_rows:
            text += "\n\nEnd to end, channels_last (median ms; off and record alternate in one process, the " \
                    "compiled-out build runs in its own):\n\n" + table(
                        ["forward", "hooks compiled out", "guard off", "off vs out", "record", "record vs off"], e2e_rows)
        self.blocks["hooks"] = text

    # --- 2. CPU convolutions ---------------------------------------------------------------
    def cpu_conv(self, peak):
        recs = records(self.doc, "cpu_ops", "cpu_conv")
        if not recs:
            return
        rows, wins, vs_dnnl = [], 0, []
        for r in recs:
            g = r["gflop"]
            nhwc = g / (r["nhwc"]["median_ms"] * 1e-3)
            nchw = g / (r["nchw"]["median_ms"] * 1e-3)
            dn = g / (r["onednn_nhwc"]["median_ms"] * 1e-3) if "onednn_nhwc" in r else None
            wins += nhwc >= nchw
            if dn:
                vs_dnnl.append(nhwc / dn)
            rows.append([r["layer"], r["batch"], fmt(nhwc, 1), spread(r["nhwc"]), fmt(nchw, 1), fmt(dn, 1),
                         fmt(nhwc / nchw, 2, "×"),
                         fmt(nhwc / dn if dn else None, 2, "×"), fmt(100 * nhwc / peak if peak else None, 0, " %")])
        self.blocks["cpu_conv"] = (
            "GFLOPS from median times; oneDNN runs NHWC activations with weights in its "
            "preferred blocked format.\n\n" +
            table(["layer", "batch", "ours NHWC", "ours NHWC ms (min–max)", "ours NCHW", "oneDNN NHWC", "NHWC/NCHW",
                   "NHWC/oneDNN", "% of peak"],
                  rows))
        g = geomean(vs_dnnl)
        self.summary.append(["CPU conv2d NHWC float32, ResNet-50 layers, geomean vs oneDNN", "", "oneDNN NHWC",
                             fmt(g, 2, "×"), "≥ 0.7×", met(g >= 0.7, g)])
        self.summary.append(["CPU conv2d: our NHWC ≥ our NCHW, per layer", f"{wins} of {len(recs)}", "", "", "all",
                             met(wins == len(recs), wins)])
        plot_conv(recs, self.img)

    # --- 3. CPU models -----------------------------------------------------------------------
    def models(self):
        ours = [r for r in records(self.doc, "models", "models", "hooks") if r["device"] == "cpu" and "contiguous" in r]
        peer = [r for r in records(self.doc, "pytorch_models", "models", "pytorch") if r["device"] == "cpu"
                and "contiguous" in r]
        if not ours:
            return
        torch_version = next((r["machine"].get("torch") for r in runs_of(self.doc, "pytorch_models", "pytorch")), "")
        rows = []
        for r in ours:
            p = next((q for q in peer if q["model"] == r["model"] and q["batch"] == r["batch"]), None)
            ratio_self = r["channels_last_img_per_s"] / r["contiguous_img_per_s"]
            vs_peer = r["channels_last_img_per_s"] / p["channels_last_img_per_s"] if p else None
            rows.append([r["model"], r["batch"], fmt(r["contiguous_img_per_s"], 2), fmt(r["channels_last_img_per_s"], 2),
                         spread(r["channels_last"]), fmt(ratio_self, 2, "×"),
                         fmt(p["contiguous_img_per_s"] if p else None, 2),
                         fmt(p["channels_last_img_per_s"] if p else None, 2),
                         spread(p["channels_last"]) if p else "—", fmt(vs_peer, 2, "×")])
            if r["model"] == "resnet50":
                self.summary.append([f"CPU ResNet-50 channels_last, batch {r['batch']} (img/s)",
                                     fmt(r["channels_last_img_per_s"], 2),
                                     f"PyTorch {torch_version}: {fmt(p['channels_last_img_per_s'] if p else None, 2)}",
                                     fmt(vs_peer, 2, "×"), "≥ 1.0×", met(vs_peer is not None and vs_peer >= 1.0, vs_peer)])
            self.summary.append([f"CPU {r['model']} batch {r['batch']}: our channels_last / our contiguous",
                                 fmt(r["channels_last_img_per_s"], 2), fmt(r["contiguous_img_per_s"], 2),
                                 fmt(ratio_self, 2, "×"), "≥ 1.15×", met(ratio_self >= 1.15, ratio_self)])
        peer_text = f"peer: PyTorch {torch_version}, same thread count" if torch_version else "no PyTorch run"
        self.blocks["models"] = (f"Images (clips for r3d_18) per second, eval, float32; {peer_text}.\n\n" +
                                 table(["model", "batch", "ours NCHW img/s", "ours NHWC img/s", "ours NHWC ms (min–max)",
                                        "NHWC/NCHW", "PyTorch NCHW img/s", "PyTorch NHWC img/s",
                                        "PyTorch NHWC ms (min–max)", "ours/PyTorch NHWC"], rows))
        plot_models(ours, peer, self.img)

    # --- 4. scaling --------------------------------------------------------------------------
    def scaling(self):
        ours = [r for r in records(self.doc, "models", "models", "scaling")]
        peer = [r for r in records(self.doc, "pytorch_models", "models", "scaling-pytorch")]
        if not ours:
            return
        rows = []
        for r in sorted(ours, key=lambda r: (r["input"], r["batch"])):
            p = next((q for q in peer if q["input"] == r["input"] and q["batch"] == r["batch"]), None)
            rows.append([r["batch"], r["input"], spread(r["channels_last"]),
                         fmt(r["channels_last"]["median_ms"] / r["batch"], 2), fmt(r["peak_rss_mib"], 0),
                         fmt(p["channels_last"]["median_ms"] if p else None, 1), fmt(p["peak_rss_mib"] if p else None, 0)])
        text = ("ResNet-50 channels_last, one process per point (peak memory is the process's maximum resident set).\n\n" +
                table(["batch", "input", "ours ms (min–max)", "ours ms/img", "ours peak MiB", "PyTorch ms",
                       "PyTorch peak MiB"], rows))
        by_batch = sorted([r for r in ours if r["input"] == "(224,224)"], key=lambda r: r["batch"])
        if len(by_batch) >= 2:
            first, last = by_batch[0], by_batch[-1]
            per_first = first["channels_last"]["median_ms"] / first["batch"]
            per_last = last["channels_last"]["median_ms"] / last["batch"]
            text += (f"\n\nTime per image at batch {last['batch']} is {per_last / per_first:.2f}× that at batch "
                     f"{first['batch']} (1.00× = perfectly linear cost).")
        self.blocks["scaling"] = text
        plot_scaling(ours, peer, self.img)

    # --- 5. bandwidth --------------------------------------------------------------------------
    def bandwidth(self):
        conv = records(self.doc, "bench_layout_conversion", "layout_conversion")
        bw = records(self.doc, "cpu_ops", "cpu_bandwidth")
        rows = [[r["case"], r["shape"], f"{r['median_ms']:.3f} ({r['min_ms']:.3f}–{r['max_ms']:.3f})",
                 fmt(r["gb_per_s"], 2), fmt(r["pct_of_memcpy"], 0, " %")] for r in bw + conv]
        self.blocks["bandwidth"] = "Bytes moved = read + written; % = the same bytes through memcpy.\n\n" + table(
            ["case", "shape", "median ms (min–max)", "GB/s", "% of memcpy"], rows)
        for r in bw:
            if r["case"].startswith(("relu", "add", "NCHW", "NHWC")):
                self.summary.append([f"CPU {r['case']}, {r['shape']}", fmt(r["gb_per_s"], 1, " GB/s"), "memcpy",
                                     fmt(r["pct_of_memcpy"], 0, " %"), "≥ 70 %", met(r["pct_of_memcpy"] >= 70, 0)])

    # --- 6. GPU ----------------------------------------------------------------------------------
    def gpu(self):
        bw = records(self.doc, "cuda_ops", "cuda_bandwidth")
        ours = [r for r in records(self.doc, "models", "models", "gpu") if r["device"] == "cuda"]
        peer = [r for r in records(self.doc, "pytorch_models", "models", "gpu-pytorch") if r["device"] == "cuda"]
        skipped = [r for r in runs_of(self.doc, "cuda_ops") if r.get("skipped")]
        if not bw and not ours:
            why = skipped[0]["skipped"] if skipped else "run without --gpu"
            self.blocks["gpu"] = f"Not measured in this run ({why}). The last GPU measurements, with their machine, are " \
                                 "in the CUDA section below."
            self.summary.append(["GPU: conversions, pointwise, ResNet-50 float16 vs PyTorch", "not measured", "", "", "",
                                 "— (no GPU in this run)"])
            return
        rows = [[r["case"], r["shape"], fmt(r["gb_per_s"], 0), fmt(r["pct_of_memcpy"], 0, " %")] for r in bw]
        text = table(["case", "shape", "GB/s", "% of cudaMemcpy D2D"], rows)
        conv = records(self.doc, "cuda_ops", "cuda_conv")
        gpu_name = next((r["machine"].get("cuda", "") for r in runs_of(self.doc, "cuda_ops")), "")
        peak = dense_fp16_peak_tflops(gpu_name)
        if conv:
            crow = [[r["layer"], r["batch"], fmt(r["nhwc_tflops"], 1), fmt(r["nchw_tflops"], 1),
                     fmt(100 * r["nhwc_tflops"] / peak if peak else None, 0, " %")] for r in conv]
            text += (f"\n\ncuDNN conv2d float16 (TFLOPS; % of the data-sheet dense float16 peak, "
                     f"{fmt(peak, 0)} TFLOPS for this GPU):\n\n" +
                     table(["layer", "batch", "NHWC", "NCHW", "NHWC % of peak"], crow))
        mrows = []
        for r in ours:
            p = next((q for q in peer if q["model"] == r["model"] and q["batch"] == r["batch"]), None)
            vs = r["channels_last_img_per_s"] / p["channels_last_img_per_s"] if p else None
            mrows.append([r["model"], r["batch"], r["dtype"], fmt(r.get("contiguous_img_per_s"), 0),
                          fmt(r["channels_last_img_per_s"], 0), fmt(p["channels_last_img_per_s"] if p else None, 0),
                          fmt(vs, 2, "×")])
            self.summary.append([f"GPU ResNet-50 {r['dtype']} channels_last, batch {r['batch']} (img/s)",
                                 fmt(r["channels_last_img_per_s"], 0), fmt(p["channels_last_img_per_s"] if p else None, 0),
                                 fmt(vs, 2, "×"), "≥ 0.9×", met(vs is not None and vs >= 0.9, vs)])
        if mrows:
            text += "\n\n" + table(["model", "batch", "dtype", "ours NCHW", "ours NHWC", "PyTorch NHWC", "ours/PyTorch"],
                                   mrows)
        self.blocks["gpu"] = text

    def render_summary(self):
        rows = [[m, o, p, r, g, ok] for m, o, p, r, g, ok in self.summary]
        met_n = sum(1 for row in rows if row[5].startswith("yes"))
        missed = sum(1 for row in rows if row[5].startswith("**no"))
        self.blocks["summary"] = (f"{met_n} goals met, {missed} missed, in the run of {self.doc['created']} "
                                  f"(machine below).\n\n" +
                                  table(["measurement", "ours", "peer", "ratio", "goal", "met?"], rows))


def dense_fp16_peak_tflops(device_text):
    """Dense (no sparsity) float16 tensor-core peak from NVIDIA's data sheets, by device name."""
    for name, tflops in (("H100 PCIe", 756.0), ("H100", 989.4), ("H200", 989.4), ("A100", 312.0)):
        if name in device_text:
            return tflops
    return None


def met(ok, _value):
    return "yes" if ok else "**no**"


def grouped_bars(plt, labels, columns, size, rotation, fontsize):
    """One group of bars per label, one bar per (name, values) column, with a legend."""
    fig, ax = plt.subplots(figsize=size)
    width = 0.8 / len(columns)
    for i, (name, vals) in enumerate(columns):
        ax.bar([x + (i - (len(columns) - 1) / 2) * width for x in range(len(labels))], vals, width, label=name)
    ax.set_xticks(range(len(labels)), labels, rotation=rotation, ha="right", fontsize=fontsize)
    ax.legend()
    return fig


def plot_conv(recs, img):
    plt = pyplot()
    if plt is None:
        return
    series = [("ours NHWC", "nhwc"), ("ours NCHW", "nchw"), ("oneDNN NHWC", "onednn_nhwc")]
    columns = [(name, [r["gflop"] / (r[key]["median_ms"] * 1e-3) if key in r else 0 for r in recs])
               for name, key in series]
    fig = grouped_bars(plt, [f"{r['layer']} b{r['batch']}" for r in recs], columns, (11, 4.5), 60, 7)
    fig.axes[0].set_ylabel("GFLOPS")
    fig.axes[0].set_title("CPU conv2d float32, ResNet-50 layers")
    save(fig, img, "cpu_conv.png")


def plot_models(ours, peer, img):
    plt = pyplot()
    if plt is None:
        return
    cols = [("ours NCHW", [r["contiguous_img_per_s"] for r in ours]),
            ("ours NHWC", [r["channels_last_img_per_s"] for r in ours])]
    for key, name in (("contiguous_img_per_s", "PyTorch NCHW"), ("channels_last_img_per_s", "PyTorch NHWC")):
        vals = []
        for r in ours:
            p = next((q for q in peer if q["model"] == r["model"] and q["batch"] == r["batch"]), None)
            vals.append(p[key] if p else 0)
        cols.append((name, vals))
    fig = grouped_bars(plt, [f"{r['model']} b{r['batch']}" for r in ours], cols, (10, 4.5), 45, 8)
    ax = fig.axes[0]
    ax.set_ylabel("images per second")
    ax.set_yscale("log")
    ax.set_title("CPU model throughput, float32")
    save(fig, img, "models_cpu.png")


def plot_scaling(ours, peer, img):
    plt = pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for name, data in (("ours", ours), ("PyTorch", peer)):
        b = sorted([r for r in data if r["input"] == "(224,224)"], key=lambda r: r["batch"])
        axes[0].plot([r["batch"] for r in b], [r["channels_last"]["median_ms"] for r in b], "o-", label=name)
        axes[2].plot([r["batch"] for r in b], [r["peak_rss_mib"] for r in b], "o-", label=name)
        s = sorted([r for r in data if r["batch"] == 1], key=lambda r: int(re.findall(r"\d+", r["input"])[0]))
        px = [int(re.findall(r"\d+", r["input"])[0]) ** 2 / 1e3 for r in s]
        axes[1].plot(px, [r["channels_last"]["median_ms"] for r in s], "o-", label=name)
    axes[0].set(xlabel="batch (224×224)", ylabel="ms per forward", title="time vs batch")
    axes[1].set(xlabel="thousand pixels (batch 1)", ylabel="ms per forward", title="time vs image size")
    axes[2].set(xlabel="batch (224×224)", ylabel="peak resident MiB", title="memory vs batch")
    for ax in axes:
        ax.legend()
    fig.suptitle("ResNet-50 channels_last on the CPU")
    save(fig, img, "scaling_resnet50.png")


def pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        print("report.py: matplotlib missing (Debian: python3-matplotlib); plots skipped", file=sys.stderr)
        return None


def save(fig, img, name):
    os.makedirs(img, exist_ok=True)
    fig.tight_layout()
    # No timestamp in the PNG, so an unchanged plot gives an unchanged file.
    fig.savefig(os.path.join(img, name), dpi=90, metadata={"Software": None})
    import matplotlib.pyplot as plt
    plt.close(fig)


def replace_blocks(text, blocks):
    for name, body in blocks.items():
        pattern = re.compile(rf"(<!-- bench:{name} -->\n).*?(\n<!-- /bench:{name} -->)", re.S)
        if not pattern.search(text):
            raise SystemExit(f"report.py: performance.md has no <!-- bench:{name} --> block")
        text = pattern.sub(lambda m: m.group(1) + body + m.group(2), text)
    return text


def render(results_path, docs):
    doc = load(results_path)
    rep = Report(doc)
    rep.img = os.path.join(docs, "img")
    rep.machine()
    peak = rep.peak()
    rep.hooks()
    rep.cpu_conv(peak)
    rep.models()
    rep.scaling()
    rep.bandwidth()
    rep.gpu()
    rep.render_summary()
    rep.blocks["source"] = f"Generated by `bench/report.py` from `{os.path.relpath(results_path, os.path.dirname(docs))}`."
    path = os.path.join(docs, "performance.md")
    with open(path) as f:
        text = f.read()
    blocks = {k: v for k, v in rep.blocks.items() if f"<!-- bench:{k} -->" in text}
    with open(path, "w") as f:
        f.write(replace_blocks(text, blocks))


def main(argv):
    if len(argv) >= 3 and argv[0] == "merge":
        merge(argv[1], argv[2:])
    elif len(argv) == 3 and argv[0] == "render":
        render(argv[1], argv[2])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
