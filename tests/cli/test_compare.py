"""`collsel compare`: one table's exact decisions scored on another's times."""
import json

from helpers import collsel


def write(path, times):
    """Two methods (1, 6) and the default (0) at P=2,4 x m=1,1024; times[(p, m, alg)]."""
    with open(path, "w") as f:
        f.write("collective,comm_size,msg_size,algorithm,segsize,time_us\n")
        f.writelines(f"bcast,{p},{m},{a},0,{t}\n" for (p, m, a), t in sorted(times.items()))
    return path


def grid(slow_in_cell=None, factor=1.0):
    out = {}
    for p in (2, 4):
        for m in (1, 1024):
            out[(p, m, 1)] = 10.0
            out[(p, m, 6)] = 20.0
            out[(p, m, 0)] = 15.0
    if slow_in_cell:
        out[slow_in_cell + (1,)] = 10.0 * factor
    return out


def test_decisions_of_a_scored_on_b(tmp_path):
    # In B, algorithm 1 is 3x slower at (4, 1024): A's choice there costs (30/20 - 1) = 50 %.
    a = write(tmp_path / "a.csv", grid())
    b = write(tmp_path / "b.csv", grid((4, 1024), 3.0))
    r = collsel("compare", a, b, "--collective", "bcast", "--no-defer", "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    ab = doc["A->B"]
    assert ab["tree"]["cells"] == 4 and ab["tree"]["max"] == 50.0
    assert abs(ab["tree"]["mean"] - 12.5) < 1e-9
    assert ab["tree"]["in_tie_set"] == 3            # no tie source: only B's best is tied
    assert ab["default"]["cells"] == 4               # 15 vs 10 (and vs 20 where 1 is slow)
    # B's best at (4, 1024) is 6 (20 < 30), which costs 100 % in A: mean 25 % over 4 cells
    assert doc["B->A"]["tree"]["mean"] == 25.0
    r2 = collsel("compare", a, b, "--collective", "bcast", "--no-defer", "--tolerance", "60",
                 "--format", "json")
    assert json.loads(r2.stdout)["A->B"]["tree"]["in_tie_set"] == 4


def test_needs_two_tables(tmp_path):
    a = write(tmp_path / "a.csv", grid())
    r = collsel("compare", a, "--collective", "bcast")
    assert r.returncode == 2 and "exactly two tables" in r.stderr
