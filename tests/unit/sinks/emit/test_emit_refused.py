"""A method Open MPI refuses at a P defers there (core.mpi.fallbacks.refused): one rule in `collsel
query`, the rules files and the C targets.

The table (alltoall at P = 2, 4, 8) makes two_proc (5) the fastest at P = 2 and pairwise (2)
elsewhere; the tree's P = 2 cell spans P = 3, where Open MPI 4.1.4 fails two_proc
(MPI_ERR_UNSUPPORTED_OPERATION, coll_base_alltoall.c:540-542). Every consumer must keep two_proc
at P = 2 and answer algorithm 0 (the MPI's own decision) at P = 3 and 1. On Debian's Open MPI:
tests/integration/test_two_proc_rules_in_ompi.py.
"""
import json
import subprocess

import numpy as np
import pytest

from collsel import cli
from collsel.core.mpi import fallbacks
from collsel.core.trees import treefile
from collsel.sinks.emit import ompi_rules, ompi_rules_reader, targets

from helpers import CFLAGS, DRIVER
from test_emit_defer import run, write

COLL = "alltoall"
TWO = 5           # two_proc
OTHER = 2         # pairwise
M_VALUES = (64, 65536)


def two_proc_table(path, collective=COLL, two=TWO, other=OTHER):
    """two_proc fastest at P = 2, `other` at 4 and 8 (two_proc rows there would be dropped:
    the call fails), the MPI's default (0) slowest."""
    rows = [f"# collective={collective}", "collective,comm_size,msg_size,algorithm,segsize,time_us"]
    for p in (2, 4, 8):
        for m in M_VALUES:
            times = {0: 50.0, other: 20.0} | ({two: 10.0} if p == 2 else {})
            rows += [f"{collective},{p},{m},{a},0,{t + m / 1000:.3f}" for a, t in times.items()]
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.fixture(scope="module")
def tree_path(tmp_path_factory):
    out = tmp_path_factory.mktemp("two_proc")
    assert cli.main(["build", str(two_proc_table(out / "t.csv")), "--collective", COLL,
                     "--out", str(out / "build")]) == 0
    path = out / "build" / "tree.json"
    loaded = treefile.load(path)
    # the bug's premise: the tree's P = 2 cell spans P = 3 and its leaf names two_proc
    p_axis = loaded.axes[0]
    assert p_axis.cell_of(3) == p_axis.cell_of(2) == 0
    grid = loaded.tree.method_grid(tuple(len(a.values) for a in loaded.axes))
    assert {loaded.methods[i].algorithm for i in grid[0]} == {TWO}
    return path


# (P, m) -> the algorithm every consumer must answer
POINTS = {(1, 64): 0, (2, 64): TWO, (2, 65536): TWO, (3, 64): 0, (3, 65536): 0,
          (4, 64): OTHER, (8, 65536): OTHER, (1000, 64): OTHER}


def want(points=POINTS):
    return [f"{a} 0 0" for a in points.values()]


def test_the_rule_and_its_vectorised_form():
    entry = fallbacks.refusal("alltoall", 5, 3)
    assert entry.condition.startswith("P != 2") and entry.runs is None
    assert fallbacks.refusal("alltoall", 5, 2) is None
    assert fallbacks.refusal("alltoall", 2, 3) is None          # pairwise runs at any P
    assert fallbacks.refusal("bcast", 5, 3) is None             # bcast 5 is not two_proc
    got = fallbacks.refused("barrier", [5, 5, 5, 1, 0], [1, 2, 3, 3, 3])
    assert got.tolist() == [True, False, True, False, False]
    assert fallbacks.refusal_edges("allgather", {6, 1}) == [2, 3]
    assert fallbacks.refusal_edges("allgather", {1}) == []


def test_query_defers_at_p_3_and_says_why(tree_path, capsys):
    assert cli.main(["query", str(tree_path), "--comm-size", "3", "--msg-size", "64"]) == 0
    assert capsys.readouterr().out == (
        "P=3 m=64: defer (Open MPI's default) (alg 0, seg 0, fan 0) (two_proc fails at P = 3: "
        "P != 2 (MPI_ERR_UNSUPPORTED_OPERATION), coll_base_alltoall.c:540-542)\n")
    assert cli.main(["query", str(tree_path), "--comm-size", "2", "--msg-size", "64"]) == 0
    assert capsys.readouterr().out == "P=2 m=64: two_proc (alg 5, seg 0, fan 0)\n"
    points = tree_path.parent / "points"
    points.write_text("".join(f"{p} {m}\n" for p, m in POINTS))
    assert cli.main(["query", str(tree_path), "--points", str(points), "--ids"]) == 0
    assert capsys.readouterr().out.splitlines() == want()


def test_an_mpich_tree_is_not_guarded():
    """Open MPI's refusals are of Open MPI's ids: an MPICH tree's 5 at P = 3 stays."""
    doc = json.loads(DOC_TEMPLATE)
    doc["algorithm_family"] = "mpich"
    loaded = treefile.LoadedTree(doc, "mpich.json")
    assert not loaded.refusable
    assert [loaded.methods[i].algorithm for i in loaded.decide([[3], [64]])] == [TWO]


DOC_TEMPLATE = json.dumps({
    "format": "collsel-tree", "version": 1, "collective": "alltoall",
    "build": {"split": "balanced", "leaf": "majority", "max_depth": None, "threshold": None},
    "axes": [{"name": "comm_size", "kind": "linear", "values": [2, 4], "labels": ["2", "4"],
              "cuts": [4]},
             {"name": "msg_size", "kind": "log2", "values": [64], "labels": ["64"],
              "cuts": []}],
    "methods": [{"algorithm": 5, "segsize": 0, "faninout": 0, "name": "x"}],
    "nodes": {"first_child": [-1], "split": [[-2], [-2]], "method": [0], "depth": [0]}})


def _ids(rules, coll_id, points):
    return [" ".join(map(str, rules.decide(coll_id, p, m)[:3])) for p, m in points]


@pytest.mark.parametrize("comm_sizes", [None, (1, 4)])
def test_rules_files_keep_two_proc_at_2_and_defer_at_3(tree_path, comm_sizes):
    loaded = treefile.load(tree_path)
    options = targets.EmitOptions(ompi_comm_sizes=comm_sizes)
    classic = targets.emit("ompi-rules", [loaded], options)
    text = classic.files["rules.conf"]
    rules = ompi_rules_reader.read("rules.conf", text.encode(), (4, 1, 4))
    assert not rules.errors
    coll_id = ompi_rules_reader.COLLECTIVE_IDS[COLL]
    assert _ids(rules, coll_id, POINTS) == want()
    assert "2 1  # P 2..2: 1 message rule(s)" in text and "# P 3..3" in text
    document = json.loads(targets.emit("ompi-json", [loaded], options).files["rules.json"])
    assert [" ".join(map(str, ompi_rules.json_lookup(document, COLL, p, m)))
            for p, m in POINTS] == want()
    assert any("two_proc (alg 5) defers where Open MPI fails it, at P != 2" in n
               for n in classic.notes)


def test_check_rules_at_p_3_gives_0_and_agrees_with_the_tree(tree_path, tmp_path, capsys):
    out = tmp_path / "rules.conf"
    assert cli.main(["emit", str(tree_path), "--target", "ompi-rules", "--out", str(out)]) == 0
    capsys.readouterr()
    for p, alg in ((3, 0), (2, TWO)):
        assert cli.main(["check-rules", str(out), "--collective", COLL, "--query", str(p), "64",
                         "--ids"]) == 0
        assert capsys.readouterr().out.splitlines()[-1] == f"{alg} 0 0"
    assert cli.main(["check-rules", str(out), "--tree", str(tree_path)]) == 0
    assert "the file decides as the tree on 6 of 6 grid points" in capsys.readouterr().out


@pytest.mark.parametrize("target", ["c", "c-fast"])
def test_c_targets_return_0_at_p_3(tree_path, target, tmp_path):
    loaded = treefile.load(tree_path)
    result = targets.emit(target, [loaded], targets.EmitOptions(prefix="t"))
    out = write(result.files, tmp_path / target)
    exe = out / "decide"
    subprocess.run(["gcc", *CFLAGS, "-DDECIDE=t_decide", f"-I{out}", str(DRIVER),
                    str(out / "decision.c"), "-o", str(exe)], check=True)
    assert run(exe, POINTS) == want()
    # and everywhere as `collsel query` (LoadedTree.decide) decides
    pts = [(int(p), int(m)) for p in range(1, 20) for m in (0, 64, 1000, 65536, 2**40)]
    idx = loaded.decide([np.array([p for p, _ in pts]), np.array([m for _, m in pts])])
    assert run(exe, pts) == [f"{loaded.methods[i].algorithm} 0 0" for i in idx.tolist()]


def test_dec_fixed_guards_the_leaf(tree_path):
    loaded = treefile.load(tree_path)
    (code,) = targets.emit("ompi-dec-fixed", [loaded]).files.values()
    guard = code.index("if (comm_size != 2) {")
    assert f"return {TWO};" in code[guard:].split("\n")[3]
