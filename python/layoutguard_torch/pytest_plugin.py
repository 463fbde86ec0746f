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

import layoutguard_torch as lgt


class LayoutAssertionError(AssertionError):
    """A block broke its layout contract; the message lists each violation's dump."""


def _violations(report):
    return report.get("violations", [])


@contextlib.contextmanager
def no_layout_loss():
    """Records the block's ATen ops on this thread and fails with every violation found."""
    before = lgt.report()
    seen = {(v["op"], v["module"], v.get("signature")): v["count"] for v in _violations(before)}
    with lgt.guard("record"):
        yield
    new = []
    for v in _violations(lgt.report()):
        key = (v["op"], v["module"], v.get("signature"))
        if v["count"] > seen.get(key, 0):
            new.append(v)
    if new:
        lines = [f"{len(new)} layout violation(s) in the block:"]
        for v in new:
            where = v.get("source_location") or v["module"] or "(no module)"
            cause = f" (root cause {v['root_cause']})" if v.get("root_cause") else ""
            lines.append(f"  {v['op']}{cause} at {where}: {v['formats_in']} -> {v['formats_out']}")
        raise LayoutAssertionError("\n".join(lines))


@contextlib.contextmanager
def conversions_at_most(limit_bytes):
    """Fails when the block's layout conversions (copies between dim orders, as the report's
    ledger counts them) move more than `limit_bytes` bytes."""
    before = lgt.report().get("conversion_bytes", 0)
    with lgt.guard("record"):
        yield
    moved = lgt.report().get("conversion_bytes", 0) - before
    if moved > limit_bytes:
        raise LayoutAssertionError(f"the block converted {moved} bytes between memory formats; at most "
                                   f"{limit_bytes} allowed")


try:
    import pytest

    @pytest.fixture
    def layout_guard():
        """Records the test's ATen ops and fails it on a layout violation."""
        with no_layout_loss():
            yield
except ImportError:  # pytest is optional: the context managers work without it
    pass
