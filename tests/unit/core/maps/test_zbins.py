"""A measured time as the third axis (core.maps.zbins, `collsel build --z probe_us`): the binning
rule on its own, the map it gives (the octree's z cuts are probe thresholds), rows merged within
a bin, what stays as it was (ppn, categories), and bad values.
"""
import json

import numpy as np
import pytest

from collsel.core.maps import decision_map, table, zbins
from collsel.errors import InputError

from helpers import collsel

HEADER = "collective,comm_size,msg_size,algorithm,segsize,time_us,load_level,probe_us,tied\n"


def write(path, rows):
    """rows: (P, m, algorithm, time, load_level, probe_us, tied)."""
    with open(path, "w") as f:
        f.write(HEADER)
        f.writelines(f"bcast,{p},{m},{a},0,{t},{lv},{z},{tied}\n"
                     for p, m, a, t, lv, z, tied in rows)
    return table.read_table(str(path))


def test_quantile_bins_of_distinct_values():
    b = zbins.bins([1, 2, 3, 4, 5, 6, 7, 8])
    assert (b.values, b.lows, b.highs) == ([1, 3, 5, 7], [2, 4, 6], [3, 5, 7])
    b = zbins.bins([7, 7, 7])
    assert (b.values, b.lows, b.highs) == ([7], [], [])
    b = zbins.bins([3, 90])                  # fewer distinct values than bins: fewer bins
    assert (b.values, b.lows, b.highs) == ([3, 90], [3], [90])
    # counts weigh: nine cells at 1 and one each at 50, 60, 70 (twelve cells, targets 3, 6,
    # 9): every boundary nearest 3, 6, 9 cells lies after the value 1 -> two bins
    b = zbins.bins([1] * 9 + [50, 60, 70])
    assert (b.values, b.lows, b.highs) == ([1, 60], [1], [50])


def test_a_cell_counts_once_whatever_its_number_of_methods(tmp_path):
    """Ten methods at (2, 1) share one probe: the cell counts once, so four cells give four
    bins (counted per row, the ten would take three of the four quantiles: two bins)."""
    rows = [(2, 1, a, 10.0, "off", 1.5, "") for a in range(10)]
    rows += [(2, m, 1, 10.0, "high", z, "") for m, z in ((2, 50.2), (4, 60.1), (8, 70.9))]
    _, found = zbins.bin_table(write(tmp_path / "t.csv", rows), "probe_us")
    assert found.values == [1, 50, 60, 70]


def test_binned_only_for_times():
    assert zbins.binned("probe_us") and zbins.binned("cluster_wait_us")
    assert not zbins.binned("ppn") and not zbins.binned("load_level")


def level_rows(methods_at_low=(1, 6)):
    """P 2 and 4, m 1: four levels whose probes are 3.2, 4.9, 41.7 and 950.0 µs at P=2 and
    twice that at P=4. Algorithm 1 is best below 10 µs, 6 above."""
    rows = []
    for p in (2, 4):
        for level, probe in (("off", 3.2), ("low", 4.9), ("medium", 41.7), ("high", 950.0)):
            z = probe * p / 2
            fast = 1 if probe < 10 else 6
            for a in methods_at_low:
                rows.append((p, 1, a, 10.0 if a == fast else 30.0, level, z,
                             1 if a == fast else 0))
    return rows


def test_the_probe_axis_is_binned_and_cut_at_probe_thresholds(tmp_path):
    dmap = decision_map.build_map(write(tmp_path / "t.csv", level_rows()), "probe_us")
    z = dmap.axes[2]
    # cells' whole-µs probes: 3, 4, 41, 950 (P=2) and 6, 9, 83, 1900 (P=4): eight values,
    # four bins of two, each valued at its median rounded down
    assert (z.name, z.kind) == ("probe_us", decision_map.LINEAR)
    assert z.values == [3, 7, 62, 1425] and z.labels == ["3", "7", "62", "1425"]
    assert z.cuts == [6, 26, 517]                # midpoints of 4|6, 9|41, 83|950, + 1
    assert [z.cell_of(v) for v in (0, 5, 6, 25, 26, 516, 517, 10**9)] == [0, 0, 1, 1, 2, 2,
                                                                           3, 3]
    best = {(p, c): dmap.methods[dmap.best[i, 0, c]].algorithm
            for i, p in enumerate(dmap.axes[0].values) for c in range(4)
            if dmap.measured[i, 0, c]}
    # P=2's off and low share bin 3 (merged); P=4's share bin 7
    assert best == {(2, 0): 1, (2, 2): 6, (2, 3): 6, (4, 1): 1, (4, 2): 6, (4, 3): 6}


def test_rows_of_one_point_in_one_bin_are_merged_by_their_mean(tmp_path):
    rows = [(2, 1, 1, 10.0, "off", 3.2, 1), (2, 1, 1, 30.0, "low", 3.9, 1),
            (2, 1, 6, 20.0, "off", 3.2, 0), (2, 1, 6, 20.0, "low", 3.9, 0),
            (2, 1, 1, 50.0, "high", 800.0, 0), (2, 1, 6, 20.0, "high", 800.0, 1)]
    t = write(tmp_path / "t.csv", rows)
    merged, found = zbins.bin_table(t, "probe_us")
    assert found.values == [3, 800]
    got = {(int(a), z): (float(time), tied) for a, z, time, tied in zip(
        merged.algorithm, merged.extra["probe_us"], merged.time_us, merged.extra["tied"])}
    # off and low share the bin of 3 µs: one measurement, the mean time, no tie flag left
    assert got == {(1, "3"): (20.0, ""), (6, "3"): (20.0, ""),
                   (1, "800"): (50.0, "0"), (6, "800"): (20.0, "1")}
    dmap = decision_map.build_map(t, "probe_us")
    assert dmap.times[0, 0, 0].tolist() == [20.0, 20.0]          # both methods, bin 3
    assert dmap.tied[0, 0, 0].tolist() == [True, False]          # from the times alone


def test_other_third_axes_are_unchanged(tmp_path):
    t = write(tmp_path / "t.csv", level_rows())
    z = decision_map.build_map(t, "load_level").axes[2]
    assert z.kind == decision_map.CATEGORY and z.labels == ["off", "low", "medium", "high"]


@pytest.mark.parametrize("bad", ["fast", "-1", "nan", "inf", ""])
def test_a_probe_that_is_no_time_is_named(tmp_path, bad):
    rows = level_rows()
    rows[3] = rows[3][:5] + (bad,) + rows[3][6:]
    t = write(tmp_path / "t.csv", rows)
    with pytest.raises(InputError, match=r"t\.csv:5: probe_us .* is not a time in µs"):
        decision_map.build_map(t, "probe_us")


@pytest.mark.slow
def test_build_query_and_blob_use_the_probe_cuts(tmp_path):
    path = tmp_path / "t.csv"
    write(path, level_rows())
    out = tmp_path / "tree"
    r = collsel("build", str(path), "--collective", "bcast", "--z", "probe_us", "--out",
                str(out))
    assert r.returncode == 0, r.stderr
    axes = json.loads((out / "tree.json").read_text())["axes"]
    assert axes[2]["cuts"] == [6, 26, 517]
    for z, want in ((6, "1"), (9, "1"), (25, "1"), (26, "6"), (83, "6"), (10**6, "6")):
        q = collsel("query", str(out / "tree.json"), "--ids", "--comm-size", "4", "--msg-size", "1",
                    "--z", str(z))
        assert q.returncode == 0 and q.stdout.split()[0] == want, (z, q.stdout, q.stderr)
    blob = collsel("emit", "--target", "blob", str(out / "tree.json"), "--out",
                   str(tmp_path / "tree.bin"))
    assert blob.returncode == 0, blob.stderr
    assert np.isfinite(float(r.stdout.split("in-sample penalty ")[1].split("%")[0]))
