"""Run by test_settings.py through pytest with -p layoutguard_torch.pytest_plugin: two tests
must pass and four must fail, each failure naming the violation or the conversion budget."""
import torch

from layoutguard_torch.pytest_plugin import conversions_at_most, no_layout_loss


def image():
    return torch.randn(2, 8, 6, 6).contiguous(memory_format=torch.channels_last)


def test_kept_format_passes(layout_guard):
    torch.relu(image()) * 2


def test_softmax_over_c_fails(layout_guard):
    torch.softmax(image(), 1)


def test_block_within_budget():
    x = image()
    with no_layout_loss(), conversions_at_most(0):
        torch.nn.functional.max_pool2d(x, 2)


def test_conversion_over_budget_fails():
    x = image()
    with conversions_at_most(100):
        x.contiguous()


def test_violation_within_budget_fails():
    with conversions_at_most(10**9):
        torch.softmax(image(), 1)


def lose_the_format():
    return torch.softmax(image(), 1)


def test_violation_after_a_clear_fails():
    # The same loss before the block and inside it, after a clear: one record, counted once.
    import layoutguard_torch as lgt
    with lgt.guard("record"):
        lose_the_format()
    with no_layout_loss():
        lgt.clear_report()
        lose_the_format()
