"""`--interpolate` (core.maps.interpolated): between two measured P the decision follows the
methods' interpolated times, so the switch falls where they cross, not at the midpoint; the
inserted values are never measured, and a training fold is mapped as the whole table is."""
import json

import numpy as np
import pytest

from collsel.core.evaluate import candidates, fold_maps
from collsel.core.maps import decision_map, interpolated, table as tables
import helpers
from helpers import collsel


def test_virtual_values_fill_small_gaps_and_space_large_ones_in_log2():
    assert interpolated.virtual_values([2, 4, 6]) == [3, 5]
    assert interpolated.virtual_values([4, 8]) == [5, 6, 7]
    assert interpolated.virtual_values([8, 32]) == [11, 16, 23]      # 16: the geometric middle
    assert interpolated.virtual_values([1024, 4096]) == [1448, 2048, 2896]
    assert interpolated.virtual_values([0, 1]) == [] and interpolated.virtual_values([5]) == []


def crossing_table(path, extra_p=()):
    """helpers.crossing_table at P = 4, 16 and 64 (and `extra_p`): the plain map cuts the gap
    4..16 at 10, the times cross at 12."""
    return helpers.crossing_table(path, (4, 16, 64) + tuple(extra_p))


def test_the_switch_falls_where_the_interpolated_times_cross(tmp_path):
    table = tables.read_tables([crossing_table(tmp_path / "t.csv")]).select("bcast")
    plain = decision_map.MapSettings().build(table)
    dense = decision_map.MapSettings(interpolate=True).build(table)
    assert not plain.inserted and dense.inserted
    p_axis = dense.axes[0]
    assert p_axis.values == [4, 6, 8, 11, 16, 23, 32, 45, 64]
    method = [m.algorithm for m in dense.methods]
    at = {p: method[dense.best[p_axis.values.index(p), 0]] for p in p_axis.values}
    assert [at[p] for p in (4, 6, 8, 11, 16)] == [1, 1, 1, 1, 2]
    # the inserted values are decisions, never measurements
    assert dense.measured.sum() == plain.measured.sum() == 6
    assert np.isnan(dense.times[p_axis.values.index(11)]).all()


def test_a_fold_is_mapped_as_the_whole_table(tmp_path):
    table = tables.read_tables([crossing_table(tmp_path / "t.csv", (8,))]).select("bcast")
    settings = decision_map.MapSettings(interpolate=True)
    dense = settings.build(table)
    grid = fold_maps.FoldGrid(dense, settings=settings)
    held = grid.folds("P")
    assert held == [(("P", dense.axes[0].values.index(p)),) for p in (8, 16)]  # measured only
    without_8 = settings.build(table.take(table.comm_size != 8))
    assert grid.training(held[0]).content_key() == without_8.content_key()
    # the whole map sliced and mapped again is itself; a candidate built on it keeps its axes
    assert grid.training(()).content_key() == dense.content_key()
    no_defer = candidates.Candidate("exact", defer=False, split="balanced", leaf="majority")
    built, on = candidates.build(no_defer, dense)
    assert on is dense and built.split.max() <= len(dense.axes[0].values)


def test_build_and_evaluate_take_the_flag(tmp_path):
    path = crossing_table(tmp_path / "t.csv")
    out = {}
    for flags in ((), ("--interpolate",)):
        d = tmp_path / ("dense" if flags else "plain")
        done = collsel("build", path, "--out", d, *flags)
        assert done.returncode == 0, done.stderr
        asked = collsel("query", d / "tree.json", "--ids", "--points", "-", input="11 8\n")
        assert asked.returncode == 0, asked.stderr
        out[bool(flags)] = asked.stdout.split()
    assert out[False][0] == "2" and out[True][0] == "1"
    report = tmp_path / "e.json"
    done = collsel("evaluate", path, "--candidate=", "--candidate=--interpolate", "--json",
                   report, "--quiet")
    assert done.returncode == 0, done.stderr
    configs = json.loads(report.read_text())["protocols"]["P"]["configs"]
    # held out P = 16 between 4 and 64: plain takes 4's method 1 (40 us against 30: 33.3 %),
    # interpolated sees method 1 pass 30 us at P = 12 and takes method 2 (0 %)
    assert [c["mean"] for c in configs] == pytest.approx([100 / 3, 0.0])
