"""The samples the matrix runs: an OpInfo's or ModuleInfo's own 4-D/5-D floating samples, and,
for ops whose meaning does not depend on the rank, lower-rank samples lifted to 4-D."""
import fnmatch

import torch

from .layouts import is_floating

# Besides UnaryUfuncInfo and BinaryUfuncInfo: OpInfos that compute each output element from the
# same element of their (broadcast) inputs, so that prepending dims changes nothing but the
# shape. Checked by name against torch 1.13's op_db; a name that is gone is simply unused.
ELEMENTWISE = {
    "addcdiv", "addcmul", "clamp", "clone", "lerp", "logaddexp", "logaddexp2", "masked_fill",
    "where", "zero_", "ones_like", "zeros_like", "full_like", "empty_like", "rand_like",
    "randn_like", "randint_like", "resolve_conj", "resolve_neg", "bernoulli", "to",
    "max.binary", "min.binary", "nn.functional.gelu", "nn.functional.hardswish",
    "nn.functional.leaky_relu", "nn.functional.dropout", "nn.functional.relu",
    "nn.functional.elu", "nn.functional.celu", "nn.functional.selu", "nn.functional.silu",
    "nn.functional.mish", "nn.functional.hardsigmoid", "nn.functional.logsigmoid",
    "nn.functional.softsign", "nn.functional.tanhshrink", "nn.functional.threshold",
    "nn.functional.softshrink", "nn.functional.hardshrink", "nn.functional.hardtanh",
    "nn.functional.relu6", "nn.functional.softplus", "nn.functional.rrelu",
    # Losses: elementwise before their reduction (mean by default, 'none' in some samples);
    # their weights broadcast from the right, which prepending dims keeps.
    "nn.functional.l1_loss", "nn.functional.mse_loss", "nn.functional.smooth_l1_loss",
    "nn.functional.huber_loss", "nn.functional.soft_margin_loss", "nn.functional.kl_div",
    "nn.functional.binary_cross_entropy", "nn.functional.binary_cross_entropy_with_logits",
    "nn.functional.poisson_nll_loss", "nn.functional.margin_ranking_loss",
    "nn.functional.hinge_embedding_loss", "nn.functional.gaussian_nll_loss",
    "nn.functional.pairwise_distance",
}

# Ops over the trailing dims whose other operands describe those trailing dims (layer_norm's
# normalized_shape, weight and bias): only the input gets the prepended dims.
INPUT_ONLY_OPS = {"nn.functional.layer_norm", "native_layer_norm"}

# OpInfos whose samples name dims of the input (a positional first argument or `dim`): lifted
# by prepending dims and shifting each non-negative dim by as many. ReductionOpInfos too.
DIM_OPS = {
    "softmax", "log_softmax", "nn.functional.softmin", "cumsum", "cumprod", "cummax", "cummin",
    "logcumsumexp", "logsumexp", "sort", "argsort", "std_mean", "var_mean", "median",
    "nanmedian", "mode", "max.reduction_with_dim", "min.reduction_with_dim",
    "max.reduction_no_dim", "min.reduction_no_dim", "nn.functional.glu",
    "nn.functional.normalize", "masked.softmax", "masked.log_softmax", "masked.softmin",
    "masked.cumsum", "masked.cumprod", "masked.normalize", "masked.logaddexp",
    "softmax.with_dtype", "log_softmax.dtype", "nn.functional.softmin.with_dtype", "flip",
    "nn.functional.cosine_similarity",
}

# OpInfos over (N, C, *) whose N and C must stay where they are: lifted by appending spatial
# dims to the input (and to any operand of its rank), per-channel operands left as they are.
SPATIAL_OPS = {
    "nn.functional.group_norm", "nn.functional.local_response_norm",
    "nn.functional.instance_norm", "nn.functional.batch_norm",
    "nn.functional.batch_norm.without_cudnn", "native_batch_norm",
}

LIFT_RANK = 4
APPEND = (3, 4)
# Prepended sizes, taken from the right: a 1-D sample of size n becomes (2, 3, 4, n).
PREPEND = (2, 3, 4)


def full_name(info):
    variant = getattr(info, "variant_test_name", "")
    return f"{info.name}.{variant}" if variant else info.name


def lift_kind(op):
    """'elementwise', 'dim', 'spatial', 'input' or None: how a lower-rank sample of `op` may be lifted."""
    cls = type(op).__name__
    name = full_name(op)
    if cls in ("UnaryUfuncInfo", "BinaryUfuncInfo") or name in ELEMENTWISE:
        return "elementwise"
    if cls == "ReductionOpInfo" or name in DIM_OPS:
        return "dim"
    if name in SPATIAL_OPS:
        return "spatial"
    if name in INPUT_ONLY_OPS:
        return "input"
    return None


def pick_dtype(dtypes):
    """float32 where the op has it (the format question does not depend on the precision),
    else the first floating dtype it supports; None if it has none."""
    floating = [d for d in dtypes if d.is_floating_point]
    if torch.float32 in floating:
        return torch.float32
    for d in (torch.float64, torch.bfloat16, torch.float16):
        if d in floating:
            return d
    return None


def tensors_in(sample_args):
    """The tensors of (input, args, kwargs), one level into lists and tuples."""
    found = []
    for value in sample_args:
        if isinstance(value, torch.Tensor):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(v for v in value if isinstance(v, torch.Tensor))
    return found


def sample_values(sample):
    return [sample.input, *sample.args, *sample.kwargs.values()]


def has_image_tensor(values):
    return any(is_floating(t) and t.dim() in (4, 5) for t in tensors_in(values))


def informative(values):
    """Whether a 4-D/5-D floating operand can be channels_last without being ambiguous: not
    empty, C > 1 and more than one spatial element."""
    for t in tensors_in(values):
        if is_floating(t) and t.dim() in (4, 5) and t.numel() > 0:
            spatial = t.numel() // (t.size(0) * t.size(1))
            if t.size(1) > 1 and spatial > 1:
                return True
    return False


def map_values(values, fn):
    out = []
    for v in values:
        if isinstance(v, torch.Tensor):
            out.append(fn(v))
        elif isinstance(v, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in v):
            out.append(type(v)(fn(x) if isinstance(x, torch.Tensor) else x for x in v))
        else:
            out.append(v)
    return out


def _resized(t, sizes):
    """`t`'s values repeated into `sizes`: the lifted operand keeps the sample's value domain
    (positive for log, within [-1, 1] for asin, valid indices, booleans)."""
    if list(t.size()) == list(sizes):
        return t
    with torch.no_grad():
        flat = t.detach().reshape(-1)
        n = 1
        for s in sizes:
            n *= s
        index = torch.arange(n, device=t.device) % flat.numel()
        lifted = flat[index].reshape(sizes).contiguous()
    return lifted.requires_grad_(t.requires_grad)


def _shift_dims(value, by):
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value + by if value >= 0 else value
    if isinstance(value, (list, tuple)) and value and all(isinstance(d, int) and not isinstance(d, bool) for d in value):
        return type(value)(d + by if d >= 0 else d for d in value)
    return value


def lift(sample, kind):
    """A copy of `sample` with its highest-rank tensors made 4-D, or None where that is not
    safe: a 0-D or empty operand, or (dim ops) an input that is not the highest-rank operand."""
    values = sample_values(sample)
    tensors = tensors_in(values)
    if not tensors or not isinstance(sample.input, torch.Tensor):
        return None
    rank = max(t.dim() for t in tensors)
    if rank < 1 or rank >= LIFT_RANK or any(t.numel() == 0 for t in tensors):
        return None
    if not any(is_floating(t) and t.dim() == rank for t in tensors):
        return None
    if kind in ("dim", "spatial") and sample.input.dim() != rank:
        return None
    if kind == "input":
        if sample.input.dim() < 1 or sample.input.dim() >= LIFT_RANK:
            return None
        sizes = list(PREPEND[len(PREPEND) - (LIFT_RANK - sample.input.dim()):]) + list(sample.input.size())
        return Sample(_resized(sample.input, sizes), sample.args, sample.kwargs, lifted=True)
    if kind == "spatial":
        if rank < 2:
            return None
        append = list(APPEND[:LIFT_RANK - rank])
        new_values = map_values(values, lambda t: _resized(t, list(t.size()) + append) if t.dim() == rank else t)
        return Sample(new_values[0], new_values[1:1 + len(sample.args)],
                      dict(zip(sample.kwargs.keys(), new_values[1 + len(sample.args):])), lifted=True)
    prepend = PREPEND[len(PREPEND) - (LIFT_RANK - rank):]
    # A position (counted from the right) that is 1 in every operand broadcasts nowhere; it is
    # widened everywhere, or every lifted tensor would be ambiguous (C = 1 or H = W = 1).
    widen = {p for p in range(1, rank + 1)
             if all(t.size(-p) == 1 for t in tensors if t.dim() >= p)}

    def lifted_sizes(t):
        sizes = [3 if p in widen else t.size(-p) for p in range(t.dim(), 0, -1)]
        return list(prepend) + sizes if t.dim() == rank else sizes

    new_values = map_values(values, lambda t: _resized(t, lifted_sizes(t)))
    new_input, new_args = new_values[0], list(new_values[1:1 + len(sample.args)])
    new_kwargs = dict(zip(sample.kwargs.keys(), new_values[1 + len(sample.args):]))
    if kind == "dim":
        shift = LIFT_RANK - rank
        if new_args:
            new_args[0] = _shift_dims(new_args[0], shift)
        for key in ("dim", "dims"):
            if key in new_kwargs:
                new_kwargs[key] = _shift_dims(new_kwargs[key], shift)
    return Sample(new_input, tuple(new_args), new_kwargs, lifted=True)


class Sample:
    """What one run calls: op(input, *args, **kwargs)."""

    def __init__(self, input, args, kwargs, lifted=False):
        self.input, self.args, self.kwargs, self.lifted = input, tuple(args), dict(kwargs), lifted

    def values(self):
        return [self.input, *self.args, *self.kwargs.values()]


def _short(value):
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).replace("torch.", "")
        return f"{dtype}[{','.join(str(s) for s in value.size())}]"
    if isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in value):
        return "[" + ", ".join(_short(v) for v in value) + "]"
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


def describe(sample):
    """The example column: operands' dtypes and sizes, then the keyword arguments."""
    parts = [_short(sample.input)] if sample.input is not None else []
    parts += [_short(a) for a in sample.args]
    parts += [f"{k}={_short(v)}" for k, v in sample.kwargs.items()]
    return ", ".join(parts)


def op_samples(op, device, dtype, requires_grad, cap, scan=200):
    """Up to `cap` samples of `op` with a 4-D/5-D floating operand, informative ones (see
    informative()) first; if it has none, up to `cap` lifted ones (when its kind allows).
    Returns (samples, lifted)."""
    native, spare, lifted = [], [], []
    kind = lift_kind(op)
    for i, s in enumerate(op.sample_inputs(device, dtype, requires_grad=requires_grad)):
        if i >= scan or len(native) >= cap:
            break
        values = sample_values(s)
        if has_image_tensor(values):
            (native if informative(values) else spare).append(Sample(s.input, s.args, s.kwargs))
        elif kind and len(lifted) < cap:
            candidate = lift(s, kind)
            if candidate is not None and informative(candidate.values()):
                lifted.append(candidate)
    if native or spare:
        return (native + spare)[:cap], False
    return lifted, bool(lifted)


def module_samples(info, device, dtype, requires_grad, cap):
    """Up to `cap` (constructor input, forward input) pairs of a ModuleInfo with a 4-D/5-D
    floating forward operand."""
    found, spare = [], []
    for mi in info.module_inputs_func(info, device=device, dtype=dtype,
                                      requires_grad=requires_grad, training=True):
        if mi.forward_input is None:
            continue
        fwd = mi.forward_input
        values = [*fwd.args, *fwd.kwargs.values()]
        if has_image_tensor(values):
            (found if informative(values) else spare).append((mi.constructor_input, Sample(None, fwd.args, fwd.kwargs)))
        if len(found) >= cap:
            break
    return (found + spare)[:cap]


def select(names, patterns):
    """The names matching any comma-separated glob of `patterns` (all when None), in order."""
    if patterns is None:
        return list(names)
    globs = [p.strip() for p in patterns.split(",") if p.strip()]
    return [n for n in names if any(fnmatch.fnmatchcase(n, g) for g in globs)]
