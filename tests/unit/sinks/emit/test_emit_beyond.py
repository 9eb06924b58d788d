"""tree.json's `beyond` (issue 30 item 2): past the largest measured P the tree defers to the
MPI's default, in `collsel query` and every deployed form.

One hand-made tree (tests/defer_tree.py, P values up to 16, `beyond` {"above": 16}): at P = 16
and m < 2048 it picks binomial / in-order binary (FORCED[...][1]), at P = 17 it defers. Each
target's artefact is checked with its own reader or compiler, as test_emit_defer.py does:
compiled C, spliced dec_fixed, rules files read back as Open MPI reads them, the MPICH file
walked as csel walks it, the blob queried through the C runtime.
"""
import json
import subprocess

import pytest

from collsel import cli
from collsel.core.evaluate.recommendation import beyond_decision
from collsel.core.evaluate import model_selection
from collsel.core.trees import treefile
from collsel.core.evaluate.recommendation_figures import Edge
from collsel.sinks.emit import ompi_rules, ompi_rules_reader, targets

import defer_tree
from helpers import CFLAGS, DRIVER, recommendation_with
from mpich_walk import csel_walk
from test_emit_defer import query_tree, run, spliced_dec_fixed, write  # noqa: F401 (a fixture)
from test_mpich_json import BASE

ABOVE = 16
# P at, below and past `above`, and m on both sides of the tree's m split (2048)
POINTS = [(p, m) for p in (1, 2, 5, 6, 15, ABOVE, ABOVE + 1, ABOVE + 2, 1000, 2**31 - 1)
          for m in (0, 1, 2047, 2048, 65536, 2**31 - 1)]


@pytest.fixture(params=["bcast", "reduce"])
def tree(request, tmp_path):
    return treefile.load(defer_tree.write(tmp_path / "tree.json", request.param, ABOVE))


def want(loaded, pts=POINTS):
    out = [defer_tree.expected(loaded.collective, p, m, ABOVE) for p, m in pts]
    assert out[POINTS.index((ABOVE, 0))] != (0, 0, 0)      # the tree's choice at above ...
    assert out[POINTS.index((ABOVE + 1, 0))] == (0, 0, 0)  # ... and the defer past it
    return [" ".join(map(str, w)) for w in out]


def emit(target, loaded, **options):
    return targets.emit(target, [loaded], targets.EmitOptions(prefix="t", **options))


def test_beyond_loads_and_query_defers_past_above(tree, tmp_path, capsys):
    assert tree.beyond == treefile.Beyond(ABOVE)
    idx = tree.decide([[p for p, _ in POINTS], [m for _, m in POINTS]]).tolist()
    got = [" ".join(map(str, (tree.methods[i].algorithm, tree.methods[i].segsize,
                             tree.methods[i].faninout))) for i in idx]
    assert got == want(tree)
    path = defer_tree.write(tmp_path / "q.json", tree.collective, ABOVE)
    for p, alg in ((ABOVE, defer_tree.FORCED[tree.collective][1]), (ABOVE + 1, 0)):
        assert cli.main(["query", str(path), "--ids", "--comm-size", str(p), "--msg-size",
                         "0"]) == 0
        assert capsys.readouterr().out == f"{alg} 0 0\n"


def test_above_below_the_measured_p_is_refused(tmp_path, capsys):
    path = defer_tree.write(tmp_path / "tree.json", "bcast", ABOVE - 1)
    assert cli.main(["query", str(path), "--comm-size", "4", "--msg-size", "1"]) == 2
    err = capsys.readouterr().err
    assert err == (f"collsel: error: {path}: beyond.above: 15 is below the largest measured "
                   "comm_size (16); give at least it, or drop `beyond`\n")
    doc = defer_tree.document("bcast", ABOVE)
    doc["beyond"]["method"] = "keep"
    path.write_text(json.dumps(doc))
    assert cli.main(["query", str(path), "--comm-size", "4", "--msg-size", "1"]) == 2
    assert "beyond.method" in capsys.readouterr().err


def test_a_tree_without_beyond_is_unchanged(tmp_path):
    loaded = treefile.load(defer_tree.write(tmp_path / "tree.json", "bcast"))
    assert loaded.beyond is None and len(loaded.methods) == 3
    assert loaded.decide([[ABOVE + 1], [0]]).tolist() == [2]     # the edge decision


@pytest.mark.parametrize("target", ["c", "c-fast"])
def test_c_returns_0_past_above(tree, target, tmp_path):
    result = emit(target, tree)
    out = write(result.files, tmp_path / target)
    assert f"except comm_size > {ABOVE}" in (out / "decision.h").read_text()
    exe = out / "decide"
    subprocess.run(["gcc", *CFLAGS, "-DDECIDE=t_decide", f"-I{out}", str(DRIVER),
                    str(out / "decision.c"), "-o", str(exe)], check=True)
    assert run(exe, POINTS) == want(tree)
    assert any(f"comm_size > {ABOVE} (tree.json `beyond`)" in n for n in result.notes)


def test_dec_fixed_calls_the_original_past_above(tree, tmp_path):
    exe = spliced_dec_fixed(emit("ompi-dec-fixed", tree), tree.collective, tmp_path)
    pts = [(p, m) for p, m in POINTS if m <= 2**31 - 1]
    assert run(exe, pts) == ["original" if w == "0 0 0" else w for w in want(tree, pts)]


def test_rules_files_end_with_an_algorithm_0_block_from_above_plus_1(tree):
    coll_id = ompi_rules_reader.COLLECTIVE_IDS[tree.collective]
    classic = emit("ompi-rules", tree).files["rules.conf"]
    assert f"{ABOVE + 1} 1  # P >= {ABOVE + 1}: 1 message rule(s)" in classic
    rules = ompi_rules_reader.read("rules.conf", classic.encode(), (4, 1, 4))
    assert not rules.errors
    # rules.decide: what check-rules scores (Open MPI's matching, algorithm 0 kept)
    assert [" ".join(map(str, rules.decide(coll_id, p, m)[:3])) for p, m in POINTS] == want(tree)
    document = json.loads(emit("ompi-json", tree).files["rules.json"])
    got = [" ".join(map(str, ompi_rules.json_lookup(document, tree.collective, p, m)))
           for p, m in POINTS]
    assert got == want(tree)


def test_rules_blocks_past_above_are_dropped(tree):
    """--ompi-comm-sizes with starts past above: the beyond block replaces them."""
    classic = emit("ompi-rules", tree, ompi_comm_sizes=(1, 8, 32)).files["rules.conf"]
    rules = ompi_rules_reader.read("rules.conf", classic.encode(), (4, 1, 4))
    coll_id = ompi_rules_reader.COLLECTIVE_IDS[tree.collective]
    assert not rules.errors and "# P >= 32" not in classic
    assert rules.decide(coll_id, 40, 0)[:3] == (0, 0, 0)


def test_mpich_json_sends_larger_p_to_mpichs_own_subtree(tmp_path):
    loaded = treefile.load(defer_tree.write(tmp_path / "tree.json", "bcast", ABOVE))
    result = emit("mpich-json", loaded, mpich_base=BASE, mpich_base_name="base.json",
                  mpich_map={"bcast": {1: "MPIR_Bcast_intra_scatter_ring_allgather"}})
    node = json.loads(result.files["mpich_selection.json"])["collective=bcast"]
    assert f"comm_size<={ABOVE}" in node["comm_type=intra"]
    own = BASE["collective=bcast"]
    names = {1: "MPIR_Bcast_intra_scatter_ring_allgather", 6: "MPIR_Bcast_intra_binomial"}
    pts = [(p, m) for p, m in POINTS if p >= 2 and p <= 4096]
    expect = [csel_walk(own, "bcast", p, m) if w == (0, 0, 0) else names[w[0]]
              for (p, m), w in zip(pts, (defer_tree.expected("bcast", p, m, ABOVE)
                                         for p, m in pts))]
    assert [csel_walk(node, "bcast", p, m) for p, m in pts] == expect
    # at P = 17, m = 0 the tree alone would pick binomial, MPICH's own scatter_ring_allgather
    assert csel_walk(node, "bcast", ABOVE + 1, 0) == "MPIR_Bcast_intra_scatter_ring_allgather"


def test_blob_is_format_3_and_the_runtime_defers_past_above(tree, query_tree, tmp_path):
    result = emit("blob", tree)
    blob = write(result.files, tmp_path) / "tree.bin"
    data = blob.read_bytes()
    assert data[4] == 3 and int.from_bytes(data[32:36], "little") == ABOVE
    got = [subprocess.run([str(query_tree), str(blob), str(p), str(m)], capture_output=True,
                          text=True, check=True).stdout.strip() for p, m in POINTS]
    assert got == want(tree)


def test_build_beyond_option_and_the_recommendations_edge_decision(tmp_path, capsys):
    def edge(beyond):
        return recommendation_with(edge=Edge(16, 4, 2.0, 2.0, 1.0, 1.0, 4, beyond))
    assert beyond_decision(None, None) == "keep"
    assert beyond_decision(None, edge(model_selection.EDGE_DEFER)) == "defer"
    assert beyond_decision(None, edge("keep the edge decision")) == "keep"
    assert beyond_decision("keep", edge(model_selection.EDGE_DEFER)) == "keep"
    table = tmp_path / "t.csv"
    table.write_text("collective,comm_size,msg_size,algorithm,segsize,time_us\n" + "".join(
        f"bcast,{p},{m},{a},0,{(1 + m / 1024) * (1 + (a == 6) * (p > 2))}\n"
        for p in (2, 4) for m in (1, 65536) for a in (0, 1, 6)))
    for flag, field in ((["--beyond", "defer"], {"above": 4, "method": "defer"}), ([], None)):
        out = tmp_path / ("d" if flag else "k")
        assert cli.main(["build", str(table), "--collective", "bcast", "--out", str(out),
                         *flag]) == 0
        printed = capsys.readouterr().out
        assert json.loads((out / "tree.json").read_text()).get("beyond") == field
        assert ("beyond P=4: defer to the MPI's default" in printed) == bool(flag)
    out = tmp_path / "r"
    assert cli.main(["build", str(table), "--collective", "bcast", "--recommend", "--beyond",
                     "defer", "--out", str(out)]) == 0
    assert "beyond P=4: defer to the MPI's default (tree.json `beyond`, --beyond defer)" in \
        capsys.readouterr().out
    stats = json.loads((out / "stats.json").read_text())
    assert "--recommend --criterion combined --beyond defer" in stats["recommendation"]["command"]
