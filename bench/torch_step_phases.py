"""Where the bridge's time goes in a ResNet-50 training step (a diagnosis, not a benchmark: the
profiler's own cost is in its numbers). Per way of bench/torch_overhead.py -- plain, bridge off,
record without the Python hooks, record -- the host's milliseconds in the forward (until the
loss is enqueued), the backward (until autograd has run every node) and the optimizer step
(GradScaler waits for the device there), medians of interleaved rounds; then, for plain and
record, the ATen ops whose CPU time (torch.profiler, self time) grew most; then what one
recorded step checked and converted.
    PYTHONPATH=build/python python3 bench/torch_step_phases.py [--device cuda] [--batch 64]
"""
import argparse
import random
import statistics
import time

import torch

import layoutguard_torch as lgt
import torch_overhead as bench

WAYS = {
    "plain": bench.Plain,
    "bridge off": lambda: bench.Bridge("off"),
    "record, ops only": lambda: bench.PlainWith(bench.Bridge("record")),
    "record": lambda: bench.Bridge("record"),
}


def make_step(device, batch, size):
    model, opt, x, target, scaler, sync = bench.resnet50_training(batch, device, True, size)
    cuda = device.type == "cuda"

    def step():
        """One AMP step; returns the host's ms in forward, backward, optimizer, and in all (to
        the end of the device's work)."""
        sync()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=torch.float16 if cuda else torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), target)
        t1 = time.perf_counter()
        scaler.scale(loss).backward()
        t2 = time.perf_counter()
        scaler.step(opt)
        scaler.update()
        t3 = time.perf_counter()
        sync()
        t4 = time.perf_counter()
        return [1e3 * d for d in (t1 - t0, t2 - t1, t3 - t2, t4 - t0)]

    return step


def phases(step, rounds, per_round):
    samples = {w: [] for w in WAYS}
    order = list(WAYS)
    shuffle = random.Random(0).shuffle
    for r in range(rounds + 1):
        shuffle(order)
        for w in order:
            with WAYS[w]():
                times = [step() for _ in range(per_round)]
            if r > 0:
                samples[w].extend(times)
    print(f"host ms per step, median of {rounds} x {per_round} steps per way (the ways interleaved)")
    print(f"  {'way':<18} {'forward':>9} {'backward':>9} {'optimizer':>10} {'step':>8}   added to plain's step")
    plain_total = statistics.median(t[3] for t in samples["plain"])
    for w, times in samples.items():
        m = [statistics.median(t[i] for t in times) for i in range(4)]
        print(f"  {w:<18} {m[0]:9.2f} {m[1]:9.2f} {m[2]:10.2f} {m[3]:8.2f}   {m[3] - plain_total:+.2f}")


def op_times(step, way):
    from torch.profiler import ProfilerActivity, profile
    with WAYS[way]():
        step()
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            step()
    return {e.key: (e.count, e.self_cpu_time_total) for e in prof.key_averages()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
    lgt.enable()
    lgt.disable()
    bench.WITH_HOOKS = [owner.__dict__[name] for owner, name in bench.HOOKED]
    lgt.set_options(bench.BASE_OPTIONS)
    step = make_step(device, args.batch, args.size)
    for _ in range(3):
        step()
    phases(step, args.rounds, 3)
    plain, record = op_times(step, "plain"), op_times(step, "record")
    grown = sorted(record, key=lambda k: -(record[k][1] - plain.get(k, (0, 0))[1]))
    print("ops whose self CPU time grew most, plain -> record (profiler, one step, µs):")
    for k in grown[:15]:
        (pc, pt), (rc, rt) = plain.get(k, (0, 0)), record[k]
        print(f"  {k:<40} calls {pc:>5} -> {rc:<5} {pt:>9.0f} -> {rt:<9.0f} {rt - pt:+9.0f}")
    lgt.clear_report()
    with WAYS["record"]():
        step()
    report = lgt.report()
    print(f"one recorded step: {report['checked_calls']} calls checked, {report['violation_count']} violations, "
          f"{sum(c['count'] for c in report['conversions'])} conversions")
    for o in sorted(report["ops"], key=lambda o: -o["calls"])[:10]:
        print(f"  {o['op']:<40} {o['calls']:>6} calls {o['conversions']:>4} conversions {o['violations']:>3} violations")


if __name__ == "__main__":
    main()
