#!/usr/bin/env python3
"""PyTorch's throughput for the torchvision models that bench/models.cpp measures, in the same
table shape: images (clips) per second, contiguous vs channels_last, eval, inference_mode, same
thread count. On CUDA (--device cuda) every timed call ends with torch.cuda.synchronize() and
cuDNN runs with cudnn.benchmark = True. Run beside `build/bench/models` on the same machine:

    python3 bench/peer/pytorch_models.py [--quick] [--threads 2] [--device cuda --dtype float16]

Where torchvision is not installed (a bare GPU machine), resnet50 comes from
bench/peer/resnet50_plain.py, the same architecture in plain torch.nn.
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

import torch

try:
    import torchvision

    MODELS = {
        "resnet18": (torchvision.models.resnet18, [224, 224]),
        "resnet50": (torchvision.models.resnet50, [224, 224]),
        "resnext50_32x4d": (torchvision.models.resnext50_32x4d, [224, 224]),
        "mobilenet_v2": (torchvision.models.mobilenet_v2, [224, 224]),
        "densenet121": (torchvision.models.densenet121, [224, 224]),
        "r3d_18": (torchvision.models.video.r3d_18, [16, 112, 112]),
    }
    SOURCE = f"torchvision {torchvision.__version__}"
except ImportError:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import resnet50_plain

    MODELS = {"resnet50": (resnet50_plain.resnet50, [224, 224])}
    SOURCE = "no torchvision: resnet50 from bench/peer/resnet50_plain.py"

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def timing(fn, runs, budget_ms):
    """Two warm-up calls, then at least `runs` timed calls (more while under budget_ms, up to
    200): median, min, max (ms) and the number of calls, as bench/timing.h does."""
    fn()
    fn()
    ms = []
    while len(ms) < runs or (sum(ms) < budget_ms and len(ms) < 200):
        t0 = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - t0) * 1000)
    return {"median_ms": statistics.median(ms), "min_ms": min(ms), "max_ms": max(ms), "runs": len(ms)}


def machine_info(threads):
    def first(path, key):
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith(key):
                        return line.split(":" if ":" in line else "=", 1)[1].strip().strip('"')
        except OSError:
            pass
        return "unknown"

    return {"cpu": first("/proc/cpuinfo", "model name"), "logical_cores": os.cpu_count(), "threads": threads,
            "load_average": list(os.getloadavg()), "os": first("/etc/os-release", "PRETTY_NAME"),
            "torch": torch.__version__, "models_from": SOURCE}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="resnet18 (or the first model), batch 1, 64x64, one call")
    ap.add_argument("--json", help="write the results here, as bench/report.h does")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--batches", help="comma-separated (default 1,16; 1 with --quick)")
    ap.add_argument("--size", type=int, default=0, help="S x S input instead of the model's default")
    ap.add_argument("--formats", default="both", choices=["both", "channels_last"])
    ap.add_argument("--runs", type=int, default=0, help="at least this many timed calls per round")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--dtype", default="float32", choices=list(DTYPES))
    ap.add_argument("--profile", action="store_true", help="torch.profiler table of one forward per format")
    a = ap.parse_args()
    a.quick = a.quick or a.smoke
    torch.set_num_threads(a.threads)
    dtype = DTYPES[a.dtype]
    cuda = a.device == "cuda"
    batches = [int(b) for b in (a.batches or ("1" if a.quick else "1,16")).split(",")]
    models = a.models.split(",")
    if a.smoke:
        models = ["resnet18" if "resnet18" in MODELS else next(iter(MODELS))]
        a.size = 64
    doc = {"program": "pytorch_models", "mode": "smoke" if a.smoke else "quick" if a.quick else "full",
           "machine": machine_info(a.threads), "records": []}
    if cuda:
        torch.backends.cudnn.benchmark = True
        where = f"{torch.cuda.get_device_name(0)}, cuDNN {torch.backends.cudnn.version()}, cudnn.benchmark"
        doc["machine"]["gpu"] = torch.cuda.get_device_name(0)
    else:
        where = f"CPU, {a.threads} threads"
    print(f"PyTorch {torch.__version__} model throughput, {where}, {a.dtype}, eval, {SOURCE}")
    print(f"{'model':16s} {'batch':>5s} {'input':14s} {'NCHW img/s':>12s} {'NHWC img/s':>12s} {'NHWC ms':>12s} {'NHWC/NCHW':>8s}")
    rounds, min_runs, budget = (1, 1 if a.smoke else 3, 0) if a.quick else (3, 10, 1000)
    if a.runs:
        min_runs = a.runs
    for name in models:
        ctor, size = MODELS[name]
        if a.size:
            size = size[:-2] + [a.size, a.size]
        cl = torch.channels_last_3d if len(size) == 3 else torch.channels_last
        formats = (torch.contiguous_format, cl) if a.formats == "both" else (cl,)
        for batch in batches:
            torch.manual_seed(0)
            x = torch.randn([batch, 3] + size).to(device=a.device, dtype=dtype)
            # Both formats side by side, timed alternately; each keeps its best round, as
            # bench/models.cpp does.
            runs = {}
            for fmt in formats:
                model = ctor(weights=None).eval().to(device=a.device, dtype=dtype, memory_format=fmt)
                runs[fmt] = (model, x.contiguous(memory_format=fmt))

            def call(fmt):
                model, inp = runs[fmt]
                model(inp)
                if cuda:
                    torch.cuda.synchronize()

            best = {}
            for _ in range(rounds):
                for fmt in runs:
                    with torch.inference_mode():
                        t = timing(lambda: call(fmt), min_runs, budget)
                    if fmt not in best or t["median_ms"] < best[fmt]["median_ms"]:
                        best[fmt] = t
            if a.profile:
                acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
                for fmt in runs:
                    with torch.inference_mode(), torch.profiler.profile(activities=acts) as prof:
                        call(fmt)
                    key = "self_cuda_time_total" if cuda else "self_cpu_time_total"
                    print(f"  profile {name} batch {batch} {fmt}:")
                    print(prof.key_averages().table(sort_by=key, row_limit=14))
            ips = {fmt: batch * 1000 / best[fmt]["median_ms"] for fmt in best}
            cf = ips.get(torch.contiguous_format, float("nan"))
            input_text = str(tuple(size)).replace(" ", "")
            print(f"{name:16s} {batch:5d} {input_text:14s} {cf:12.2f} {ips[cl]:12.2f} "
                  f"{best[cl]['median_ms']:12.1f} {ips[cl] / cf:7.2f}x", flush=True)
            record = {"section": "models", "model": name, "batch": batch, "input": input_text, "device": a.device,
                      "dtype": a.dtype, "channels_last": best[cl], "channels_last_img_per_s": ips[cl],
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
            if torch.contiguous_format in best:
                record["contiguous"] = best[torch.contiguous_format]
                record["contiguous_img_per_s"] = cf
            doc["records"].append(record)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
