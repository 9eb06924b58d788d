"""MPICH 5.0.2's own algorithms beside 4.0.2's (issue 31): stable ids (4.0's unchanged, 5.0's
appended), which release has which name, the sweep's default and accepted names per release
(the MPICH home's mpichversion), the schema, and `collsel emit --target mpich-json` on a 4.0 and
a 5.0 base (refusal, parameters, guards)."""
import json
import subprocess
import sys

import pytest

from collsel.core.mpi import algorithms
from collsel.core.trees import treefile
from collsel.errors import InputError
from collsel.sinks.emit import mpich_csel
from collsel.sources.sweep import plan
from mpich_walk import csel_walk, mpich_table

# The ids trees on disk hold: 4.0.2's, never to change.
MPICH_40_IDS = {
    "allgather": {0: "auto", 1: "brucks", 2: "nb", 3: "recursive_doubling", 4: "ring"},
    "allgatherv": {0: "auto", 1: "brucks", 2: "nb", 3: "recursive_doubling", 4: "ring"},
    "allreduce": {0: "auto", 1: "nb", 2: "smp", 3: "recursive_doubling",
                  4: "reduce_scatter_allgather"},
    "alltoall": {0: "auto", 1: "brucks", 2: "nb", 3: "pairwise", 4: "pairwise_sendrecv_replace",
                 5: "scattered"},
    "alltoallv": {0: "auto", 1: "nb", 2: "pairwise_sendrecv_replace", 3: "scattered"},
    "barrier": {0: "auto", 1: "nb", 2: "smp", 3: "dissemination"},
    "bcast": {0: "auto", 1: "binomial", 2: "nb", 3: "smp",
              4: "scatter_recursive_doubling_allgather", 5: "scatter_ring_allgather"},
    "exscan": {0: "auto", 1: "nb", 2: "recursive_doubling"},
    "gather": {0: "auto", 1: "binomial", 2: "nb"},
    "reduce": {0: "auto", 1: "binomial", 2: "nb", 3: "smp", 4: "reduce_scatter_gather"},
    "reduce_scatter": {0: "auto", 1: "nb", 2: "noncommutative", 3: "pairwise",
                       4: "recursive_doubling", 5: "recursive_halving"},
    "reduce_scatter_block": {0: "auto", 1: "noncommutative", 2: "recursive_doubling",
                             3: "pairwise", 4: "recursive_halving", 5: "nb"},
    "scan": {0: "auto", 1: "nb", 2: "smp", 3: "recursive_doubling"},
    "scatter": {0: "auto", 1: "binomial", 2: "nb"},
}
# ... and the ones 5.0.2 adds, appended in its description's order.
MPICH_50_ADDED = {
    "allgather": {5: "k_brucks", 6: "recexch_doubling", 7: "recexch_halving"},
    "allreduce": {5: "recursive_multiplying", 6: "tree", 7: "recexch", 8: "ring",
                  9: "k_reduce_scatter_allgather", 10: "ccl"},
    "alltoall": {6: "k_brucks"},
    "barrier": {4: "k_dissemination", 5: "recexch"},
    "bcast": {6: "pipelined_tree", 7: "tree"},
}


def test_the_40_ids_are_unchanged_and_50s_appended():
    for coll, ids in MPICH_40_IDS.items():
        assert algorithms.MPICH_ALGORITHMS[coll] == {**ids, **MPICH_50_ADDED.get(coll, {})}, coll


def test_which_release_has_which_name():
    assert algorithms.mpich_ids_of("barrier", "4.0.2") == [0, 1, 2, 3]
    assert algorithms.mpich_ids_of("barrier", "5.0.2") == [0, 1, 2, 4, 5]   # no dissemination
    assert algorithms.mpich_ids_of("allreduce", "5.0.2") == list(range(11))
    assert algorithms.mpich_ids_of("scan", "5.0.2") == algorithms.mpich_ids_of("scan", "4.0.2")
    # the newest listed release not newer than the version; none found: 4.0
    for version, release in (("5.0.2", "5.0"), ("MPICH Version:\t4.0.2", "4.0"), ("4.3.1", "4.0"),
                             ("5.1", "5.0"), ("3.4.3", "4.0"), (None, "4.0"), ("", "4.0")):
        assert algorithms.mpich_release(version) == release, version


def test_the_sweeps_default_methods_per_release():
    def ids(coll, version):
        return [m.algorithm for m in plan.plan_methods(coll, family="mpich",
                                                        mpich_version=version)]
    assert ids("allreduce", None) == [0, 1, 3, 4]                  # 4.0: as before
    # 5.0: reduce_scatter_allgather fails in MPI_Init when forced, ccl measures a fallback
    assert ids("allreduce", "5.0.2") == [0, 1, 3, 5, 6, 7, 8, 9]
    assert ids("barrier", "5.0.2") == [0, 1, 4, 5]
    assert ids("bcast", "5.0.2") == [0, 1, 2, 4, 5, 6, 7]
    assert ids("allgather", "5.0.2") == [0, 1, 2, 3, 4, 5, 6, 7]
    assert ids("alltoall", "5.0.2") == [0, 1, 2, 3, 4, 5, 6]
    assert ids("reduce_scatter", "5.0.2") == [0, 1, 3, 4, 5]


@pytest.mark.parametrize("coll,names,version,message", [
    ("allreduce", "recursive_doubling,ring", "4.0.2",
     "--algorithms: 'ring': MPICH 4.0.2 has no allreduce algorithm 'ring' (MPICH 4.0's: auto, "
     "nb, smp, recursive_doubling, reduce_scatter_allgather)"),
    ("allreduce", "8", None, "--algorithms: '8': MPICH 4.0 has no allreduce algorithm 'ring'"),
    ("barrier", "dissemination", "5.0.2",
     "--algorithms: 'dissemination': MPICH 5.0.2 has no barrier algorithm 'dissemination' "
     "(MPICH 5.0's: auto, nb, smp, k_dissemination, recexch)"),
])
def test_a_name_the_release_lacks_is_refused(coll, names, version, message):
    with pytest.raises(InputError) as e:
        plan.plan_methods(coll, names, family="mpich", mpich_version=version)
    assert str(e.value).startswith(message)


def test_a_name_the_release_has_is_planned():
    methods = plan.plan_methods("allreduce", "recursive_multiplying,ring", family="mpich",
                                mpich_version="5.0.2")
    assert [m.algorithm for m in methods] == [0, 5, 8]


def fake_mpich(root, version):
    """An MPICH home whose mpichversion prints `version` (enough for a dry run)."""
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True)
    for name, body in (("mpicc", "exit 0"), ("mpiexec", "exit 0"),
                       ("mpichversion", f"echo 'MPICH Version:      {version}'")):
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    return root


def sweep(home, tmp_path, coll, names):
    out = tmp_path / "t.csv"
    done = subprocess.run([sys.executable, "-m", "collsel.cli", "sweep", "--mpi", "mpich",
                           "--mpi-home", home, "--collective", coll, "--algorithms", names,
                           "--comm-sizes", "2", "--msg-sizes", "8", "--launches", "1",
                           "--dry-run", "--out", out], capture_output=True, text=True,
                          timeout=120)
    return done, out


def test_the_sweep_takes_the_release_from_the_homes_mpichversion(tmp_path):
    five, four = fake_mpich(tmp_path / "m5", "5.0.2"), fake_mpich(tmp_path / "m4", "4.0.2")
    done, out = sweep(five, tmp_path, "allreduce", "recursive_multiplying,ring")
    assert done.returncode == 0, done.stderr
    assert "--methods auto:0:0,recursive_multiplying:0:0,ring:0:0" in done.stdout
    done, out = sweep(four, tmp_path, "allreduce", "recursive_multiplying")
    assert done.returncode == 2 and done.stdout == "" and not out.exists()
    assert done.stderr == ("collsel: error: --algorithms: 'recursive_multiplying': MPICH 4.0.2 "
                           "has no allreduce algorithm 'recursive_multiplying' (MPICH 4.0's: "
                           "auto, nb, smp, recursive_doubling, reduce_scatter_allgather)\n")


# --- the tree schema and mpich-json -----------------------------------------------------------

def build(tmp_path, coll, best, release):
    table = tmp_path / f"{coll}.csv"
    table.write_text(mpich_table(coll, lambda i, j, names: best, (2, 4), (8, 65536),
                                 release=release))
    out = tmp_path / coll
    done = subprocess.run([sys.executable, "-m", "collsel.cli", "build", table, "--collective",
                           coll, "--out", out], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out / "tree.json"


def test_the_schema_takes_50s_ids_for_family_mpich(tmp_path):
    tree = build(tmp_path, "allreduce", "ring", "5.0")
    loaded = treefile.load(tree)
    assert [m.algorithm for m in loaded.methods] == list(
        a for a in algorithms.MPICH_ALGORITHMS["allreduce"] if a)
    doc = json.loads(tree.read_text())
    doc["methods"][0]["algorithm"] = 11
    tree.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"algorithm: 11 is not one of \[0, 1, 2, 3, 4, 5, 6, "
                                         r"7, 8, 9, 10\]"):
        treefile.load(tree)


def base(release):
    """A selection file naming, per collective, the release's last algorithm (5.0's: barrier
    k_dissemination, as MPICH 5.0.2's own generic.json)."""
    def own(coll):
        first = mpich_csel.function(coll, algorithms.MPICH_VERSIONS[release][coll][-1])
        return {"comm_type=intra": {"comm_size=any": {f"algorithm={first}": {}}},
                "comm_type=inter": {f"algorithm=MPIR_{coll.capitalize()}_inter_x": {}}}
    return {f"collective={c}": own(c) for c in algorithms.MPICH_ALGORITHMS}


def emit(tmp_path, trees, release):
    path = tmp_path / f"base-{release}.json"
    path.write_text(json.dumps(base(release)))
    out = tmp_path / f"sel-{release}.json"
    done = subprocess.run([sys.executable, "-m", "collsel.cli", "emit", "--target", "mpich-json",
                           *trees, "--mpich-base", path, "--out", out],
                          capture_output=True, text=True, timeout=120)
    return done, out, path


def test_the_base_files_release_is_read_from_its_leaves():
    assert mpich_csel.base_release(json.dumps(base("4.0"))) == "4.0"
    assert mpich_csel.base_release(json.dumps(base("5.0"))) == "5.0"


@pytest.mark.parametrize("coll,best,tree_release,base_release,hint", [
    ("allreduce", "ring", "5.0", "4.0",
     "pass --mpich-base build/mpich5/generic.json (make mpich5-base: MPICH 5.0's selection)"),
    ("barrier", "dissemination", "4.0", "5.0", "give the base file of MPICH 4.0"),
])
def test_an_algorithm_the_bases_release_lacks_is_refused(tmp_path, coll, best, tree_release,
                                                         base_release, hint):
    tree = build(tmp_path, coll, best, tree_release)
    done, out, path = emit(tmp_path, [tree], base_release)
    assert done.returncode == 2 and not out.exists()
    assert done.stderr == (f"collsel: error: {tree}: the tree's {coll} leaves use {best}, which "
                           f"MPICH {algorithms.MPICH_READ_FROM[base_release]} (the base file "
                           f"{path}) lacks; {hint}\n")


def test_50_leaves_carry_mpichs_default_parameters_and_guards(tmp_path):
    trees = [build(tmp_path, c, best, "5.0") for c, best in (
        ("allreduce", "recursive_multiplying"), ("bcast", "pipelined_tree"),
        ("alltoall", "k_brucks"), ("barrier", "k_dissemination"),
        ("allgather", "recexch_doubling"))]
    done, out, _ = emit(tmp_path, trees, "5.0")
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    text = json.dumps(doc)
    assert ('"algorithm=MPIR_Allreduce_intra_recursive_multiplying": {"k=2": {}}' in text)
    assert ('"algorithm=MPIR_Bcast_intra_pipelined_tree": {"tree_type=kary": {}, "k=2": {}, '
            '"is_non_blocking=1": {}, "chunk_size=8192": {}, "recv_pre_posted=0": {}}' in text)
    assert '"algorithm=MPIR_Allgather_intra_recexch_doubling": {"k=2": {}, ' \
           '"single_phase_recv=0": {}}' in text
    ar, a2a = doc["collective=allreduce"], doc["collective=alltoall"]
    assert csel_walk(ar, "allreduce", 4, 64) == "MPIR_Allreduce_intra_recursive_multiplying"
    # restrictions of 5.0: commutative (else MPICH's own decision), not in place
    assert csel_walk(ar, "allreduce", 4, 64, commutative=False) == \
        "MPIR_Allreduce_intra_ccl"
    assert csel_walk(a2a, "alltoall", 4, 64) == "MPIR_Alltoall_intra_k_brucks"
    assert csel_walk(a2a, "alltoall", 4, 64, in_place=True) == "MPIR_Alltoall_intra_scattered"
    assert "allreduce: recursive_multiplying guarded by MPICH 5.0.2's conditions" in done.stdout
