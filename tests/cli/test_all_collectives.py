"""Every collective `ompi_info --param coll tuned` lists goes through build, query, stats and the
emitters (c, blob, ompi-rules) from one algorithm table (core.mpi.algorithms), barrier with its one
message-size column; names and spellings resolve per collective."""
import json

import pytest

from collsel import cli
from collsel.core.mpi import algorithms
from collsel.errors import InputError
from helpers import synthetic_table

FOURTEEN = ("allgather", "allgatherv", "allreduce", "alltoall", "alltoallv", "barrier", "bcast",
            "exscan", "gather", "reduce", "reduce_scatter", "reduce_scatter_block", "scan",
            "scatter")


def run(capsys, *argv):
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_algorithm_table_is_the_catalogue_of_all_14():
    assert tuple(algorithms.collectives()) == FOURTEEN
    assert algorithms.ALGORITHMS is algorithms.TUNED_ALGORITHMS
    for coll in FOURTEEN:
        assert algorithms.ALGORITHMS[coll][algorithms.BASELINE_ALGORITHM] == "ignore"
        assert algorithms.SEGMENTING[coll] <= set(algorithms.ALGORITHMS[coll])
        assert algorithms.USES_FANINOUT[coll] <= set(algorithms.ALGORITHMS[coll])


@pytest.mark.parametrize("coll", FOURTEEN)
def test_every_collective_builds_queries_and_emits(coll, tmp_path, capsys):
    msg_sizes = (0,) if coll == "barrier" else (1, 64, 4096, 65536)
    table = synthetic_table(tmp_path / f"{coll}.csv", coll, msg_sizes=msg_sizes)
    out = tmp_path / "tree"
    status, text, err = run(capsys, "build", table, "--out", out)      # --collective inferred
    assert status == 0, err
    assert text.startswith(f"{out}: ")
    doc = json.loads((out / "tree.json").read_text())
    assert doc["collective"] == coll and len(doc["axes"][1]["values"]) == len(msg_sizes)
    status, text, err = run(capsys, "query", out / "tree.json", "--comm-size", "5",
                            "--msg-size", "100")
    assert status == 0, err
    name = text.split(": ", 1)[1].split(" (alg ")[0]
    assert name in algorithms.ALGORITHMS[coll].values(), text
    said = {}
    for target, where in (("c", "c"), ("blob", "t.bin"), ("ompi-rules", "rules.conf")):
        status, said[target], err = run(capsys, "emit", "--target", target, out / "tree.json",
                                        "--out", tmp_path / where)
        assert status == 0, (target, err)
    assert f"collsel_{coll}_decide" in (tmp_path / "c" / "decision.h").read_text()
    # Open MPI reads the rules file back exactly: no grid point decided otherwise
    assert f"rules.conf: {coll}: " in said["ompi-rules"]
    assert "decides differently from the tree on 0 of" in said["ompi-rules"]
    name = algorithms.BLOB_NAMES.get(coll, coll).encode()
    assert (tmp_path / "t.bin").read_bytes()[16:32] == name.ljust(16, b"\0")


def test_the_default_is_expressible_for_every_collective():
    for coll in FOURTEEN:
        for word in ("0", "ignore", "tuned", "fixed"):
            assert algorithms.algorithm_id(coll, word) == algorithms.BASELINE_ALGORITHM
        assert algorithms.describe(coll, algorithms.Method(0, 0)) == "defer"


def test_new_collectives_take_their_catalogue_names_and_common_spellings():
    assert algorithms.algorithm_id("alltoall", "modified_bruck") == 3
    assert algorithms.algorithm_id("alltoall", "Bruck") == 3
    assert algorithms.algorithm_id("barrier", "double-ring") == 2
    assert algorithms.algorithm_id("reduce_scatter", "non-overlapping") == 1
    assert algorithms.algorithm_id("allgather", "neighbor exchange") == 5
    assert algorithms.algorithm_id("allgatherv", "basic_default") == 1


def test_allgatherv_default_is_refused_as_ambiguous():
    with pytest.raises(InputError, match=r"allgatherv algorithm 'default' is ambiguous: Open MPI "
                       r"names algorithm 1 'default'; write 0 \(or 'ignore'\)"):
        algorithms.algorithm_id("allgatherv", "default")


def test_segment_sizes_only_where_the_algorithm_segments():
    assert algorithms.check_segsize("allreduce", 5, 8192) == 8192
    for coll in ("alltoall", "barrier", "scan", "reduce_scatter_block"):
        with pytest.raises(InputError, match=f"segmenting {coll} algorithms: none"):
            algorithms.check_segsize(coll, 1, 8192)


def test_report_deploys_every_collective_through_every_target():
    from collsel.sinks.report.compute import deploy_steps
    targets = lambda c, family: [s["target"] for s in deploy_steps(c, family, None)]
    for coll in algorithms.ALGORITHMS:
        assert targets(coll, "openmpi") == ["ompi-rules", "blob", "c", "ompi-dec-fixed"], coll
        assert targets(coll, "mpich") == ["mpich-json", "blob", "c"], coll
