"""Which PyTorch ops keep channels_last, forward and backward, on this device and torch version.

    python3 -m layoutguard_torch.matrix --json t.json --markdown t.md     # every op and module

Each OpInfo (torch's op_db) and ModuleInfo (module_db) sample with a 4-D/5-D floating operand
runs on channels_last copies of its operands under the bridge in record mode, then backward
through it; lower-rank samples of elementwise and dim-taking ops are lifted to 4-D. Each op and
module gets a verdict per direction: keeps, loses (with the innermost ATen op that lost the
format), n/a, error or untested. docs/torch-support/README.md says how to read the table."""
PROG = "layoutguard_torch.matrix"


class UsageError(Exception):
    """A bad argument or environment: one line on stderr, exit status 2."""
