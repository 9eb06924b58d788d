"""`collsel compare --tree`: a deployed tree scored on fresh tables, beside the MPI's default
and --peer selections (algorithm-0 rows of another selection's sweep)."""
import json

from pytest import approx

from helpers import collsel


def write(path, times, collective="bcast"):
    """times[(p, m, alg)] as a canonical table."""
    with open(path, "w") as f:
        f.write("collective,comm_size,msg_size,algorithm,segsize,time_us\n")
        f.writelines(f"{collective},{p},{m},{a},0,{t}\n" for (p, m, a), t in sorted(times.items()))
    return path


def grid(sizes=(2, 4), slow=None, default=15.0):
    """Algorithm 1 at 10 µs, 6 at 20, the default (0) at `default`; `slow` = {(p, m, alg): t}."""
    out = {}
    for p in sizes:
        for m in (1, 1024):
            out.update({(p, m, 1): 10.0, (p, m, 6): 20.0, (p, m, 0): default})
    out.update(slow or {})
    return out


def tree_of(tmp_path, name, times, *flags):
    table = write(tmp_path / f"{name}.csv", times)
    r = collsel("build", table, "--collective", "bcast", *flags, "--out", tmp_path / name)
    assert r.returncode == 0, r.stderr
    return tmp_path / name / "tree.json"


def scored(tree, *tables_and_flags):
    r = collsel("compare", "--tree", tree, *tables_and_flags, "--format", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_tree_default_and_peer_on_fresh_cells(tmp_path):
    tree = tree_of(tmp_path, "train", grid())              # algorithm 1 everywhere
    # fresh: algorithm 1 is 3x slower at (4, 1024), where algorithm 6 (20) is the fastest forced
    # method (the reference, core.maps.cell_cost) and the default (15) beats it: the tree pays 50 %
    fresh = write(tmp_path / "fresh.csv", grid(slow={(4, 1024, 1): 30.0}))
    # the peer has three of the four cells: 12/10, 15/20, 9/10 -> 20 %, -25 %, -10 %
    peer = write(tmp_path / "peer.csv", {(2, 1, 0): 12.0, (4, 1024, 0): 15.0, (4, 1, 0): 9.0})
    doc = scored(tree, fresh, "--peer", f"tuner={peer}")
    assert doc["tree"] == {"cells": 4, "mean": 12.5, "median": 0.0, "max": 50.0,
                           "unscored_choices": 0}
    # the default: 15/10 at three cells, 15/20 at (4, 1024)
    assert doc["default"] == {"cells": 4, "mean": 31.25, "median": 50.0, "max": 50.0}
    peer_figures = doc["peers"]["tuner"]
    assert peer_figures == approx({"cells": 3, "mean": -5.0, "median": -10.0, "max": 20.0})
    # pooled over two fresh tables: the same cells twice
    assert scored(tree, fresh, fresh)["tree"]["cells"] == 8
    text = collsel("compare", "--tree", tree, fresh, "--peer", f"tuner={peer}").stdout
    assert "the tree: penalty mean 12.50%, median 0.00%, max 50.00% on 4 cells" in text
    assert "Open MPI's default: penalty mean 31.25%" in text
    assert "peer tuner: penalty mean -5.00%, median -10.00%, max 20.00% on 3 cells" in text


def test_beyond_defers_to_the_fresh_default(tmp_path):
    # fresh runs at P = 8 too, where the default is 4x the best: a tree that defers beyond its
    # largest measured P (4) pays 300 % there, one that keeps its edge decision nothing
    fresh = write(tmp_path / "fresh.csv", grid(sizes=(2, 4, 8), slow={(8, 1, 0): 40.0,
                                                                       (8, 1024, 0): 40.0}))
    keep = tree_of(tmp_path, "keep", grid(), "--beyond", "keep")
    defer = tree_of(tmp_path, "defer", grid(), "--beyond", "defer")
    assert scored(keep, fresh)["tree"]["max"] == 0.0
    d = scored(defer, fresh)["tree"]
    assert d == approx({"cells": 6, "mean": 100.0, "median": 0.0, "max": 300.0,
                        "unscored_choices": 0})


def test_a_deferring_leaf_takes_the_fresh_default_time(tmp_path):
    tree = tree_of(tmp_path, "train", grid(default=5.0))    # the default is best everywhere
    fresh = write(tmp_path / "fresh.csv", grid(default=12.0))
    assert scored(tree, fresh)["tree"]["mean"] == approx(20.0)      # 12 / 10


def refused(*args):
    r = collsel("compare", *args)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    return r.stderr


def test_refusals(tmp_path):
    tree = tree_of(tmp_path, "train", grid())
    fresh = write(tmp_path / "fresh.csv", grid())
    reduce_table = write(tmp_path / "reduce.csv", grid(), collective="reduce")
    err = refused("--tree", tree, reduce_table)
    assert "the tree decides openmpi bcast, but" in err and "holds openmpi reduce" in err
    no_baseline = write(tmp_path / "nobase.csv", {(2, 1, 1): 10.0})
    assert "no algorithm-0 rows of bcast" in refused("--tree", tree, fresh, "--peer",
                                                     f"x={no_baseline}")
    assert "give NAME=TABLE" in refused("--tree", tree, fresh, "--peer", str(no_baseline))
    assert "--peer needs --tree" in refused(fresh, fresh, "--peer", f"x={fresh}")
    assert "give one or the other" in refused("--tree", tree, fresh, "--fresh")


def test_the_exact_tree_scores_as_compare_a_b(tmp_path):
    # the exact tree of A asked at B's cells decides A's best per cell: compare A B's figures
    a_times = grid(slow={(2, 1, 1): 25.0, (4, 1, 0): 8.0})
    tree = tree_of(tmp_path, "a", a_times)
    a = tmp_path / "a.csv"
    b = write(tmp_path / "b.csv", grid(slow={(2, 1, 6): 11.0, (4, 1, 0): 14.0, (4, 1024, 1): 30.0}))
    r = collsel("compare", a, b, "--collective", "bcast", "--format", "json")
    a_on_b = json.loads(r.stdout)["A->B"]["tree"]
    mine = scored(tree, b)["tree"]
    assert mine["mean"] > 0 and {k: mine[k] for k in ("cells", "mean", "median", "max")} == \
        approx({k: a_on_b[k] for k in ("cells", "mean", "median", "max")})


def test_a_third_axis_must_match(tmp_path):
    table = tmp_path / "z.csv"
    with open(table, "w") as f:
        f.write("collective,comm_size,msg_size,algorithm,segsize,ppn,time_us\n")
        f.writelines(f"bcast,{p},{m},{a},0,{z},{t}\n" for (p, m, a), t in sorted(grid().items())
                     for z in (1, 2))
    r = collsel("build", table, "--z", "ppn", "--out", tmp_path / "oct")
    assert r.returncode == 0, r.stderr
    tree = tmp_path / "oct" / "tree.json"
    assert scored(tree, table, "--z", "ppn")["tree"]["cells"] == 8
    err = refused("--tree", tree, table)
    assert "the tree decides on comm_size, msg_size, ppn" in err and "give --z ppn" in err
    flat = tree_of(tmp_path, "flat", grid())
    assert "drop --z" in refused("--tree", flat, table, "--z", "ppn")
