"""`collsel catalogue`: the built-in coll/tuned table against ompi_info's enumerators, a saved
4.1.4 output with an algorithm removed or added, and the refusals."""
import pathlib
import shutil

import pytest

from collsel.core.mpi import algorithms, catalogue
from helpers import FIXTURES, collsel

SAVED = pathlib.Path(__file__).parents[1] / "data" / "ompi_info" / "coll-tuned-4.1.4.txt"
SHARED_PLAIN = FIXTURES / "osu" / "info.txt"     # a real plain `ompi_info` of Open MPI 4.1.2
FOURTEEN = {"allgather", "allgatherv", "allreduce", "alltoall", "alltoallv", "barrier", "bcast",
            "exscan", "gather", "reduce", "reduce_scatter", "reduce_scatter_block", "scan",
            "scatter"}


def test_the_table_holds_the_14_collectives_and_names_what_collsel_handles():
    assert set(algorithms.TUNED_ALGORITHMS) == FOURTEEN
    for coll, algs in algorithms.ALGORITHMS.items():
        assert algs == algorithms.TUNED_ALGORITHMS[coll]


COMPARED = ("compared (coll/tuned 4.1.4): the algorithm ids and names of "
            "coll_tuned_<coll>_algorithm (78 in the table over 14 collectives, {algs} in the MPI "
            "over {colls}) and the variables coll_tuned_<coll>_algorithm_<parameter> (47 in the "
            "table, {params} in the MPI)")


def test_saved_414_output_agrees():
    done = collsel("catalogue", "--from-file", SAVED)
    assert done.returncode == 0
    assert done.stdout.splitlines() == [
        COMPARED.format(algs=78, colls=14, params=47),
        f"the table agrees with {SAVED}: 14 collectives, 78 algorithm ids"]


@pytest.mark.skipif(shutil.which("ompi_info") is None, reason="no ompi_info")
def test_the_installed_ompi_info_agrees():
    done = collsel("catalogue")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].startswith("the table agrees with ompi_info")


def _edited(tmp_path, drop, add):
    lines = [line for line in SAVED.read_text().splitlines() if drop not in line] + [add]
    path = tmp_path / "ompi_info.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_missing_and_an_extra_algorithm_are_reported(tmp_path):
    path = _edited(tmp_path, "coll_tuned_allgather_algorithm:enumerator:value:6:two_proc",
                   "mca:coll:tuned:param:coll_tuned_alltoallv_algorithm:enumerator:value:3:newalg")
    done = collsel("catalogue", "--from-file", path)
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        COMPARED.format(algs=78, colls=14, params=47),
        "allgather: algorithm 6 (two_proc) in the table, not in the MPI",
        "alltoallv: algorithm 3 (newalg) in the MPI, the table lacks it",
        f"2 difference(s) between the table and {path}",
    ]


def test_a_renamed_algorithm_a_new_collective_and_a_new_parameter_are_reported():
    cat = catalogue.parse_ompi_info(SAVED.read_text(), "saved")
    cat.algorithms["bcast"][7] = "k_nomial"
    cat.algorithms["ireduce"] = {0: "ignore", 1: "linear"}
    cat.parameters["barrier"].add("tree_fanout")
    assert catalogue.differences(cat) == [
        "barrier: parameter coll_tuned_barrier_algorithm_tree_fanout in the MPI, the table lacks it",
        "bcast: algorithm 7 is 'k_nomial' in the MPI, 'knomial' in the table",
        "ireduce: the MPI has this collective (2 algorithms: 0:ignore, 1:linear), the table "
        "lacks it",
    ]


def test_a_newer_mpis_extra_algorithm_is_flagged_when_running_its_ompi_info(tmp_path):
    """A stand-in ompi_info printing the real 4.1.4 output with one algorithm more (as a newer
    Open MPI's would): the run path shows it and fails."""
    edited = _edited(tmp_path, "no line is dropped",
                     "mca:coll:tuned:param:coll_tuned_alltoall_algorithm:enumerator:value:6:"
                     "linear_sync_new")
    fake = tmp_path / "ompi_info"
    fake.write_text(f"#!/bin/sh\ncat '{edited}'\n")
    fake.chmod(0o755)
    done = collsel("catalogue", "--ompi-info", fake)
    assert done.returncode == 1, done.stderr
    where = f"{fake} --param coll tuned --level 9 --parsable"
    assert done.stdout.splitlines() == [
        COMPARED.format(algs=79, colls=14, params=47),
        "alltoall: algorithm 6 (linear_sync_new) in the MPI, the table lacks it",
        f"1 difference(s) between the table and {where}"]


@pytest.mark.skipif(not SHARED_PLAIN.is_file(), reason="no shared osu/info.txt fixture")
def test_plain_ompi_info_output_is_refused_naming_what_it_is():
    done = collsel("catalogue", "--from-file", SHARED_PLAIN)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"collsel: error: {SHARED_PLAIN}: no coll_tuned_<coll>_algorithm enumerators (plain "
        "ompi_info output of coll/tuned 4.1.2: it lists components, not their parameters); "
        "give the output of 'ompi_info --param coll tuned --level 9 --parsable'\n")


def test_text_without_enumerators_is_refused(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("Open MPI v4.1.4\n")
    done = collsel("catalogue", "--from-file", path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"collsel: error: {path}: no coll_tuned_<coll>_algorithm enumerators; give the output "
        "of 'ompi_info --param coll tuned --level 9 --parsable'\n")


def test_an_unknown_ompi_info_is_refused():
    done = collsel("catalogue", "--ompi-info", "no-such-ompi_info")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(
        "collsel: error: --ompi-info: 'no-such-ompi_info' not found")


# --- MPICH: MPIR_CVAR_<COLL>_INTRA_ALGORITHM through MPI_T -----------------------------------

MPICH_SAVED = pathlib.Path(__file__).parents[1] / "data" / "mpich" / "cvars-4.0.2.txt"
MPICH_COMPARED = ("compared (MPICH, MPI_T): the entries of MPIR_CVAR_<COLL>_INTRA_ALGORITHM "
                  "(75 in the table over 17 collectives, {entries} in the MPI over {colls}; "
                  "nonblocking and neighbourhood collectives not compared)")


def test_mpich_table_covers_the_14_collectives_and_the_three_csel_only_ones():
    assert set(algorithms.MPICH_ALGORITHMS) == FOURTEEN
    assert set(algorithms.MPICH_UNMEASURED) == {"alltoallw", "gatherv", "scatterv"}
    for table in (algorithms.MPICH_ALGORITHMS, algorithms.MPICH_UNMEASURED):
        assert all(algs[0] == "auto" for algs in table.values())


def test_saved_mpich_402_mpi_t_output_agrees():
    done = collsel("catalogue", "--mpi", "mpich", "--from-file", MPICH_SAVED)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        MPICH_COMPARED.format(entries=75, colls=17),
        f"the table of MPICH 4.0.2 agrees with {MPICH_SAVED}: 17 collectives, 75 algorithm ids"]


def test_saved_mpich_502_mpi_t_output_agrees_with_its_release():
    """MPICH 5.0.2's names (build/mpis/mpich5) are compared with 5.0's list, the closest."""
    saved = MPICH_SAVED.with_name("cvars-5.0.2.txt")
    done = collsel("catalogue", "--mpi", "mpich", "--from-file", saved)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        MPICH_COMPARED.format(entries=88, colls=17).replace("75 in the table", "88 in the table"),
        f"the table of MPICH 5.0.2 agrees with {saved}: 17 collectives, 88 algorithm ids"]


@pytest.mark.skipif(shutil.which("mpicc.mpich") is None, reason="no MPICH")
def test_the_installed_mpich_agrees_through_mpi_t():
    done = collsel("catalogue", "--mpi", "mpich")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == ("the table of MPICH 4.0.2 agrees with MPI_T of "
                                            "mpicc.mpich's MPI: 17 collectives, 75 algorithm ids")


def test_mpich_extra_missing_and_renamed_algorithms_are_reported(tmp_path):
    text = MPICH_SAVED.read_text()
    edited = (text.replace("ring               - Force ring algorithm\n",
                           "ring               - Force ring algorithmk_ring - Force k-ring\n", 1)
              .replace("scattered                 - Force scattered algorithm\n", "\n", 1)
              .replace("dissemination - Force", "disseminate - Force")
              .replace("MPIR_CVAR_EXSCAN_INTRA_ALGORITHM\t", "MPIR_CVAR_EXSCANX_INTRA_ALGORITHM\t"))
    saved = tmp_path / "cvars.txt"
    saved.write_text(edited)
    done = collsel("catalogue", "--mpi", "mpich", "--from-file", saved)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert "allgather: entry 5 of the MPI's description (ending '...Force ring algorithmk_ring') " \
           "is not the table's 'nothing'" in lines
    assert "alltoall: algorithm 5 (scattered) in the table, not in the MPI" in lines
    assert any(x.startswith("barrier: entry 3 of the MPI's description") for x in lines)
    assert "exscan: in the table, the MPI has no MPIR_CVAR_EXSCAN_INTRA_ALGORITHM" in lines
    assert any(x.startswith("exscanx: the MPI has MPIR_CVAR_EXSCANX_INTRA_ALGORITHM")
               for x in lines)


def test_mpich_text_without_algorithm_variables_is_refused(tmp_path):
    saved = tmp_path / "none.txt"
    saved.write_text("MPIR_CVAR_ASYNC_PROGRESS\tnothing\n")
    done = collsel("catalogue", "--mpi", "mpich", "--from-file", saved)
    assert done.returncode == 2
    assert done.stderr.strip() == (f"collsel: error: {saved}: no MPIR_CVAR_<COLL>_INTRA_ALGORITHM "
                                   "variables; give the output of collsel's mpi_t_cvars program "
                                   "(NAME<TAB>DESCRIPTION lines)")


def test_mpich_without_its_compiler_wrapper_is_refused():
    done = collsel("catalogue", "--mpi", "mpich", "--mpicc", "/nonexistent/mpicc.mpich")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == ("collsel: error: --mpicc: '/nonexistent/mpicc.mpich' not "
                                   "found: install MPICH (Debian: libmpich-dev) or give its "
                                   "compiler wrapper's path")
