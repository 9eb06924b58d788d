"""A third axis (ppn): cells whose decision changes with it, its z-oblivious pooled view, the
oblivious tree out of sample, and journals that carry the axis (core.maps.third_axis,
core.evaluate.out_of_sample pool=True, sources.launch_tables)."""
import json

import numpy as np
import pytest

from collsel.sources import launch_tables
from collsel.core.evaluate import out_of_sample as oos
from collsel.core.maps import decision_map, table, third_axis
from collsel.core.trees import tree

from helpers import collsel

HEADER = "collective,comm_size,msg_size,algorithm,segsize,time_us,ppn,tied\n"


def write(path, rows):
    """rows: (P, m, algorithm, time, ppn, tied or '')."""
    with open(path, "w") as f:
        f.write(HEADER)
        f.writelines(f"bcast,{p},{m},{a},0,{t},{z},{tied}\n" for p, m, a, t, z, tied in rows)
    return table.read_table(path)


def flipping_rows(tied_at_ppn1=""):
    """P 2 and 4, m 1 and 64: algorithm 1 best everywhere except (P, m=64) at ppn 2, where 6 is
    best by far (a ppn effect); optionally 6 is marked tied with 1 at m=64, ppn 1."""
    rows = []
    for p in (2, 4, 8):
        for z in (1, 2):
            rows += [(p, 1, 1, 10.0, z, 1), (p, 1, 6, 20.0, z, 0)]
            if z == 2:
                rows += [(p, 64, 1, 40.0, z, 0), (p, 64, 6, 10.0, z, 1)]
            else:
                rows += [(p, 64, 1, 10.0, z, 1), (p, 64, 6, 11.0, z, tied_at_ppn1 or 0)]
    return rows


def test_changes_counts_cells_whose_best_differs_between_ppn(tmp_path):
    dmap = decision_map.build_map(write(tmp_path / "t.csv", flipping_rows()), "ppn")
    got = third_axis.changes(dmap)
    assert got == {"axis": "ppn", "cells": 6, "best_differs": 3, "tie_sets_disjoint": 3}


def test_a_method_tied_at_every_ppn_is_not_a_tie_set_change(tmp_path):
    dmap = decision_map.build_map(write(tmp_path / "t.csv", flipping_rows(tied_at_ppn1=1)),
                                  "ppn")
    got = third_axis.changes(dmap)
    assert got["best_differs"] == 3 and got["tie_sets_disjoint"] == 0


def test_cells_measured_at_one_ppn_only_are_not_counted(tmp_path):
    rows = [r for r in flipping_rows() if not (r[0] == 8 and r[4] == 2)]
    got = third_axis.changes(decision_map.build_map(write(tmp_path / "t.csv", rows), "ppn"))
    assert got["cells"] == 4 and got["best_differs"] == 2


def test_pooled_is_the_mean_over_the_axis_and_drops_it(tmp_path):
    t = write(tmp_path / "t.csv", flipping_rows())
    p = third_axis.pooled(t, "ppn")
    assert p.extra == {} and len(p) == len(t) // 2
    at = {(int(a), int(b), int(c)): float(x) for a, b, c, x in
          zip(p.comm_size, p.msg_size, p.algorithm, p.time_us)}
    assert at[(4, 64, 1)] == 25.0 and at[(4, 64, 6)] == 10.5 and at[(2, 1, 6)] == 20.0


def test_oblivious_tree_pays_where_the_octree_does_not(tmp_path):
    """Leave-one-P-out (P=4 held out): the octree keeps the ppn split and scores 0; the pooled
    2-D tree picks one method for (4, 64) and pays at one of the two ppn values."""
    t = write(tmp_path / "t.csv", flipping_rows())
    settings = decision_map.MapSettings(z="ppn")
    aware = oos.tree_figures(oos.all_folds(t, None, settings), tree.build_tree)
    blind = oos.tree_figures(oos.all_folds(t, None, settings, pool=True), tree.build_tree)
    a, b = aware["leave_one_P_out"]["tree"], blind["leave_one_P_out"]["tree"]
    assert a["cells"] == b["cells"] == 4          # the same held-out (P, m, ppn) cells
    assert a["mean"] == 0.0 and b["mean"] > 0.0
    # pooled means at (4, 64): algorithm 1 25.0, 6 10.5 -> 6, which pays 10% at ppn 1
    assert b["max"] == pytest.approx(10.0)


def test_launch_journal_carries_the_third_axis(tmp_path):
    path = tmp_path / "t.csv.launches"
    path.write_text("collective,comm_size,msg_size,algorithm,segsize,launch,median_us,ppn\n"
                    "bcast,4,64,1,0,1,10,1\nbcast,4,64,1,0,1,40,2\n"
                    "bcast,4,64,1,0,2,12,1\n")
    got = launch_tables.read_launch_tables(str(path), "bcast", "ppn")
    assert sorted(got) == [1, 2]
    assert got[1].extra["ppn"].tolist() == ["1", "2"]
    assert np.allclose(got[1].time_us, [10, 40])
    # a journal without the column cannot be placed on the axis: no launch folds
    assert launch_tables.read_launch_tables(str(path), "bcast", "nodes") == {}
    assert launch_tables.read_launch_tables(str(path), "bcast")[1].extra == {}


def test_build_z_reports_the_axis_and_the_oblivious_tree(tmp_path):
    write(tmp_path / "t.csv", flipping_rows())
    r = collsel("build", str(tmp_path / "t.csv"), "--collective", "bcast", "--z", "ppn",
                "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert "ppn: the best method differs between ppn values in 3 of 6" in r.stdout
    block = json.loads((tmp_path / "out" / "stats.json").read_text())["third_axis"]
    assert block["oblivious_out_of_sample"]["leave_one_P_out"]["tree"]["mean"] > 0
