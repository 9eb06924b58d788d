"""`collsel emit --target mpich-json` of a tree with the third axis ppn: comm_avg_ppn<=N tests
between the comm_size and the message-size tests, each chain ending in comm_size=any (MPICH 4.0
has no comm_avg_ppn=any). Checked with MPICH's first-match walk (test_mpich_json.search, which
reads comm_avg_ppn<=N as csel.c does: P <= N x nodes) on every layout of P ranks on equal nodes
and on unequal ones (MPICH then takes ceil(P / nodes)); a 2-D tree and a ppn that never changes
the decision give the 2-D file."""
import json
import math
from pathlib import Path

import pytest

from collsel.core.trees import treefile
from collsel.sinks.emit import mpich_json
from test_mpich_json import BASE, run, search

DATA = Path(__file__).parents[3] / "data"
TABLES = {c: DATA / f"ppn-mpich-{c}.csv" for c in ("bcast", "reduce")}


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    path = tmp_path_factory.mktemp("mpich_ppn") / "generic.json"
    path.write_text(json.dumps(BASE))
    return path


def build(table, collective, out, *extra):
    r = run("build", table, "--collective", collective, "--out", out, *extra)
    assert r.returncode == 0, r.stderr
    return out / "tree.json"


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    d = tmp_path_factory.mktemp("mpich_ppn_trees")
    return {c: build(TABLES[c], c, d / c, "--z", "ppn") for c in TABLES}


@pytest.fixture(scope="module")
def emitted(trees, base, tmp_path_factory):
    out = tmp_path_factory.mktemp("mpich_ppn_out") / "sel.json"
    r = run("emit", "--target", "mpich-json", trees["bcast"], trees["reduce"],
            "--mpich-base", base, "--out", out)
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text()), r.stdout


def expected(loaded, p, m, ppn, count):
    """The MPICH function the tree names at (P, m, ppn), with the reduce_scatter_gather guard."""
    names = mpich_json.leaf_names(loaded, {}, "test")
    name = names[loaded.methods[int(loaded.decide([[p], [m], [ppn]])[0])].algorithm]
    if name == mpich_json.REDUCE_SCATTER_GATHER and count < 1 << (p.bit_length() - 1):
        return "MPIR_Reduce_intra_binomial"
    return name


def sizes(loaded):
    return sorted({max(v + d, 0) for v in loaded.axes[1].values for d in (-1, 0, 1)}
                  | {2**31 - 1})


def test_the_tables_decisions_change_with_ppn(trees):
    """The premise of these tests and of the integration test: ppn changes some decision."""
    for c, path in trees.items():
        loaded = treefile.load(path)
        differ = [(p, m) for p in (2, 4) for m in loaded.axes[1].values
                  if loaded.decide([[p], [m], [1]])[0] != loaded.decide([[p], [m], [2]])[0]]
        assert differ, c


def test_every_layout_selects_the_trees_method(trees, emitted):
    doc, _ = emitted
    for c, path in trees.items():
        loaded = treefile.load(path)
        sub = doc[f"collective={c}"]
        for p in range(2, 25):
            for nodes in range(1, p + 1):
                for m in sizes(loaded):
                    count = max(m // 4, 1) if c == "reduce" else m
                    # MPICH tests P <= N x nodes: the ppn of ceil(P / nodes) on unequal nodes
                    want = expected(loaded, p, m, math.ceil(p / nodes), count)
                    assert search(sub, p, m, count, nodes=nodes) == want, (c, p, nodes, m)


def test_structure_ppn_between_comm_size_and_message_size(emitted):
    doc, notes = emitted
    for c in TABLES:
        intra = doc[f"collective={c}"]["comm_type=intra"]
        assert list(intra)[-1] == "comm_size=any"
        levels = 0
        for block in intra.values():
            keys = list(block)
            if keys[0].startswith("comm_avg_ppn<="):
                levels += 1
                assert keys[-1] == mpich_json.PPN_ELSE
                bounds = [int(k.split("<=")[1]) for k in keys[:-1]]
                assert all(k.startswith("comm_avg_ppn<=") for k in keys[:-1])
                assert bounds == sorted(set(bounds)) and bounds[0] >= 1
                chains = [block[k] for k in keys]
            else:
                chains = [block]
            for chain in chains:
                assert list(chain)[-1] == "avg_msg_size=any"
        assert levels, c
        assert f"{c}: ppn as comm_avg_ppn<=N" in notes and "ceil(P / nodes)" in notes


def test_a_ppn_that_never_matters_gives_the_2d_file(tmp_path, base):
    """One ppn value (or a decision the same at every ppn): no comm_avg_ppn level, the bytes of
    the tree without the third axis."""
    lines = TABLES["bcast"].read_text().splitlines()
    one = [x for x in lines if x.startswith("#") or x.startswith("collective,")
           or x.endswith(",1")]
    with_ppn = tmp_path / "one-ppn.csv"
    with_ppn.write_text("\n".join(one) + "\n")
    without = tmp_path / "no-ppn.csv"
    without.write_text("\n".join(x if x.startswith("#") else x.rsplit(",", 1)[0]
                                 for x in one) + "\n")
    outs = []
    for name, table, extra in (("3d", with_ppn, ["--z", "ppn"]), ("2d", without, [])):
        tree = build(table, "bcast", tmp_path / name, *extra)
        outs.append(tmp_path / f"{name}.json")
        r = run("emit", "--target", "mpich-json", tree, "--mpich-base", base, "--out", outs[-1])
        assert r.returncode == 0, r.stderr
    assert len(treefile.load(tmp_path / "3d" / "tree.json").axes) == 3
    assert outs[0].read_bytes() == outs[1].read_bytes()
    assert "comm_avg_ppn" not in outs[1].read_text()


def write_3d(path, zs, column="ppn"):
    """bcast: binomial best at the lowest z value, scatter_ring_allgather above it."""
    rows = [f"bcast,{p},{m},{alg},0,{t},{z}" for p in (2, 4) for m in (8, 65536)
            for i, z in enumerate(zs)
            for alg, t in (("binomial", 1 if i == 0 else 3), ("scatter_ring_allgather", 2))]
    path.write_text("# algorithm_family=mpich\n"
                    f"collective,comm_size,msg_size,algorithm,segsize,time_us,{column}\n"
                    + "\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("zs,column,message", [
    (("bynode", "byslot"), "ppn", "third axis 'ppn' (categories): MPICH's selection can test "
     "only processes per node"),
    ((1, 2), "nodes", "third axis 'nodes' (numbers)"),
    ((0, 1), "ppn", "MPICH tests comm_avg_ppn<=N, N >= 1"),
])
def test_what_mpich_cannot_test_is_one_line_exit_2(tmp_path, base, zs, column, message):
    tree = build(write_3d(tmp_path / "t.csv", zs, column), "bcast", tmp_path / "t", "--z",
                 column)
    out = tmp_path / "o.json"
    r = run("emit", "--target", "mpich-json", tree, "--mpich-base", base, "--out", out)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and message in r.stderr, r.stderr
    assert not out.exists()


def test_thresholds_are_the_cuts_minus_one(tmp_path, base):
    """ppn 1 and 4 measured: cut (1 + 4) // 2 + 1 = 3, so ppn 1-2 take the ppn-1 decision."""
    tree = build(write_3d(tmp_path / "t.csv", (1, 4)), "bcast", tmp_path / "t", "--z", "ppn")
    out = tmp_path / "o.json"
    assert run("emit", "--target", "mpich-json", tree, "--mpich-base", base,
               "--out", out).returncode == 0
    intra = json.loads(out.read_text())["collective=bcast"]["comm_type=intra"]
    assert list(intra) == ["comm_size=any"]
    assert list(intra["comm_size=any"]) == ["comm_avg_ppn<=2", mpich_json.PPN_ELSE]
    binomial, ring = "MPIR_Bcast_intra_binomial", "MPIR_Bcast_intra_scatter_ring_allgather"
    for p, nodes, want in ((4, 2, binomial), (6, 3, binomial), (6, 2, ring), (5, 2, ring),
                           (3, 1, ring), (2, 2, binomial)):
        assert search(intra, p, 8, 8, nodes=nodes) == want, (p, nodes)
