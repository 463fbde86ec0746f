"""The layout assertions of layoutguard's doctest and gtest headers, for pytest.

    from layoutguard_torch.pytest_plugin import no_layout_loss, conversions_at_most

    def test_block_keeps_channels_last():
        with no_layout_loss():              # fails the test on any violation inside
            block(x.to(memory_format=torch.channels_last))

    def test_copy_budget():
        with conversions_at_most(0):       # fails when the block converts between formats
            block(x)

Enable it as a plugin (`-p layoutguard_torch.pytest_plugin`) for the fixture `layout_guard`,
which records a test and fails it on a violation."""
import contextlib
import operator

import layoutguard_torch as lgt


class LayoutAssertionError(AssertionError):
    """A block broke its layout contract; the message lists each violation's dump."""


def _key(v):
    # What tells two records apart (the guard keeps one per op, module, call site, source line,
    # autograd node, forward call and operand layouts).
    return (v["op"], v["module"], v.get("call_site"), v.get("source_location"), v.get("autograd_node"),
            v.get("forward_call"), v.get("signature"))


def _conversions():
    """The report's conversions, bytes by (op, module, from, to)."""
    return {(c["op"], c["module"], c["from"], c["to"]): c["bytes"] for c in lgt.report().get("conversions", [])}


class _Recording:
    """A record scope on this thread and what the report held when it began."""

    def __init__(self):
        self._before = {_key(v): v["count"] for v in lgt.report().get("violations", [])}
        self._conversions_before = _conversions()
        self._clears = lgt._clears
        self._scope = lgt.guard("record")
        self._scope.__enter__()

    def new_conversions(self):
        """Bytes by (op, module, from, to) that the conversions since the start moved."""
        before = {} if self.cleared() else self._conversions_before
        return {key: n - before.get(key, 0) for key, n in _conversions().items() if n > before.get(key, 0)}

    def cleared(self):
        """Whether lgt.clear_report() ran since the start."""
        return lgt._clears != self._clears

    def close(self):
        self._scope.__exit__(None, None, None)

    def check(self):
        """Raises LayoutAssertionError listing the violations recorded since the start."""
        # The block cleared the report (lgt.clear_report()): what it holds now is the block's.
        before = {} if self.cleared() else self._before
        new = [v for v in lgt.report().get("violations", []) if v["count"] > before.get(_key(v), 0)]
        if not new:
            return
        lines = [f"{len(new)} layout violation(s) in the block:"]
        for v in new:
            where = v.get("source_location") or v["module"] or "(no module)"
            cause = f" (root cause {v['root_cause']})" if v.get("root_cause") else ""
            lines.append(f"  {v['op']}{cause} at {where}: {v['formats_in']} -> {v['formats_out']}")
        raise LayoutAssertionError("\n".join(lines))


@contextlib.contextmanager
def no_layout_loss():
    """Records the block's ATen ops on this thread and fails with every violation found. The
    report is the process's: violations that other recording threads add meanwhile count too."""
    recording = _Recording()
    try:
        yield
    finally:
        recording.close()
    recording.check()


@contextlib.contextmanager
def conversions_at_most(limit_bytes):
    """Fails when the block's layout conversions (copies between dim orders, as the report's
    ledger counts them) move more than `limit_bytes` bytes (a non-negative int), listing them,
    and, as no_layout_loss(), on a violation."""
    # Any integer type (numpy's too, through __index__); not a bool, not a float.
    try:
        if isinstance(limit_bytes, bool):
            raise TypeError
        limit_bytes = operator.index(limit_bytes)
    except TypeError:
        raise TypeError(f"layoutguard_torch.pytest_plugin.conversions_at_most: limit_bytes must be an int, got "
                        f"{type(limit_bytes).__name__} {limit_bytes!r}") from None
    if limit_bytes < 0:
        raise ValueError(f"layoutguard_torch.pytest_plugin.conversions_at_most: limit_bytes must be 0 or more, got "
                         f"{limit_bytes}")
    recording = _Recording()
    try:
        yield
    finally:
        recording.close()
    recording.check()  # a violation fails as under LG_CHECK_CONVERSIONS_AT_MOST's throw mode
    moved = recording.new_conversions()
    total = sum(moved.values())
    if total > limit_bytes:
        lines = [f"the block converted {total} bytes between memory formats; at most {limit_bytes} allowed:"]
        for (op, module, src, dst), n in sorted(moved.items(), key=lambda item: -item[1]):
            lines.append(f"  {op} at {module or '(no module)'}: {src} -> {dst}, {n} bytes")
        raise LayoutAssertionError("\n".join(lines))


try:
    import pytest

    @pytest.fixture
    def layout_guard(request):
        """Records the test's ATen ops; the test fails (in its call phase) on a violation."""
        recording = _Recording()
        request.node._layoutguard_recording = recording
        yield recording
        recording.close()

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_call(item):
        # Runs after the test body passed: a violation fails the test itself, not its teardown.
        recording = getattr(item, "_layoutguard_recording", None)
        if recording is not None:
            recording.check()
except ImportError:  # pytest is optional: the context managers work without it
    pass
