"""`collsel evaluate --protocol launches`: each launch of the sweep's journal held out, the tree
built on the mean of the others (with their journal), scored by the held-out launch's times;
the direct counterpart of `build --recommend`'s "across launches" figure."""
import json

import numpy as np
import pytest

from collsel.core.evaluate import fold_maps, held_out, out_of_sample
from collsel.core.maps import decision_map, table as tables
from collsel.sources import launch_tables
from helpers import collsel

SIZES, MESSAGES = (2, 4, 6, 8, 10), (1, 8, 64, 512)


def _time(launch, p, m, algorithm):
    """Method 1 grows with P, method 2 with m, the default in between; each launch a little
    off (by P and m), so the folds differ."""
    base = {0: 3.0 + 0.6 * p + m / 16, 1: 1.0 + p, 2: 1.0 + m / 8}[algorithm]
    return base * (1 + 0.03 * np.sin(launch * p + m))


def sweep_with_journal(directory, launches=(1, 2, 3)):
    """A table of three launches' mean times and its journal beside it (TABLE.launches)."""
    table, journal = directory / "bcast.csv", directory / "bcast.csv.launches"
    points = [(p, m, a) for p in SIZES for m in MESSAGES for a in (0, 1, 2)]
    with open(journal, "w") as f:
        f.write("comm_size,msg_size,algorithm,segsize,launch,median_us\n")
        for k in launches:
            f.writelines(f"{p},{m},{a},0,{k},{_time(k, p, m, a):.6f}\n" for p, m, a in points)
    with open(table, "w") as f:
        f.write("collective,comm_size,msg_size,algorithm,segsize,time_us\n")
        f.writelines(f"bcast,{p},{m},{a},0,"
                     f"{np.mean([float(f'{_time(k, p, m, a):.6f}') for k in launches]):.6f}\n"
                     for p, m, a in points)
    return table, journal


def test_a_launch_fold_trains_on_the_selections_training_map(tmp_path):
    """The training rows of a launch fold (the other launches' mean) make the map
    build --recommend's launch fold trains on."""
    table, journal = sweep_with_journal(tmp_path)
    runs = launch_tables.read_launch_tables(journal, "bcast")
    whole = decision_map.build_map(tables.read_tables([table]).select("bcast"))
    grid = fold_maps.FoldGrid(whole, runs)
    assert held_out.launch_folds(runs) == [1, 2, 3]
    assert held_out.launch_folds(runs, max_folds=2) == [1, 3]
    for k in runs:
        direct = decision_map.build_map(out_of_sample.mean_table(
            [t for j, t in sorted(runs.items()) if j != k]))
        inside = grid.training((("launches", k),))
        assert direct.methods == inside.methods
        np.testing.assert_allclose(direct.times, inside.times, rtol=1e-12)
        np.testing.assert_allclose(direct.baseline_time, inside.baseline_time, rtol=1e-12)


def test_evaluate_across_launches_is_what_build_prints(tmp_path):
    """The default and the best fixed method score as build --recommend prints them across
    launches (the same folds, cells and times), and the recommendation within the honesty
    tolerance of its printed figure."""
    table, _ = sweep_with_journal(tmp_path)
    built = collsel("build", table, "--recommend", "--out", tmp_path / "tree")
    assert built.returncode == 0, built.stderr
    printed = json.loads((tmp_path / "tree" / "stats.json").read_text())["out_of_sample"]
    printed = printed["launches"]
    done = collsel("evaluate", table, "--protocol", "launches", "--candidate=--recommend",
                   "--json", tmp_path / "e.json", "--quiet")
    assert done.returncode == 0, done.stderr
    block = json.loads((tmp_path / "e.json").read_text())["protocols"]["launches"]
    assert block["folds"] == 3 and block["held_out"] == [1, 2, 3]
    for name in ("default", "best_fixed"):
        assert block[name]["cells"] == printed[name]["cells"] == len(SIZES) * len(MESSAGES) * 3
        assert block[name]["mean"] == pytest.approx(printed[name]["mean"], abs=1e-9)
    direct, shown = block["configs"][0]["mean"], printed["tree"]["mean"]
    assert abs(direct - shown) <= max(1.0, 0.2 * abs(direct))


def test_without_a_journal_the_launches_protocol_is_refused(tmp_path):
    table, journal = sweep_with_journal(tmp_path)
    journal.unlink()
    done = collsel("evaluate", table, "--protocol", "launches", "--quiet")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "collsel: error: --protocol launches: needs the sweep's journal of 2+ launches "
        "(TABLE.launches beside the table, or --launches JOURNAL)"]
