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
import os
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


def median_ms(fn, runs, budget_ms):
    fn()
    fn()
    ms = []
    while len(ms) < runs or (sum(ms) < budget_ms and len(ms) < 200):
        t0 = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - t0) * 1000)
    return statistics.median(ms)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--batches", default="1,16")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--dtype", default="float32", choices=list(DTYPES))
    ap.add_argument("--profile", action="store_true", help="torch.profiler table of one forward per format")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    dtype = DTYPES[a.dtype]
    cuda = a.device == "cuda"
    batches = [1] if a.quick else [int(b) for b in a.batches.split(",")]
    if cuda:
        torch.backends.cudnn.benchmark = True
        where = f"{torch.cuda.get_device_name(0)}, cuDNN {torch.backends.cudnn.version()}, cudnn.benchmark"
    else:
        where = f"CPU, {a.threads} threads"
    print(f"PyTorch {torch.__version__} model throughput, {where}, {a.dtype}, eval, {SOURCE}")
    print(f"{'model':16s} {'batch':>5s} {'input':14s} {'NCHW img/s':>12s} {'NHWC img/s':>12s} {'NHWC ms':>12s} {'NHWC/NCHW':>8s}")
    for name in a.models.split(","):
        ctor, size = MODELS[name]
        cl = torch.channels_last_3d if len(size) == 3 else torch.channels_last
        for batch in batches:
            torch.manual_seed(0)
            x = torch.randn([batch, 3] + size).to(device=a.device, dtype=dtype)
            # Both formats side by side, timed alternately for 3 rounds; each keeps its best
            # round, as bench/models.cpp does.
            runs = {}
            for fmt in (torch.contiguous_format, cl):
                model = ctor(weights=None).eval().to(device=a.device, dtype=dtype, memory_format=fmt)
                runs[fmt] = (model, x.contiguous(memory_format=fmt))

            def call(fmt):
                model, inp = runs[fmt]
                model(inp)
                if cuda:
                    torch.cuda.synchronize()

            best = {}
            for _ in range(1 if a.quick else 3):
                for fmt in runs:
                    with torch.inference_mode():
                        ms = median_ms(lambda: call(fmt), 1 if a.quick else 10, 0 if a.quick else 1000)
                    best[fmt] = min(ms, best.get(fmt, ms))
            ips = [(batch * 1000 / best[fmt], best[fmt]) for fmt in runs]
            if a.profile:
                acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
                for fmt in runs:
                    with torch.inference_mode(), torch.profiler.profile(activities=acts) as prof:
                        call(fmt)
                    key = "self_cuda_time_total" if cuda else "self_cpu_time_total"
                    print(f"  profile {name} batch {batch} {fmt}:")
                    print(prof.key_averages().table(sort_by=key, row_limit=14))
            print(f"{name:16s} {batch:5d} {str(tuple(size)).replace(' ', ''):14s} {ips[0][0]:12.2f} {ips[1][0]:12.2f} "
                  f"{ips[1][1]:12.1f} {ips[1][0] / ips[0][0]:7.2f}x", flush=True)


if __name__ == "__main__":
    main()
