#!/usr/bin/env python3
"""PyTorch's CPU throughput for the torchvision models that bench/models.cpp measures, in the
same table shape: images (clips) per second, contiguous vs channels_last, eval, float32,
torch.no_grad(), same thread count. Run beside `build/bench/models` on the same machine:

    python3 bench/peer/pytorch_models.py [--quick] [--threads 2]
"""
import argparse
import statistics
import time

import torch
import torchvision

MODELS = {
    "resnet18": (torchvision.models.resnet18, [224, 224]),
    "resnet50": (torchvision.models.resnet50, [224, 224]),
    "resnext50_32x4d": (torchvision.models.resnext50_32x4d, [224, 224]),
    "mobilenet_v2": (torchvision.models.mobilenet_v2, [224, 224]),
    "densenet121": (torchvision.models.densenet121, [224, 224]),
    "r3d_18": (torchvision.models.video.r3d_18, [16, 112, 112]),
}


def median_ms(fn, runs, budget_ms):
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
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    batches = [1] if a.quick else [int(b) for b in a.batches.split(",")]
    print(f"PyTorch {torch.__version__} model throughput, CPU, float32, eval, {a.threads} threads")
    print(f"{'model':16s} {'batch':>5s} {'input':14s} {'NCHW img/s':>12s} {'NHWC img/s':>12s} {'NHWC ms':>12s} {'NHWC/NCHW':>8s}")
    for name in a.models.split(","):
        ctor, size = MODELS[name]
        cl = torch.channels_last_3d if len(size) == 3 else torch.channels_last
        for batch in batches:
            torch.manual_seed(0)
            x = torch.randn([batch, 3] + size)
            ips = []
            for fmt in (torch.contiguous_format, cl):
                model = ctor(weights=None).eval().to(memory_format=fmt)
                inp = x.contiguous(memory_format=fmt)
                with torch.no_grad():
                    ms = median_ms(lambda: model(inp), 1 if a.quick else 3, 0 if a.quick else 3000)
                ips.append((batch * 1000 / ms, ms))
            print(f"{name:16s} {batch:5d} {str(tuple(size)).replace(' ', ''):14s} {ips[0][0]:12.2f} {ips[1][0]:12.2f} "
                  f"{ips[1][1]:12.1f} {ips[1][0] / ips[0][0]:7.2f}x", flush=True)


if __name__ == "__main__":
    main()
