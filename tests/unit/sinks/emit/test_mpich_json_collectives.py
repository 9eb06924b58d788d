"""`collsel emit --target mpich-json` for every collective: one file with all 14 trees merged
into a base holding every collective MPICH selects; per collective the size csel compares (m,
P x m, or none), the guards MPICH 4.0.2's algorithms need, and what the notes count. The walk
is tests/mpich_walk.py (MPICH's first-match csel semantics)."""
import contextlib
import io
import json
import pathlib
import types

import pytest

from collsel import cli
from collsel.core.mpi import algorithms
from collsel.core.trees import treefile
from collsel.sinks.emit import mpich_csel, mpich_json
from mpich_walk import csel_walk, mpich_table

PS, MS = (2, 3, 4), (8, 4096, 262144)
UNTUNED = ("gatherv", "scatterv", "alltoallw", "ibcast")


def run(*args):
    """collsel in this process (start-up costs seconds on a loaded machine)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in args])
    return types.SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


def last_function(collective):
    """MPICH 4.0.2's last algorithm function of the collective: the base is 4.0.2's (a 5.0
    name in it would make it 5.0's, whose selection lacks barrier dissemination)."""
    return mpich_csel.function(collective, algorithms.MPICH_VERSIONS["4.0"][collective][-1])


def own(collective):
    """A base decision naming MPICH's first algorithm of the collective (exscan, as in
    MPICH's file, without comm_type; a comm_size<N the emitter must rewrite)."""
    first = last_function(collective)
    if collective == "exscan":
        return {f"algorithm={first}": {}}
    return {"comm_type=intra": {"comm_size<3": {f"algorithm={first}": {}},
                                "comm_size=any": {f"algorithm={first}": {}}},
            "comm_type=inter": {f"algorithm=MPIR_{collective.capitalize()}_inter_x": {}}}


BASE = {**{f"collective={c}": own(c) for c in algorithms.MPICH_ALGORITHMS},
        **{f"collective={c}": {"comm_type=intra": {f"algorithm=MPIR_{c.capitalize()}_y": {}}}
           for c in UNTUNED}}


def table(collective, best):
    return mpich_table(collective, best, PS, MS, release="4.0")


def rotating(i, j, names):
    return names[(2 * i + j) % len(names)]


@pytest.fixture(scope="module")
def emitted(tmp_path_factory):
    d = tmp_path_factory.mktemp("mpich_all")
    (d / "base.json").write_text(json.dumps(BASE))
    trees = {}
    for c in algorithms.MPICH_ALGORITHMS:
        (d / f"{c}.csv").write_text(table(c, rotating))
        r = run("build", d / f"{c}.csv", "--collective", c, "--max-depth", "4", "--out", d / c)
        assert r.returncode == 0, r.stderr
        trees[c] = d / c / "tree.json"
    out = d / "sel.json"
    r = run("emit", "--target", "mpich-json", *trees.values(), "--mpich-base", d / "base.json",
            "--out", out)
    assert r.returncode == 0, r.stderr
    return {"trees": trees, "doc": json.loads(out.read_text()), "stdout": r.stdout, "dir": d}


def test_one_file_every_base_collective_kept_in_order_untuned_ones_copied(emitted):
    doc = emitted["doc"]
    assert list(doc) == list(BASE)
    for c in UNTUNED:
        assert doc[f"collective={c}"] == BASE[f"collective={c}"]
    for c in algorithms.MPICH_ALGORITHMS:
        sub = doc[f"collective={c}"]
        assert list(sub)[0] == "comm_type=intra"
        inter = BASE[f"collective={c}"].get("comm_type=inter")
        assert sub.get("comm_type=inter") == inter        # exscan: none in the base, none here


@pytest.mark.parametrize("collective", sorted(algorithms.MPICH_ALGORITHMS))
def test_each_collective_decides_as_its_tree_in_the_size_csel_compares(emitted, collective):
    """Every P from 2 to 6 and m on both sides of each cut: the walk reaches the tree's
    algorithm, or (where csel tests no size) one the tree picks at that P, or a guard's
    fallback where the guard fails for this call."""
    loaded = treefile.load(emitted["trees"][collective])
    sub = emitted["doc"][f"collective={collective}"]
    names = mpich_json.leaf_names(loaded, {}, collective)
    cuts = [int(c) for c in loaded.axes[1].cuts]
    ms = sorted({1, *MS, *cuts, *(c - 1 for c in cuts)} - {0}) if collective != "barrier" \
        else [0]
    message = mpich_csel.MESSAGE[collective]
    for p in range(2, 5):      # exact up to the largest measured P
        want = [names[loaded.methods[int(k)].algorithm]
                for k in loaded.decide([[p] * len(ms), ms])]
        for m, chosen in zip(ms, want):
            got = csel_walk(sub, collective, p, m)
            if message is None:
                assert got in set(want) or mpich_csel.guard(collective, got)[0]
            elif got != chosen:
                conditions, fallback = mpich_csel.guard(collective, chosen)
                assert conditions, (collective, p, m, chosen, got)


def test_sizes_scaled_by_p_where_csel_sums_over_ranks(emitted):
    """allgather: total_msg_size = P x m, so the tree's cut c is P x c - 1 in the P block;
    bcast: avg_msg_size = m, cut c is c - 1 in every block; barrier: no size key at all."""
    loaded = treefile.load(emitted["trees"]["allgather"])
    cut = int(loaded.axes[1].cuts[0])
    intra = emitted["doc"]["collective=allgather"]["comm_type=intra"]
    assert list(intra)[:2] == ["comm_size<=2", "comm_size<=3"]
    for p in (2, 3):
        assert f"total_msg_size<={p * cut - 1}" in json.dumps(intra[f"comm_size<={p}"])
    bcast = json.dumps(emitted["doc"]["collective=bcast"]["comm_type=intra"])
    cut = int(treefile.load(emitted["trees"]["bcast"]).axes[1].cuts[0])
    assert f"avg_msg_size<={cut - 1}" in bcast and "total_msg_size" not in bcast
    barrier = json.dumps(emitted["doc"]["collective=barrier"])
    assert "msg_size" not in barrier
    assert "avg_msg_size" not in json.dumps(emitted["doc"]["collective=reduce_scatter"])


def test_guards_fall_back_to_mpichs_own_decision_or_its_usual_fallback(tmp_path):
    """alltoall pairwise everywhere: MPI_IN_PLACE runs MPICH's own decision (the base's, its
    comm_size<3 read as MPICH does); allreduce reduce_scatter_allgather: a user op or a count
    below pof2 runs recursive_doubling, as MPICH's own file does."""
    (tmp_path / "base.json").write_text(json.dumps(BASE))
    trees = []
    for c, name in (("alltoall", "pairwise"), ("allreduce", "reduce_scatter_allgather"),
                    ("reduce_scatter", "recursive_halving")):
        (tmp_path / f"{c}.csv").write_text(table(c, lambda i, j, names, n=name: n))
        assert run("build", tmp_path / f"{c}.csv", "--collective", c, "--out",
                   tmp_path / c).returncode == 0
        trees.append(tmp_path / c / "tree.json")
    out = tmp_path / "o.json"
    r = run("emit", "--target", "mpich-json", *trees, "--mpich-base", tmp_path / "base.json",
            "--out", out)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    a2a, own_a2a = doc["collective=alltoall"], last_function("alltoall")
    assert csel_walk(a2a, "alltoall", 4, 64) == "MPIR_Alltoall_intra_pairwise"
    assert csel_walk(a2a, "alltoall", 4, 64, in_place=True) == own_a2a
    ar = doc["collective=allreduce"]
    assert csel_walk(ar, "allreduce", 4, 64) == "MPIR_Allreduce_intra_reduce_scatter_allgather"
    for kwargs, m in (({"built_in": False}, 64), ({}, 3)):
        assert csel_walk(ar, "allreduce", 4, m, **kwargs) == \
            "MPIR_Allreduce_intra_recursive_doubling"
    rs = doc["collective=reduce_scatter"]
    assert csel_walk(rs, "reduce_scatter", 3, 64, commutative=False) == \
        last_function("reduce_scatter")
    assert "alltoall: pairwise guarded by MPICH 4.0.2's conditions" in r.stdout


def test_notes_count_what_the_file_cannot_express(emitted):
    out = emitted["stdout"]
    assert "scan: MPICH's selection tests no message size for scan" in out
    assert "barrier: MPICH's selection tests no message size" in out
    assert "allgather: m as total_msg_size = P x m (csel.c), one comm_size block per P up to 4" \
        in out
    assert "gather: csel.c's total_msg_size is count x P without the type size" in out


def test_a_collective_mpich_does_not_select_is_refused(tmp_path):
    """gatherv has MPICH names but collsel measures no gatherv: no tree can name it; a tree of
    a collective the base lacks is refused, nothing written."""
    base = {k: v for k, v in BASE.items() if k != "collective=scan"}
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "scan.csv").write_text(table("scan", rotating))
    assert run("build", tmp_path / "scan.csv", "--collective", "scan", "--out",
               tmp_path / "scan").returncode == 0
    out = tmp_path / "o.json"
    r = run("emit", "--target", "mpich-json", tmp_path / "scan" / "tree.json", "--mpich-base",
            tmp_path / "base.json", "--out", out)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "no collective=scan to replace" in r.stderr and not out.exists()


def test_build_of_a_native_mpich_table_with_an_unusable_method(tmp_path):
    """A real MPICH allgather sweep (P = 2, 3, 4; recursive_doubling refused at P = 3, so no
    method is measured in every cell): build says so instead of failing, and the tree emits."""
    table = pathlib.Path(__file__).parents[3] / "data" / "mpich" / "allgather-p234.csv"
    assert "# unusable.3.1=8:3:0:0" in table.read_text()
    r = run("build", table, "--collective", "allgather", "--out", tmp_path / "t")
    assert r.returncode == 0, r.stderr
    assert "no fixed method measured in every cell" in r.stdout + r.stderr
    (tmp_path / "base.json").write_text(json.dumps(BASE))
    assert run("emit", "--target", "mpich-json", tmp_path / "t" / "tree.json", "--mpich-base",
               tmp_path / "base.json", "--out", tmp_path / "o.json").returncode == 0
