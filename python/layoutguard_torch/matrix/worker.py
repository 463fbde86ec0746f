"""The worker process: imports torch, the bridge and the OpInfo/ModuleInfo databases once, then
runs one op (or module) per request read from stdin and streams one JSON line per sample to
the supervisor. Anything that kills it kills only the op it was on (see supervisor.py).

Protocol (one JSON object a line): in, {"kind": "op"|"module", "name": NAME}; out, "ready"
once, then per request "start" before each sample (so a crash is charged to the right one),
"sample" after it, and "done"."""
import json
import os
import random
import sys
import warnings

import torch
from torch.utils._pytree import tree_flatten

from . import layouts, samples

FORWARD, BACKWARD = "forward", "backward"


def first_line(exc):
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()[:300]


def verdict(kind, **extra):
    return dict(verdict=kind, **extra)


def _operand(o):
    if not o.get("defined", True):
        return "undefined"
    return (o.get("sizes"), o.get("strides"), o.get("format"))


def _guarded(run):
    """run() for one sample; a failure of the matrix's own bookkeeping (not of the op, which
    run_sample catches) is that sample's error, not the whole op's."""
    try:
        return run()
    except Exception as exc:
        err = verdict("error", error="matrix: " + first_line(exc))
        return {FORWARD: err, BACKWARD: dict(err)}


def _violations(lgt):
    found = []
    for v in lgt.report()["violations"]:
        found.append({"op": v["op"], "root_cause": v.get("root_cause", ""),
                      "autograd_node": v.get("autograd_node", ""),
                      "inputs": [_operand(o) for o in v.get("inputs", [])],
                      "outputs": [_operand(o) for o in v.get("outputs", [])]})
    return found


def _judge(found, lost_by_strides, image_outputs, reason_none, cross_check=True):
    """The bridge's violations decide; the strides only cross-check them."""
    if found:
        first = found[0]
        result = verdict("loses", op=first["op"], root_cause=first["root_cause"] or first["op"],
                         autograd_node=first["autograd_node"],
                         violations=sorted({v["op"] for v in found}))
        if cross_check and image_outputs and not lost_by_strides:
            # Every 4-D/5-D result kept the format: the loss happened on the way (an op inside
            # the sample's function), or the bridge flagged what the strides do not show.
            result["cross_check"] = {"kind": "bridge_only", "violations": found[:3]}
    elif not image_outputs:
        return verdict("n/a", note=reason_none)
    else:
        result = verdict("keeps")
    if lost_by_strides and not found:
        result["cross_check"] = {"kind": "strides_only", "tensors": lost_by_strides[:3]}
    return result


def _lost(result, cl_inputs, alias_sources, reduced_below=None):
    """The 4-D/5-D tensors of `result` that read as neither channels_last nor ambiguous while an
    input of the same rank was channels_last. Results sharing storage with an input are views or
    in-place results (their layout is the caller's choice) and expanded gradients (stride 0)
    have no format: neither is judged."""
    lost = []
    ranks = {t.dim() for t in cl_inputs}
    for t in result:
        if not isinstance(t, torch.Tensor) or t.dim() not in ranks or t.layout != torch.strided:
            continue
        if layouts.has_zero_stride(t) or any(layouts.shares_storage(t, a) for a in alias_sources):
            continue
        if layouts.classify(t) == layouts.OTHER:
            seen = layouts.describe(t)
            # A result with fewer elements than what it was computed from (a keepdim reduction;
            # in backward the gradient of a broadcast operand, summed down) is exempt in the bridge.
            below = reduced_below if reduced_below is not None else max(
                a.numel() for a in cl_inputs if a.dim() == t.dim())
            if t.numel() < below:
                seen["hint"] = "reduced: fewer elements than its source; the bridge exempts reductions"
            lost.append(seen)
    return lost


def run_sample(lgt, call, values, grad_wanted, params=()):
    """Forward and backward verdicts of one call on channels_last operands."""
    flat_in = samples.tensors_in(values)
    cl_inputs = [t for t in flat_in + list(params) if layouts.classify(t) == layouts.CHANNELS_LAST]
    if not cl_inputs:
        note = "no channels_last operand (ambiguous shape: C = 1 or H = W = 1)"
        return {FORWARD: verdict("n/a", note=note), BACKWARD: verdict("n/a", note=note)}
    torch.manual_seed(0)
    lgt.clear_report()
    try:
        with lgt.guard("record"):
            out = call()
    except Exception as exc:  # the op's own error: recorded, the sweep goes on
        msg = first_line(exc)
        return {FORWARD: verdict("error", error=msg), BACKWARD: verdict("error", error="forward failed: " + msg)}
    outs = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]
    image_outs = [t for t in outs if t.dim() in (4, 5)]
    fwd = _judge(_violations(lgt), _lost(outs, cl_inputs, flat_in + list(params)), image_outs,
                 "no 4-D/5-D output")
    fwd["outputs"] = [layouts.describe(t) for t in image_outs[:2]]
    bwd = _backward(lgt, outs, flat_in, params, cl_inputs, grad_wanted, fwd["verdict"] != "loses")
    return {FORWARD: fwd, BACKWARD: bwd}


def _backward(lgt, outs, flat_in, params, cl_inputs, grad_wanted, cross_check):
    if not grad_wanted:
        return verdict("n/a", note="no autograd for this op and dtype")
    diff_outs = [t for t in outs if layouts.is_floating(t) and t.requires_grad]
    wrt = [t for t in flat_in if layouts.is_floating(t) and t.requires_grad and t.is_leaf]
    wrt += [p for p in params if p.requires_grad]
    if not diff_outs or not wrt:
        return verdict("n/a", note="no differentiable output or input")
    # ones_like keeps each output's format, so the backward sees what the forward produced.
    grad_outs = [torch.ones_like(t) for t in diff_outs]
    lgt.clear_report()
    try:
        with lgt.guard("record"):
            grads = torch.autograd.grad(diff_outs, wrt, grad_outs, allow_unused=True)
    except Exception as exc:
        return verdict("error", error=first_line(exc))
    cl_ids = {id(t) for t in cl_inputs}
    cl_grads = [g for t, g in zip(wrt, grads) if id(t) in cl_ids and g is not None]
    # After a forward loss the incoming gradients are not channels_last either, and a backward
    # that keeps their format hands back what it was given: the strides then say nothing about
    # the backward ops, so they are compared only when the forward kept the format.
    widest = max([t.numel() for t in diff_outs] + [0])
    lost = _lost(cl_grads, cl_inputs, [], widest) if cross_check else []
    result = _judge(_violations(lgt), lost, cl_grads,
                    "no gradient reaches a channels_last operand", cross_check)
    result["outputs"] = [layouts.describe(g) for g in cl_grads[:2]]
    return result


def _seed():
    """Same samples every run: OpInfo draws its tensors from torch's generator and some scalar
    arguments (a loss's margin, say) from Python's."""
    torch.manual_seed(0)
    random.seed(0)


def _convert(values):
    return samples.map_values(values, layouts.to_channels_last)


def run_op(lgt, op, device, cap, want_backward, emit):
    dtype = samples.pick_dtype(op.supported_dtypes(device))
    if dtype is None:
        return {"note": "no floating dtype"}
    grad_ok = bool(want_backward and op.supports_autograd
                   and dtype in op.supported_backward_dtypes(device))
    _seed()
    found, lifted = samples.op_samples(op, device, dtype, grad_ok, cap)
    if not found:
        return {"note": "no 4-D/5-D floating sample"}
    for i, s in enumerate(found):
        desc = samples.describe(s)
        emit({"event": "start", "index": i, "example": desc})
        values = _convert(s.values())
        n_args = len(s.args)
        call = lambda v=values: op(v[0], *v[1:1 + n_args], **dict(zip(s.kwargs, v[1 + n_args:])))
        result = _guarded(lambda: run_sample(lgt, call, values, grad_ok))
        emit(dict(event="sample", index=i, example=desc, lifted=s.lifted, **result))
    return {"lifted": lifted, "dtype": str(dtype).replace("torch.", "")}


def _channels_last_params(module):
    for p in module.parameters():
        fmt = layouts.memory_format_for(p) if not isinstance(p, torch.nn.parameter.UninitializedParameter) else None
        if fmt is not None:
            with torch.no_grad():
                p.data = p.data.clone(memory_format=fmt)
    return [p for p in module.parameters()
            if not isinstance(p, torch.nn.parameter.UninitializedParameter)]


def run_module(lgt, info, device, cap, want_backward, emit):
    dtype = samples.pick_dtype(info.dtypes)
    if dtype is None:
        return {"note": "no floating dtype"}
    _seed()
    found = samples.module_samples(info, device, dtype, want_backward, cap)
    if not found:
        return {"note": "no 4-D/5-D floating sample"}
    for i, (ctor, s) in enumerate(found):
        desc = samples.describe(s)
        emit({"event": "start", "index": i, "example": desc})
        try:
            torch.manual_seed(0)
            module = info.module_cls(*ctor.args, **ctor.kwargs).to(device=device, dtype=dtype)
            module.train()
            params = _channels_last_params(module)
        except Exception as exc:
            err = "constructor: " + first_line(exc)
            emit(dict(event="sample", index=i, example=desc, lifted=False,
                      forward=verdict("error", error=err), backward=verdict("error", error=err)))
            continue
        values = _convert(list(s.args) + list(s.kwargs.values()))
        n_args = len(s.args)
        call = lambda v=values: module(*v[:n_args], **dict(zip(s.kwargs, v[n_args:])))
        result = _guarded(lambda: run_sample(lgt, call, values, want_backward, params if want_backward else ()))
        emit(dict(event="sample", index=i, example=desc, lifted=False, **result))
    return {"lifted": False, "dtype": str(dtype).replace("torch.", "")}


def main():
    # The protocol owns the real stdout; whatever an op prints goes to stderr.
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    warnings.simplefilter("ignore")

    def emit(obj):
        proto.write(json.dumps(obj, default=str) + "\n")
        proto.flush()

    torch.set_num_threads(1)
    import layoutguard_torch as lgt
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.common_modules import module_db
    device = os.environ.get("LG_MATRIX_DEVICE", "cpu")
    cap = int(os.environ.get("LG_MATRIX_CAP", "8"))
    want_backward = os.environ.get("LG_MATRIX_BACKWARD", "1") == "1"
    index = {("op", samples.full_name(o)): o for o in op_db}
    index.update({("module", m.name): m for m in module_db})
    emit({"event": "ready"})
    for line in sys.stdin:
        req = json.loads(line)
        info = index[(req["kind"], req["name"])]
        runner = run_op if req["kind"] == "op" else run_module
        try:
            summary = runner(lgt, info, device, cap, want_backward, emit)
        except Exception as exc:  # sample generation itself failed
            summary = {"error": first_line(exc)}
        emit(dict(event="done", **summary))


if __name__ == "__main__":
    main()
