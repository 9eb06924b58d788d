"""Downstream of an allreduce table (the benchmark's third collective): build and the generic
emit targets work (ompi-dec-fixed knows all 14 collectives:
tests/unit/sinks/emit/test_ompi_dec_fixed.py); the target that knows only bcast and reduce (mpich-json) refuses it with one line, exit status 2,
and writes nothing."""
import pytest

from helpers import build, collsel


@pytest.fixture(scope="module")
def allreduce_tree(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("allreduce")
    table = tmp / "allreduce.csv"
    rows = ["collective,comm_size,msg_size,algorithm,segsize,time_us"]
    for p in (2, 4, 8):
        for m in (4, 1024, 65536, 1 << 20):
            for alg, seg, cost in ((0, 0, 1.1 * p + m / 900), (3, 0, p + m / 1000),
                                   (4, 0, 3 * p + m / 4000), (5, 8192, 5 * p + m / 5000)):
                rows.append(f"allreduce,{p},{m},{alg},{seg},{cost:.4f}")
    table.write_text("\n".join(rows) + "\n")
    return build(tmp, table, "allreduce") / "tree.json"


@pytest.mark.parametrize("target, made", [("c", "decision.c"), ("ompi-rules", None),
                                          ("ompi-json", None), ("blob", None),
                                          ("ompi-dec-fixed", None)])
def test_generic_targets_emit_allreduce(tmp_path, allreduce_tree, target, made):
    out = tmp_path / "out"
    r = collsel("emit", allreduce_tree, "--target", target, "--out", out)
    assert r.returncode == 0, r.stderr
    assert (out / made).is_file() if made else out.is_file()


@pytest.mark.parametrize("target, message", [
    # every collective has MPICH names now: Open MPI ids without a counterpart need --mpich-map
    ("mpich-json", "which have no MPICH counterpart; say which MPICH algorithm runs instead"),
])
def test_bcast_reduce_targets_refuse_allreduce(tmp_path, allreduce_tree, target, message):
    out = tmp_path / "out"
    r = collsel("emit", allreduce_tree, "--target", target, "--out", out)
    assert r.returncode == 2
    assert r.stderr.startswith("collsel: error: ") and message in r.stderr
    assert len(r.stderr.splitlines()) == 1
    assert not out.exists()


def test_ompi_rules_name_allreduce_by_its_open_mpi_id(tmp_path, allreduce_tree):
    out = tmp_path / "rules.conf"
    assert collsel("emit", allreduce_tree, "--target", "ompi-rules", "--out", out).returncode == 0
    lines = [x.split("#")[0].strip() for x in out.read_text().splitlines()]
    assert [x for x in lines if x][:2] == ["1", "2"]   # one collective, ALLREDUCE = 2


def test_build_writes_open_mpis_fixed_decision_for_allreduce(allreduce_tree):
    text = (allreduce_tree.parent / "ompi_allreduce_intra_dec_fixed.c").read_text()
    assert "int ompi_coll_tuned_allreduce_intra_dec_fixed(const void *sbuf" in text
