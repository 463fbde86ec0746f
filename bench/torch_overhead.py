"""What layoutguard_torch costs a PyTorch program, against its peers in the same run:

  1. ns per op added to a small op called from Python (torch.add on 1x8x4x4, NCHW and
     channels_last): plain PyTorch, the bridge with the guard off, recording, and the same
     rule written as a Python TorchDispatchMode (how a user would write it today);
  2. a ResNet-50 training step (forward, backward, SGD step; channels_last): plain, bridge
     off, record, throw, record with nested=0, and the TorchDispatchMode checker. CPU at batch 8 by default;
     `--device cuda --amp --batch 64` is the mixed-precision GPU step (autocast float16,
     GradScaler), timed from the first launch to the end of the GPU's work.

Medians over repeats. Prints a table; --json PATH also writes the numbers.
    PYTHONPATH=build/python python3 bench/torch_overhead.py [--quick] [--json PATH]
        [--device cuda] [--amp] [--batch N] [--steps N] [--no-ops] [--op-counts N]
"""
import argparse
import json
import os
import platform
import random
import statistics
import sys
import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import layoutguard_torch as lgt


class LayoutCheckMode(TorchDispatchMode):  # entered inside Plain (see CONFIGS)
    """layoutguard's rule in pure Python: a channels_last 4-D input whose same-rank output is
    not channels_last is a loss (recorded, as record mode does)."""

    def __init__(self):
        super().__init__()
        self.losses = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = [a for a in args if isinstance(a, torch.Tensor) and a.dim() == 4]
        if any(t.is_contiguous(memory_format=torch.channels_last) and not t.is_contiguous() for t in inputs):
            outs = out if isinstance(out, (tuple, list)) else (out,)
            for o in outs:
                if isinstance(o, torch.Tensor) and o.dim() == 4 and not o.is_contiguous(
                        memory_format=torch.channels_last):
                    self.losses.append(str(func))
        return out


# The entry points the bridge's Python side replaces (module paths, backward origins and the
# gradient contract): plain PyTorch and the TorchDispatchMode peer run with the originals, so
# that the bridge's ways pay for its Python hooks and the peers do not.
HOOKED = (torch.nn.Module, "__call__"), (torch.autograd, "backward"), (torch.autograd, "grad")
ORIGINALS = [owner.__dict__[name] for owner, name in HOOKED]
WITH_HOOKS = None  # the same entries after the bridge installed its hooks (main())


class Plain:
    def __enter__(self):
        for (owner, name), value in zip(HOOKED, ORIGINALS):
            setattr(owner, name, value)
        return self

    def __exit__(self, *exc):
        for (owner, name), value in zip(HOOKED, WITH_HOOKS):
            setattr(owner, name, value)
        return False


class Bridge:
    def __init__(self, mode, options=""):
        self.guard = lgt.guard(mode)
        self.options = options

    def __enter__(self):
        if self.options:
            lgt.set_options(BASE_OPTIONS + ":" + self.options)
        self.guard.__enter__()
        return self

    def __exit__(self, *exc):
        self.guard.__exit__(*exc)
        if self.options:
            lgt.set_options(BASE_OPTIONS)
        return False


BASE_OPTIONS = "summary=0"
OPS_ONLY = "record, ops only"  # record without the Python hooks (--split)
# Debugging settings, run only when --ways names them: each compared call run again on
# contiguous copies; the Python line of each forward call that makes autograd nodes kept; the
# gradient-format contract's hooks on the nodes of channels-last outputs.
OPT_IN = {"record shadow=1": "shadow=1", "record forward_calls=1": "forward_calls=1",
          "record grad_format=1": "grad_format=1"}
CONFIGS = {
    "plain": Plain,
    "bridge off": lambda: Bridge("off"),
    "record": lambda: Bridge("record"),
    "throw": lambda: Bridge("throw"),
    "record nested=0": lambda: Bridge("record", "nested=0"),
    "TorchDispatchMode": lambda: PlainWith(LayoutCheckMode()),
}


class PlainWith(Plain):
    """Plain PyTorch (no bridge hooks) with another context inside."""

    def __init__(self, inner):
        self.inner = inner

    def __enter__(self):
        super().__enter__()
        self.inner.__enter__()
        return self

    def __exit__(self, *exc):
        self.inner.__exit__(*exc)
        return super().__exit__(*exc)


def interleaved(configs, rounds, run_once):
    """run_once(config) for each config, the configs taking turns round by round in an order
    shuffled each round (a fixed seed), so that neither a slow spell of the machine nor what
    the way before left behind (garbage, allocator state) falls on one way more than another;
    the first round warms up. Returns the samples per config, one per round."""
    samples = {c: [] for c in configs}
    order = list(configs)
    shuffle = random.Random(0).shuffle
    for r in range(rounds + 1):
        shuffle(order)
        for c in order:
            with CONFIGS[c]():
                value = run_once()
            if r > 0:
                samples[c].append(value)
    return samples


def medians(samples):
    return {c: statistics.median(v) for c, v in samples.items()}


def round_ratios(samples, config):
    """The config's time over plain's, round by round."""
    return [v / p for v, p in zip(samples[config], samples["plain"])]


def ratios_to_plain(samples):
    """Per config, the median over rounds of its time over plain's in the same round: a
    machine that drifts between rounds (a VM whose neighbours come and go) moves both."""
    return {c: statistics.median(round_ratios(samples, c)) for c in samples}


def ratio_quartiles(samples):
    """Per config, the first and third quartiles of its per-round ratios to plain: how far one
    round's ratio can be trusted (the median of N rounds is good to about IQR / sqrt(N))."""
    out = {}
    for c in samples:
        r = round_ratios(samples, c)
        q = statistics.quantiles(r, n=4) if len(r) > 1 else [r[0], r[0], r[0]]
        out[c] = (q[0], q[2])
    return out


def column(way):
    """The width of a way's column in the per-op table."""
    return max(19, len(way) + 2)


def ns_per_add(channels_last, calls, repeats, grad=False):
    a = torch.randn(1, 8, 4, 4)
    if channels_last:
        a = a.contiguous(memory_format=torch.channels_last)
    b = a.clone()
    a.requires_grad_(grad)  # then each add makes an autograd node

    def run_once():
        start = time.perf_counter_ns()
        for _ in range(calls):
            torch.add(a, b)
        return (time.perf_counter_ns() - start) / calls

    return medians(interleaved(CONFIGS, repeats, run_once))


def resnet50_training(batch, device, amp, size, foreach=None, optimizer="sgd"):
    """A channels_last ResNet-50 with SGD (or Adam), its input and target, the GradScaler under
    `amp` (else None) and the function that waits for the device. `foreach`: the optimizer's
    choice (None: its default, the multi-tensor kernels on CUDA only)."""
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet50().to(device=device, memory_format=torch.channels_last).train()
    make = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}[optimizer]
    opt = make(model.parameters(), lr=0.01, foreach=foreach)
    x = torch.randn(batch, 3, size, size, device=device).contiguous(memory_format=torch.channels_last)
    target = torch.randint(0, 1000, (batch,), device=device)
    # torch.amp.GradScaler is 2.3's name; 1.13 has only the CUDA one.
    scaler_type = getattr(torch.amp, "GradScaler", None)
    scaler = None if not amp else scaler_type(device.type) if scaler_type else torch.cuda.amp.GradScaler()
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    return model, opt, x, target, scaler, sync


def resnet50_step(batch, device, amp, size, per_sample=1, foreach=None, optimizer="sgd"):
    """ResNet-50 training steps in channels_last, as a function that runs `per_sample` of them
    back to back (one wait for the device at each end) and returns their mean wall ms and the
    mean CPU ms the process spent on them. On a GPU whose step is bound by the host, CPU time
    is the host's work without the waits and the preemptions that make wall time noisy (the
    waits for the device spin, so it never falls below wall time there)."""
    model, opt, x, target, scaler, sync = resnet50_training(batch, device, amp, size, foreach, optimizer)
    cuda = device.type == "cuda"

    def run_once(steps=per_sample):
        sync()
        start, start_cpu = time.perf_counter(), time.process_time()
        for _ in range(steps):
            opt.zero_grad(set_to_none=True)
            with torch.autocast(device.type, dtype=torch.float16 if cuda else torch.bfloat16, enabled=amp):
                loss = torch.nn.functional.cross_entropy(model(x), target)
            if scaler:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
        sync()
        return (time.perf_counter() - start) * 1e3 / steps, (time.process_time() - start_cpu) * 1e3 / steps

    return run_once


def resnet50_step_ms(steps, batch, device, amp, op_counts=0, size=224, per_sample=1, optimizer="sgd"):
    """The samples per way (medians and ratios are the caller's): wall ms per step, and the
    process's CPU ms per step (all its threads: the caller's, autograd's device thread)."""
    run_once = resnet50_step(batch, device, amp, size, per_sample, optimizer=optimizer)
    for _ in range(3 if device.type == "cuda" else 0):  # cuDNN's autotuning and the allocator's first pass
        run_once()
    if op_counts:
        print_op_counts(lambda: run_once(1), op_counts)
    samples = interleaved(CONFIGS, steps, run_once)
    wall = {c: [w for w, _ in v] for c, v in samples.items()}
    cpu = {c: [t for _, t in v] for c, v in samples.items()}
    return wall, cpu


def marked_steps(batch, size, amp, optimizer="sgd"):
    """For scripts/torch-step-instructions: per way, a first step (one-time costs) and then one
    between two calls of getppid(), where callgrind (--dump-before=getppid) starts a new dump:
    the second dump of each way holds its step, exactly, whatever the machine's noise. With
    `amp`, the step has the CUDA AMP step's calls on the CPU: bfloat16 autocast, the GradScaler
    where this torch has one for the CPU, and the optimizer's multi-tensor kernels (CUDA's
    default)."""
    print(f"torch {torch.__version__}", flush=True)
    run_once = resnet50_step(batch, torch.device("cpu"), amp, size, foreach=True if amp else None, optimizer=optimizer)
    run_once()
    for c in CONFIGS:
        with CONFIGS[c]():
            run_once()
            os.getppid()
            run_once()
            os.getppid()
        print(f"marked step: {c}", flush=True)


def print_op_counts(run_once, top):
    """The ATen calls of one plain step, nested ones included (what the bridge's key sees when
    nested=1), by op: the profiler counts every RecordFunction range."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run_once()
    counts = sorted(((e.count, e.key) for e in prof.key_averages() if e.key.startswith("aten::")), reverse=True)
    print(f"ATen calls in one plain step: {sum(c for c, _ in counts)} in {len(counts)} ops; the {top} most called:")
    for c, name in counts[:top]:
        print(f"  {c:6d}  {name}")


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls and steps (a smoke run)")
    parser.add_argument("--json", help="also write the numbers to this file")
    parser.add_argument("--no-model", action="store_true", help="skip the ResNet-50 training step")
    parser.add_argument("--no-ops", action="store_true", help="skip the ns-per-op table")
    parser.add_argument("--device", default="cpu", help="where the ResNet-50 step runs (cpu, cuda)")
    parser.add_argument("--amp", action="store_true", help="mixed precision: autocast and GradScaler")
    parser.add_argument("--batch", type=int, help="ResNet-50 batch (default 8, 2 with --quick)")
    parser.add_argument("--steps", type=int, help="timed samples per way (default 9, 2 with --quick)")
    parser.add_argument("--per-sample", type=int, default=1, metavar="K",
                        help="steps run back to back per sample, reported as their mean (default 1)")
    parser.add_argument("--size", type=int, default=224, help="image side (default 224)")
    parser.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd",
                        help="the ResNet-50 step's optimizer (default sgd)")
    parser.add_argument("--marked-steps", action="store_true",
                        help="CPU training steps between marks for callgrind (scripts/torch-step-instructions)")
    parser.add_argument("--split", action="store_true",
                        help="also record without the Python hooks (module paths, gradient contract): "
                             "what the op hooks cost alone")
    parser.add_argument("--op-counts", type=int, default=0, metavar="N",
                        help="first print the N most called ATen ops of one plain step (profiler)")
    parser.add_argument("--grad", action="store_true",
                        help="the per-op table's first input requires grad: each add makes an autograd node "
                             "(what forward_calls=1 pays for)")
    parser.add_argument("--ways", metavar="A,B,...",
                        help=f"run only these ways, plain among them (of: {'; '.join([*CONFIGS, OPS_ONLY, *OPT_IN])})")
    args = parser.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
    if os.environ.get("LAYOUTGUARD", "off") not in ("", "off", "0"):
        sys.exit("torch_overhead.py: run without LAYOUTGUARD (the benchmark switches the bridge itself)")
    global WITH_HOOKS
    lgt.enable()
    lgt.disable()  # installs the Python hooks once, outside every timing
    WITH_HOOKS = [owner.__dict__[name] for owner, name in HOOKED]
    lgt.set_options(BASE_OPTIONS)
    torch.set_num_threads(1)
    if args.split or (args.ways and OPS_ONLY in args.ways):
        CONFIGS[OPS_ONLY] = lambda: PlainWith(Bridge("record"))
    for way, options in OPT_IN.items():
        if args.ways and way in args.ways:
            CONFIGS[way] = lambda options=options: Bridge("record", options)
    if args.ways:
        # Way names hold commas ("record, ops only"): a name is matched as a whole, in order.
        wanted, known = [], list(dict.fromkeys([*CONFIGS, OPS_ONLY, *OPT_IN]))
        rest = args.ways
        while rest:
            name = next((k for k in sorted(known, key=len, reverse=True) if rest == k or rest.startswith(k + ",")), None)
            if name is None:
                parser.error(f"--ways: unknown way at '{rest}' (the ways: {'; '.join(known)})")
            wanted.append(name)
            rest = rest[len(name) + 1:]
        if "plain" not in wanted:
            parser.error("--ways: plain must be among the ways (every figure is against it)")
        for c in list(CONFIGS):
            if c not in wanted:
                del CONFIGS[c]
    if args.marked_steps:
        marked_steps(args.batch or 1, args.size, args.amp, args.optimizer)
        return
    calls, repeats = (2000, 5) if args.quick else (20000, 11)
    result = {"machine": cpu_name(), "torch": torch.__version__, "threads_op": 1, "ns_per_add": {}, "resnet50": {}}
    if device.type == "cuda":
        result["gpu"] = torch.cuda.get_device_name(device)
    print(f"{result['machine']}{', ' + result['gpu'] if 'gpu' in result else ''}, torch {torch.__version__}")
    if not args.no_ops:
        print(f"ns per torch.add(1x8x4x4{', one input requiring grad' if args.grad else ''}) from Python, 1 thread, "
              f"median of {repeats} x {calls} calls (the ways interleaved)")
        print(f"  {'input':<14}" + "".join(f"{c:>{column(c)}}" for c in CONFIGS))
    for cl in () if args.no_ops else (False, True):
        row = ns_per_add(cl, calls, repeats, args.grad)
        result["ns_per_add"]["channels_last" if cl else "NCHW"] = row
        print(f"  {'channels_last' if cl else 'NCHW':<14}" + "".join(f"{row[c]:>{column(c)}.0f}" for c in CONFIGS))
        print(f"  {'added':<14}" + "".join(f"{row[c] - row['plain']:>{column(c)}.0f}" for c in CONFIGS))
    if not args.no_model:
        torch.set_num_threads(os.cpu_count() or 1)
        steps, batch = (2, 2) if args.quick else (9, 8)
        steps, batch = args.steps or steps, args.batch or batch
        where = result.get("gpu", f"CPU ({torch.get_num_threads()} threads)")
        amp = f", AMP {'float16' if device.type == 'cuda' else 'bfloat16'}" if args.amp else ""
        print(f"ResNet-50 training step, {where}, batch {batch}, {args.size}x{args.size}, channels_last{amp}, "
              f"{'Adam' if args.optimizer == 'adam' else 'SGD'}, "
              f"{steps} {'steps' if args.per_sample == 1 else f'samples of {args.per_sample} steps'} per way "
              "(the ways interleaved)")
        samples, cpu = resnet50_step_ms(steps, batch, device, args.amp, args.op_counts, args.size, args.per_sample,
                                        args.optimizer)
        row, ratio = medians(samples), ratios_to_plain(samples)
        cpu_row, cpu_ratio = medians(cpu), ratios_to_plain(cpu)
        iqr, cpu_iqr = ratio_quartiles(samples), ratio_quartiles(cpu)
        result["resnet50"] = {"batch": batch, "size": args.size, "threads": torch.get_num_threads(),
                              "optimizer": args.optimizer,
                              "device": str(device), "amp": args.amp, "steps_per_sample": args.per_sample, "ms": row,
                              "ratio_to_plain": ratio, "samples_ms": samples, "cpu_ms": cpu_row,
                              "cpu_ratio_to_plain": cpu_ratio, "cpu_samples_ms": cpu}
        print("  against plain: the median of the rounds' ratios [their interquartile range]")
        print(f"  {'way':<18} {'wall':>9}    {'against plain':<27} {'process CPU':>11}    against plain")
        pct = lambda r: 100 * (r - 1)  # noqa: E731
        for c in CONFIGS:
            print(f"  {c:<18} {row[c]:9.1f} ms {pct(ratio[c]):+6.1f} % [{pct(iqr[c][0]):+6.1f}, {pct(iqr[c][1]):+6.1f}]"
                  f"  {cpu_row[c]:9.1f} ms {pct(cpu_ratio[c]):+6.1f} % [{pct(cpu_iqr[c][0]):+6.1f}, "
                  f"{pct(cpu_iqr[c][1]):+6.1f}]")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
