"""core.verdict: a tree worse than the MPI's own decision or the best fixed method is flagged,
with both figures; equal figures (a one-leaf tree of the best fixed method) are not."""
from collsel.core import verdict


def test_worse_than():
    assert verdict.worse_than(5.71, {"default": 3.1, "best_fixed": 1.11}) == [
        ("default", 3.1), ("best_fixed", 1.11)]
    assert verdict.worse_than(2.0, {"default": 3.1, "best_fixed": 1.11}) == [("best_fixed", 1.11)]
    assert verdict.worse_than(1.0, {"default": 3.1, "best_fixed": 1.11}) == []
    assert verdict.worse_than(3.0463829654518193, {"best_fixed": 3.0463829654518193}) == []
    assert verdict.worse_than(None, {"default": 3.1}) == []
    assert verdict.worse_than(4.0, {"default": None, "best_fixed": 3.9}) == [("best_fixed", 3.9)]
