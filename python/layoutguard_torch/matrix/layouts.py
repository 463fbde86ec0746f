"""How a tensor's strides read, judged as the bridge judges them, so that the matrix can
cross-check the bridge's verdict against what the tensors themselves show."""
import torch

CHANNELS_LAST = "channels_last"
AMBIGUOUS = "ambiguous"
OTHER = "other"


def _channels_last_strides(sizes, strides, order):
    # c10's is_channels_last_strides_2d/3d: walk the dims from fastest to slowest; each
    # stride must be at least the extent of the dims before it. This is what
    # suggest_memory_format() reads, and the bridge classifies with suggest_memory_format().
    if strides[1] == 0:
        return False
    least = 0
    for d in order:
        if sizes[d] == 0 or strides[d] < least:
            return False
        if d == 0 and least == strides[1]:
            return False
        least = strides[d]
        if sizes[d] > 1:
            least *= sizes[d]
    return True


def memory_format_for(t):
    """The channels_last format for a tensor's rank (channels_last_3d for 5-D), or None."""
    return {4: torch.channels_last, 5: torch.channels_last_3d}.get(t.dim())


def classify(t):
    """channels_last, ambiguous (contiguous in both formats: C = 1 or every spatial size 1),
    other; None for a tensor that is not 4-D/5-D strided."""
    fmt = memory_format_for(t)
    if fmt is None or t.layout != torch.strided:
        return None
    if t.is_contiguous() and t.is_contiguous(memory_format=fmt):
        return AMBIGUOUS
    order = (1, 3, 2, 0) if t.dim() == 4 else (1, 4, 3, 2, 0)
    return CHANNELS_LAST if _channels_last_strides(t.size(), t.stride(), order) else OTHER


def is_floating(t):
    return isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())


def to_channels_last(t):
    """A leaf copy of a 4-D/5-D floating tensor in channels_last(_3d), requires_grad kept.
    clone() is used rather than contiguous(): contiguous() leaves an ambiguous tensor's
    size-1 strides as they were, and the bridge would then judge it contiguous."""
    fmt = memory_format_for(t)
    if fmt is None or not is_floating(t) or t.layout != torch.strided:
        return t
    with torch.no_grad():
        copy = t.detach().clone(memory_format=fmt)
    return copy.requires_grad_(t.requires_grad)


def shares_storage(a, b):
    try:
        return a.storage().data_ptr() == b.storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return False


def has_zero_stride(t):
    return any(s == 0 and n > 1 for s, n in zip(t.stride(), t.size()))


def describe(t):
    """One operand for the table: dtype, sizes, strides, format."""
    return {"dtype": str(t.dtype).replace("torch.", ""), "sizes": list(t.size()),
            "strides": list(t.stride()) if t.layout == torch.strided else [],
            "format": classify(t) or f"{t.dim()}-D"}
