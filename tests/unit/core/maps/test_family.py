"""Algorithm families from the table to tree.json and the targets: a table measured under MPICH
names MPICH's own algorithms (`# algorithm_family=mpich`), the tree keeps that family, Open MPI's
own files refuse it, and tables of two families never combine."""
import json
from types import SimpleNamespace

import pytest

from collsel import cli
from collsel.core.maps import table
from collsel.core.mpi import algorithms
from collsel.core.trees import treefile
from collsel.errors import InputError
from collsel.sinks.emit.targets import (FAMILIES_OF, OPEN_MPI_ONLY, TARGETS, WRITES,
                                        EmitOptions, emit)

HEADER = "collective,comm_size,msg_size,algorithm,segsize,time_us"
MPICH_BCAST = ("binomial", "scatter_recursive_doubling_allgather", "scatter_ring_allgather")


def mpich_rows(collective="bcast", names=MPICH_BCAST):
    """Rows where each algorithm wins somewhere: binomial small, the scatter ones large."""
    rows = []
    for p in (2, 4, 8):
        for m in (8, 1024, 65536, 1048576):
            for k, name in enumerate(names):
                t = (1 + k) * (1 + m / 1024) if m < 4096 else (len(names) - k) * m / 1024 + p
                rows.append(f"{collective},{p},{m},{name},0,{t:g}")
    return rows


def write(path, rows, family="mpich"):
    meta = f"# algorithm_family={family}\n" if family else ""
    path.write_text(meta + HEADER + "\n" + "\n".join(rows) + "\n")
    return path


def run(capsys, *args):
    status = cli.main([str(a) for a in args])
    return status, capsys.readouterr().err


def test_mpich_table_reads_native_names(tmp_path):
    path = write(tmp_path / "m.csv", mpich_rows() + ["bcast,2,8,auto,0,1.5"])
    t = table.read_table(path)
    assert t.family == "mpich"
    assert sorted(set(t.algorithm.tolist())) == [0, 1, 4, 5]
    assert t.select("bcast").family == "mpich" and t.take([0, 1]).family == "mpich"
    assert table.combine([t, t.take([0])]).family == "mpich"
    # Without the metadata line the same names are Open MPI spellings, or no algorithm at all.
    with pytest.raises(InputError, match=r"m2.csv:3: unknown bcast algorithm "
                                         r"'scatter_recursive_doubling_allgather'"):
        table.read_table(write(tmp_path / "m2.csv", mpich_rows(), family=None))


@pytest.mark.parametrize("family", algorithms.FAMILIES)
def test_ids_and_names_round_trip(family):
    for collective, names in algorithms.registry(family).items():
        for alg, name in names.items():
            if (family, collective, alg) == ("openmpi", "allgatherv", 1):
                continue    # ompi_info's 'default': ambiguous, refused (test_all_collectives)
            assert algorithms.algorithm_id(collective, name, family) == alg
            assert algorithms.algorithm_id(collective, str(alg), family) == alg
            assert algorithms.algorithm_name(collective, alg, family) == name


def test_mixed_families_refused(tmp_path, capsys):
    mpich = write(tmp_path / "mpich.csv", mpich_rows())
    ompi = write(tmp_path / "ompi.csv", ["bcast,2,8,6,0,1", "bcast,2,8,8,0,2"], family=None)
    with pytest.raises(InputError) as e:
        table.read_tables([ompi, mpich])
    assert str(mpich) in str(e.value) and str(ompi) in str(e.value)
    status, err = run(capsys, "build", ompi, mpich, "--collective", "bcast",
                      "--out", tmp_path / "t")
    assert status == 2 and err.count("\n") == 1 and "algorithm family mpich" in err, err
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize("row, message", [
    ("bcast,2,8,chain,0,1", "h.csv:3: unknown MPICH bcast algorithm 'chain'"),
    ("bcast,2,8,9,0,1", "h.csv:3: bcast has no MPICH algorithm 9 (ids 0-7)"),
    ("reduce,2,8,scatter_ring_allgather,0,1", "h.csv:3: unknown MPICH reduce algorithm"),
])
def test_unknown_mpich_algorithm_is_one_located_line(tmp_path, capsys, row, message):
    path = write(tmp_path / "h.csv", [row])
    status, err = run(capsys, "build", path, "--collective", "bcast", "--out", tmp_path / "t")
    assert status == 2 and err.count("\n") == 1 and message in err, err


def test_unknown_family_is_one_line(tmp_path, capsys):
    path = write(tmp_path / "f.csv", ["bcast,2,8,1,0,1"], family="intelmpi")
    status, err = run(capsys, "build", path, "--collective", "bcast", "--out", tmp_path / "t")
    assert status == 2 and err.count("\n") == 1, err
    assert "f.csv: # algorithm_family='intelmpi': unknown algorithm family" in err


@pytest.fixture
def mpich_tree(tmp_path, capsys):
    path = write(tmp_path / "m.csv", mpich_rows())
    status, err = run(capsys, "build", path, "--collective", "bcast", "--out", tmp_path / "t")
    assert status == 0, err
    return tmp_path / "t" / "tree.json"


def test_tree_records_the_family(mpich_tree):
    doc = json.loads(mpich_tree.read_text())
    assert doc["algorithm_family"] == "mpich"
    assert {m["name"] for m in doc["methods"]} == set(MPICH_BCAST)
    loaded = treefile.load(mpich_tree)
    assert loaded.family == "mpich" and sorted(loaded.method_names) == sorted(MPICH_BCAST)


def test_old_tree_without_family_loads_as_openmpi(tmp_path, capsys):
    path = write(tmp_path / "o.csv", ["bcast,2,8,6,0,1", "bcast,2,8,8,0,2",
                                      "bcast,4,65536,6,0,9", "bcast,4,65536,8,0,3"], family=None)
    status, err = run(capsys, "build", path, "--collective", "bcast", "--out", tmp_path / "t")
    assert status == 0, err
    doc = json.loads((tmp_path / "t" / "tree.json").read_text())
    assert doc.pop("algorithm_family") == "openmpi"
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    loaded = treefile.load(old)
    assert loaded.family == "openmpi" and sorted(loaded.method_names) == [
        "binomial", "scatter_allgather"]


def test_schema_checks_ids_of_the_family(mpich_tree, tmp_path):
    doc = json.loads(mpich_tree.read_text())
    doc["methods"][0]["algorithm"] = 8          # an Open MPI bcast id, no MPICH one
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"methods\[0\].algorithm: 8 is not one of "
                                         r"\[0, 1, 2, 3, 4, 5, 6, 7\]"):
        treefile.load(bad)
    doc["algorithm_family"] = "intelmpi"
    bad.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="algorithm_family: 'intelmpi' is not one of"):
        treefile.load(bad)


@pytest.mark.parametrize("target", sorted(OPEN_MPI_ONLY))
def test_open_mpi_targets_refuse_an_mpich_tree(mpich_tree, tmp_path, capsys, target):
    out = tmp_path / "out"
    status, err = run(capsys, "emit", "--target", target, mpich_tree, "--out", out)
    assert status == 2 and err.count("\n") == 1, err
    assert f"{mpich_tree}: --target {target} writes Open MPI coll/tuned ids" in err
    assert "algorithm_family mpich" in err and not out.exists()


@pytest.mark.parametrize("target", sorted(set(TARGETS) - set(FAMILIES_OF)))
def test_neutral_targets_take_an_mpich_tree(mpich_tree, tmp_path, capsys, target):
    status, err = run(capsys, "emit", "--target", target, mpich_tree, "--out", tmp_path / "out")
    assert status == 0, err
    out = tmp_path / "out"
    assert out.exists()
    if target == "c":                  # comments name the methods in the tree's family
        assert "scatter_ring_allgather" in (out / "decision.c").read_text()


@pytest.mark.parametrize("target", sorted(t for t in FAMILIES_OF if "intel" not in FAMILIES_OF[t]))
def test_an_mpi_file_refuses_a_tree_of_another_family(target):
    """Every MPI-specific target refuses a tree of a family it does not write (Intel MPI's,
    whose targets are its own), and names the targets that take it."""
    tree = SimpleNamespace(family="intel", collective="bcast")
    with pytest.raises(InputError) as refused:
        emit(target, [tree], EmitOptions(tree_names=("t.json",)))
    assert str(refused.value) == (
        f"t.json: --target {target} writes {WRITES[target]}, but this tree's algorithms are "
        "intel's (algorithm_family intel); use --target intel-env, intel-json, c, c-fast, blob or "
        "c-array")
