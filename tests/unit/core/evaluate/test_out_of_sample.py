"""Out-of-sample statistics (core.evaluate.out_of_sample): folds, query by value, pooled figures."""
import numpy as np
import pytest

from collsel.sources import launch_tables
from collsel.core.evaluate import out_of_sample as oos
from collsel.core.maps import table
from collsel.core.trees import tree
from collsel.errors import InputError


def write(path, rows):
    with open(path, "w") as f:
        f.write("collective,comm_size,msg_size,algorithm,segsize,time_us\n")
        f.writelines(f"bcast,{p},{m},{a},0,{t}\n" for p, m, a, t in rows)
    return table.read_table(path)


def grid(rule):
    return [(p, m, a, rule(p, m, a)) for p in (2, 4, 8, 16) for m in (1, 64, 4096, 262144)
            for a in (1, 6)]


def test_one_method_always_best_scores_zero_out_of_sample(tmp_path):
    t = write(tmp_path / "t.csv", grid(lambda p, m, a: 10.0 * a))
    folds = oos.all_folds(t)
    figs = oos.tree_figures(folds, tree.build_tree)
    assert figs["launches"] is None
    for kind in ("leave_one_P_out", "leave_one_m_out"):
        # only the two interior values of each axis are held out, 4 cells each
        assert figs[kind]["tree"]["cells"] == 8 and figs[kind]["tree"]["mean"] == 0.0
        assert figs[kind]["best_fixed"]["mean"] == 0.0
        assert figs[kind]["default"]["cells"] == 0       # no algorithm-0 rows


def test_held_out_P_is_asked_through_the_cuts(tmp_path):
    """Method 6 wins for P >= 8: leaving P=4 out, the cut between 2 and 8 is 5, so P=4 gets
    P=2's choice (method 1, right); leaving P=8 out, the cut between 4 and 16 is 10 and P=8
    gets P=4's choice (method 1: 100 % slower there)."""
    t = write(tmp_path / "t.csv", grid(lambda p, m, a: 10.0 if (a == 6) == (p >= 8) else 20.0))
    by_p = {f.name: f for f in oos.leave_one_out_folds(t, "comm_size")}
    assert sorted(by_p) == ["comm_size=4", "comm_size=8"]     # the edges are never held out
    pen = lambda f: oos.evaluate([f], lambda m: [tree.build_tree(m)])["trees"][0]  # noqa: E731
    assert pen(by_p["comm_size=4"])["mean"] == 0.0
    assert pen(by_p["comm_size=8"])["mean"] == 100.0


def test_launch_folds_train_on_the_mean_of_the_others(tmp_path):
    launches = {k: write(tmp_path / f"l{k}.csv", grid(lambda p, m, a: 10.0 + k * a))
                for k in (1, 2, 3)}
    folds = oos.launch_folds(launches)
    assert [f.name for f in folds] == ["launch=1", "launch=2", "launch=3"]
    mean = oos.mean_table([launches[2], launches[3]])
    assert np.allclose(np.sort(mean.time_us), np.sort((launches[2].time_us
                                                        + launches[3].time_us) / 2))
    result = oos.evaluate(folds, lambda m: [tree.build_tree(m)])
    assert result["folds"] == 3 and result["trees"][0]["cells"] == 3 * 16


def test_mpich_journal_reads_in_its_family():
    """The shipped MPICH sweep's journal names MPICH's algorithms (`# algorithm_family=mpich`)."""
    import pathlib
    from collsel.sources import launch_tables
    journal = pathlib.Path(__file__).resolve().parents[4] / "bench-data/paired/bcast-mpich.csv.launches"
    parts = launch_tables.read_launch_tables(str(journal), "bcast")
    assert sorted(parts) == [1, 2, 3, 4, 5]
    assert {t.family for t in parts.values()} == {"mpich"}
    assert set(parts[1].algorithm.tolist()) == {0, 1, 2, 4, 5}    # auto, binomial, nb, 2 scatters


def test_journal_fast_path_reads_as_the_row_reader_and_leaves_errors_to_it(tmp_path,
                                                                           monkeypatch):
    journal = tmp_path / "t.csv.launches"
    lines = ["collective,comm_size,msg_size,algorithm,segsize,faninout,launch,median_us"]
    lines += [f"bcast,{p},{m},{a},0,,{k},{1 + p + m / 7 + a + k / 10}"
              for p in (2, 4) for m in (1, 64) for a in (0, 1, 2) for k in (1, 2)]
    journal.write_text("\n".join(lines) + "\n")
    fast = launch_tables.read_launch_tables(str(journal), "bcast")
    journal.write_text("\n".join(line.replace(",,", ",0,") for line in lines) + "\n")
    assert launch_tables._plain_columns is not None
    fast0 = launch_tables.read_launch_tables(str(journal), "bcast")
    monkeypatch.setattr(launch_tables, "_plain_columns", lambda *a: None)
    slow = launch_tables.read_launch_tables(str(journal), "bcast")
    for got in (fast, fast0):
        assert list(got) == list(slow) == [1, 2]
        for k in slow:
            for col in ("comm_size", "msg_size", "algorithm", "segsize", "faninout", "time_us"):
                a, b = getattr(got[k], col), getattr(slow[k], col)
                assert a.dtype == b.dtype and (a == b).all(), col
            assert got[k].origin == slow[k].origin
    monkeypatch.undo()
    journal.write_text("\n".join(lines[:3] + ["bcast,2,1,1,x,0,1,2.5"]) + "\n")
    with pytest.raises(InputError, match=r"t.csv.launches:4: segsize 'x' is not an integer"):
        launch_tables.read_launch_tables(str(journal), "bcast")


def test_a_journal_is_parsed_once_within_shared_parses(tmp_path, monkeypatch):
    """A report asks the journal for its launches, probe_us and load_level: one parse within
    shared_parses(), a rewritten journal parsed again, and none kept outside the block."""
    journal = tmp_path / "t.csv.launches"
    lines = ["collective,comm_size,msg_size,algorithm,segsize,faninout,launch,median_us"]
    lines += [f"bcast,{p},{m},1,0,0,{k},{1 + p + m + k}" for p in (2, 4) for m in (1, 64)
              for k in (1, 2)]
    journal.write_text("\n".join(lines) + "\n")
    parses = []
    real = launch_tables.csvfile.parse
    monkeypatch.setattr(launch_tables.csvfile, "parse", lambda *a: parses.append(1) or real(*a))
    with launch_tables.shared_parses():
        first = launch_tables.read_launch_tables(str(journal), "bcast")
        assert launch_tables.read_launch_tables(str(journal), "bcast", "probe_us") == {}
        assert len(parses) == 1
        journal.write_text("\n".join(lines).replace(",1,0,0,1,", ",1,0,0,3,") + "\n")
        again = launch_tables.read_launch_tables(str(journal), "bcast")
        assert len(parses) == 2 and sorted(first) == [1, 2] and sorted(again) == [2, 3]
    launch_tables.read_launch_tables(str(journal), "bcast")
    launch_tables.read_launch_tables(str(journal), "bcast")
    assert len(parses) == 4
