#!/usr/bin/env python3
"""Writes tests/nn/data/torchvision_reference.json: for each torchvision model layoutguard
mirrors, its state-dict keys, shapes and dtypes, and its float32 output for deterministic
weights and input. tests/nn/test_models.cpp rebuilds the same weights and input with the same
integer hash (tests/nn/deterministic_weights.h) and compares. Needs torch and torchvision:

    python3 -m venv /tmp/tv && /tmp/tv/bin/pip install torch torchvision numpy
    /tmp/tv/bin/python tests/nn/make_torchvision_reference.py
"""
import json
import math
import pathlib

import numpy as np
import torch
import torchvision

MASK = 0xFFFFFFFF


def mix(x):
    """A 32-bit integer hash (the same one as deterministic_weights.h), on uint64 arrays."""
    x = x & MASK
    x ^= x >> 16
    x = (x * 0x7FEB352D) & MASK
    x ^= x >> 15
    x = (x * 0x846CA68B) & MASK
    x ^= x >> 16
    return x


def uniform(stream, n):
    """n values in [0, 1) on a 2^-24 grid: exact in float32 and float64 alike."""
    i = np.arange(n, dtype=np.uint64)
    seed = int(mix(np.uint64(stream + 1)))
    h = mix((i * np.uint64(0x9E3779B1)) ^ np.uint64(seed))
    return (h >> np.uint64(8)).astype(np.float64) / 16777216.0


def value(name, shape, stream):
    n = int(np.prod(shape)) if shape else 1
    u = uniform(stream, n)
    leaf = name.rsplit(".", 1)[-1]
    if leaf == "num_batches_tracked":
        return np.zeros(shape, dtype=np.int64)
    if leaf == "running_mean":
        v = (u - 0.5) * 0.2
    elif leaf == "running_var":
        v = 0.5 + u
    elif leaf == "weight" and len(shape) == 1:  # norm scale
        v = 0.5 + u
    elif leaf == "bias":
        v = (u - 0.5) * 0.2
    else:  # conv / linear weight: unit-variance preserving
        fan_in = n // shape[0]
        v = (u * 2 - 1) * math.sqrt(3.0 / fan_in)
    return v.astype(np.float32).reshape(shape)


MODELS = {
    "resnet18": (torchvision.models.resnet18, [1, 3, 64, 64]),
    "resnet50": (torchvision.models.resnet50, [1, 3, 64, 64]),
    "resnext50_32x4d": (torchvision.models.resnext50_32x4d, [1, 3, 64, 64]),
    "mobilenet_v2": (torchvision.models.mobilenet_v2, [1, 3, 64, 64]),
    "densenet121": (torchvision.models.densenet121, [1, 3, 64, 64]),
    "r3d_18": (torchvision.models.video.r3d_18, [1, 3, 8, 32, 32]),
}
INPUT_STREAM = 999999


def main():
    torch.set_num_threads(2)
    out = {"torch": torch.__version__, "torchvision": torchvision.__version__, "models": {}}
    for name, (ctor, input_size) in MODELS.items():
        model = ctor(weights=None).eval()
        keys = sorted(model.state_dict().keys())
        sd = {}
        for k, key in enumerate(keys):
            t = model.state_dict()[key]
            sd[key] = torch.from_numpy(value(key, list(t.shape), k)).to(t.dtype)
        model.load_state_dict(sd, strict=True)
        x = torch.from_numpy((uniform(INPUT_STREAM, int(np.prod(input_size))) * 2 - 1)
                             .astype(np.float32).reshape(input_size))
        with torch.no_grad():
            y = model(x)
        out["models"][name] = {
            "input": input_size,
            "keys": [[k, list(sd[k].shape), str(sd[k].dtype).replace("torch.", "")] for k in keys],
            "output": [float(v) for v in y.flatten()],
        }
        print(name, len(keys), "tensors, output", list(y.shape), "max", float(y.abs().max()))
    path = pathlib.Path(__file__).parent / "data" / "torchvision_reference.json"
    path.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    print("wrote", path, path.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
