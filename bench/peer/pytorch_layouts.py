"""Prints the output strides PyTorch gives for channels_last inputs to the ops layoutguard
implements, on CPU and (when present) CUDA, so docs/operators.md's "differences from PyTorch"
column rests on what the installed PyTorch does rather than on 1.13 notes.

Run: python3 bench/peer/pytorch_layouts.py  (prints one line per op and device)."""
import torch
import torch.nn.functional as F

CL, CL3 = torch.channels_last, torch.channels_last_3d


def fmt(t):
    if t.dim() == 4 and t.is_contiguous(memory_format=CL) and not t.is_contiguous():
        return "channels_last"
    if t.dim() == 5 and t.is_contiguous(memory_format=CL3) and not t.is_contiguous():
        return "channels_last_3d"
    return "contiguous" if t.is_contiguous() else "other"


def cases(dev):
    x = torch.randn(2, 3, 6, 6, device=dev).to(memory_format=CL)
    x5 = torch.randn(2, 3, 4, 6, 6, device=dev).to(memory_format=CL3)
    w = torch.randn(4, 3, 3, 3, device=dev)
    yield "conv2d", lambda: F.conv2d(x, w)
    yield "conv3d", lambda: F.conv3d(x5, torch.randn(4, 3, 3, 3, 3, device=dev))
    yield "conv_transpose2d", lambda: F.conv_transpose2d(x, torch.randn(3, 4, 3, 3, device=dev))
    yield "conv_transpose3d", lambda: F.conv_transpose3d(x5, torch.randn(3, 4, 3, 3, 3, device=dev))
    yield "batch_norm", lambda: F.batch_norm(x, torch.zeros(3, device=dev), torch.ones(3, device=dev))
    yield "group_norm", lambda: F.group_norm(x, 3)
    yield "instance_norm", lambda: F.instance_norm(x)
    yield "layer_norm(last dim)", lambda: F.layer_norm(x, [6])
    yield "max_pool2d", lambda: F.max_pool2d(x, 2)
    yield "avg_pool2d", lambda: F.avg_pool2d(x, 2)
    yield "adaptive_avg_pool2d", lambda: F.adaptive_avg_pool2d(x, 1)
    yield "adaptive_max_pool2d", lambda: F.adaptive_max_pool2d(x, 2)
    yield "max_pool3d", lambda: F.max_pool3d(x5, 2)
    yield "avg_pool3d", lambda: F.avg_pool3d(x5, 2)
    yield "adaptive_avg_pool3d", lambda: F.adaptive_avg_pool3d(x5, 1)
    yield "upsample_nearest2d", lambda: F.interpolate(x, scale_factor=2, mode="nearest")
    yield "upsample_bilinear2d", lambda: F.interpolate(x, scale_factor=2, mode="bilinear")
    yield "upsample_bicubic2d", lambda: F.interpolate(x, scale_factor=2, mode="bicubic")
    yield "upsample_nearest3d", lambda: F.interpolate(x5, scale_factor=2, mode="nearest")
    yield "upsample_trilinear3d", lambda: F.interpolate(x5, scale_factor=2, mode="trilinear")
    yield "pad constant", lambda: F.pad(x, (1, 1, 1, 1))
    yield "pad reflect", lambda: F.pad(x, (1, 1, 1, 1), mode="reflect")
    yield "pad replicate", lambda: F.pad(x, (1, 1, 1, 1), mode="replicate")
    yield "pad circular", lambda: F.pad(x, (1, 1, 1, 1), mode="circular")
    yield "pixel_shuffle", lambda: F.pixel_shuffle(torch.randn(2, 8, 3, 3, device=dev).to(memory_format=CL), 2)
    yield "pixel_unshuffle", lambda: F.pixel_unshuffle(x, 2)
    yield "channel_shuffle", lambda: F.channel_shuffle(x, 3)
    yield "softmax(dim=1)", lambda: F.softmax(x, 1)
    yield "log_softmax(dim=1)", lambda: F.log_softmax(x, 1)
    yield "softmax(dim=3)", lambda: F.softmax(x, 3)
    yield "dropout(train)", lambda: F.dropout(x, 0.5, True)
    yield "sum(dim=1, keepdim)", lambda: x.sum(1, keepdim=True)
    yield "mean((2,3), keepdim)", lambda: x.mean((2, 3), keepdim=True)
    yield "amax(dim=1, keepdim)", lambda: x.amax(1, keepdim=True)
    yield "cat(dim=1)", lambda: torch.cat([x, x], 1)
    yield "relu", lambda: F.relu(x)
    yield "gelu", lambda: F.gelu(x)
    yield "where", lambda: torch.where(x > 0, x, torch.zeros_like(x))


def main():
    print("torch", torch.__version__)
    devs = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for dev in devs:
        for half in ([False, True] if dev == "cuda" else [False]):
            for name, fn in cases(dev):
                try:
                    with torch.autocast("cuda", dtype=torch.float16, enabled=half):
                        y = fn()
                    print(f"{dev}{'/fp16-autocast' if half else ''}\t{name}\t{tuple(y.shape)}@{y.stride()}\t{fmt(y)}")
                except Exception as e:  # noqa: BLE001 -- report and go on
                    print(f"{dev}\t{name}\terror: {type(e).__name__}: {str(e)[:80]}")


if __name__ == "__main__":
    main()
