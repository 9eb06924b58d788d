"""core.evaluate.verdict: a tree worse than the MPI's own decision or the best fixed method is flagged,
with both figures; equal figures (a one-leaf tree of the best fixed method) are not."""
import pytest

from collsel.core.evaluate import verdict


def test_worse_than():
    assert verdict.worse_than(5.71, {"default": 3.1, "best_fixed": 1.11}) == [
        ("default", 3.1), ("best_fixed", 1.11)]
    assert verdict.worse_than(2.0, {"default": 3.1, "best_fixed": 1.11}) == [("best_fixed", 1.11)]
    assert verdict.worse_than(1.0, {"default": 3.1, "best_fixed": 1.11}) == []
    assert verdict.worse_than(3.0463829654518193, {"best_fixed": 3.0463829654518193}) == []
    assert verdict.worse_than(None, {"default": 3.1}) == []
    assert verdict.worse_than(4.0, {"default": None, "best_fixed": 3.9}) == [("best_fixed", 3.9)]


def test_report_warnings_name_both_figures():
    """sinks.report.robust.warnings on an out-of-sample table where the exact tree loses to the
    best fixed method in one column and nothing loses in the other."""
    from collsel.sinks.report import robust

    def row(key, *means):
        return {"key": key, "cells": [{"mean": m, "cells": 10} for m in means]}

    table = {"columns": [{"label": "across launches"}, {"label": "leave-one-P-out"}],
             "rows": [row("recommended", 1.0, 2.0), row("exact", 1.5, 5.71),
                      row("default", 16.0, 3.1), row("best_fixed", 1.2, 1.11)]}
    got = [(w["column"], w["tree"], w["against"], w["tree_mean"], w["other_mean"])
           for w in robust.warnings(table)]
    assert got == [("across launches", "exact", "best_fixed", 1.5, 1.2),
                   ("leave-one-P-out", "recommended", "best_fixed", 2.0, 1.11),
                   ("leave-one-P-out", "exact", "default", 5.71, 3.1),
                   ("leave-one-P-out", "exact", "best_fixed", 5.71, 1.11)]


def test_a_gap_within_one_standard_error_is_not_worse():
    """core.evaluate.verdict: a tree is worse than a baseline only by more than that baseline's margin
    (one standard error of the per-cell difference, from core.evaluate.out_of_sample)."""
    assert verdict.worse_than(1.21, {"best fixed": 1.20}) == [("best fixed", 1.20)]
    assert verdict.worse_than(1.21, {"best fixed": 1.20}, {"best fixed": 0.05}) == []
    assert verdict.worse_than(1.30, {"best fixed": 1.20}, {"best fixed": 0.05}) == \
        [("best fixed", 1.20)]


def test_out_of_sample_figures_carry_the_standard_error_of_the_difference():
    import numpy as np
    from collsel.core.evaluate.out_of_sample import _difference_se
    best = np.array([1.0, 1.0, 1.0, 1.0, np.nan])
    tree = np.array([1.1, 1.2, 1.0, 1.0, 2.0])
    same = _difference_se(tree, tree, best)
    assert same == 0.0
    other = np.array([1.0, 1.0, 1.0, 1.3, 1.0])
    diff = np.array([10.0, 20.0, 0.0, -30.0])          # penalty points, the NaN cell left out
    assert _difference_se(tree, other, best) == pytest.approx(diff.std(ddof=1) / 2)
