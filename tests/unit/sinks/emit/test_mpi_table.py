"""runtime/collsel_mpi_table.h, the C side's MPI knowledge, is generated from core/mpi/algorithms.py and
core/mpi/fallbacks.py (sinks/emit/mpi_table.py) and committed: it must equal a regeneration, its
inline rules must answer as the Python table does, and no other C file may keep a copy of what
it holds."""
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from collsel.core.mpi import algorithms, fallbacks
from collsel.sinks.emit import mpi_table

REPO = Path(__file__).resolve().parents[4]
HEADER = REPO / mpi_table.HEADER
BENCH = REPO / "generator" / "collsel" / "sources" / "measure" / "bench"


def test_committed_header_is_a_regeneration():
    assert HEADER.read_text() == mpi_table.header(), (
        f"{mpi_table.HEADER} is stale: run `make regen-mpi-table` and commit it")


def test_the_benchmark_reads_the_same_header():
    """The benchmark's folder is compiled on its own (and shipped in the wheel): its copy is a
    link to the one header."""
    link = BENCH / "collsel_mpi_table.h"
    assert link.is_symlink() and link.resolve() == HEADER.resolve()


def test_every_collective_the_benchmark_measures_is_in_the_table():
    """The benchmark's forcing finds its collective's variables in the table by name."""
    measured = json.loads((BENCH / "capabilities.json").read_text())["collectives"]
    assert set(measured) <= set(algorithms.collectives())


def test_one_refusal_per_collective_and_release():
    for release, entries in fallbacks.OMPI_RELEASE_REFUSALS.items():
        names = [f.collective for f in entries]
        assert len(names) == len(set(names)), release


def test_a_second_refusal_of_a_collective_is_refused(monkeypatch):
    twice = fallbacks.REFUSALS + fallbacks.REFUSALS[:1]
    monkeypatch.setitem(fallbacks.OMPI_RELEASE_REFUSALS, "4.1", twice)
    with pytest.raises(ValueError, match="a second refusal of allgather"):
        mpi_table.header()


# Every MPI fact the header carries, as a C file would spell it when keeping its own copy.
COPIES = [re.compile(p) for p in (
    r'"reduce_scat_blk"',                       # a blob name
    r'"scatter_ring_allgather"',                # an MPICH algorithm name
    r'"coll_tuned_%s_algorithm',                # a forcing variable built by hand
    r'MPIR_CVAR_%s|"MPIR_CVAR_"',
    r'\{\s*6,\s*5,\s*6,\s*5,\s*2,\s*6,\s*9',    # the hand-written max_algorithm
    r'\{"allgather", 6, 2, 3\}',                # the old REFUSALS[]
    r'"_?chain_fanout',                          # a fan-in/out variable
    r'\{2, 3, 4, 5, 7\}',                       # reduce's commutative-only algorithms
)]


def test_no_c_file_keeps_a_copy():
    sources = [p for p in (REPO / "runtime").rglob("*.[ch]") if p != HEADER]
    sources += [p for p in BENCH.glob("*.[ch]") if not p.is_symlink()]
    for path in sources:
        text = path.read_text()
        for copy in COPIES:
            assert not copy.search(text), f"{path.relative_to(REPO)}: {copy.pattern}"


def test_both_runtimes_apply_the_release_refusals():
    for path in ("runtime/ompi-component/coll_collsel_colls.c",
                 "runtime/libcollsel/force_openmpi.c"):
        assert "collsel_mpi_refused(" in (REPO / path).read_text(), path
    assert "refus" not in (REPO / "runtime" / "collsel_tree.c").read_text()


# The header's inline rules compiled and asked, against the Python table: the refusal of every
# (collective, algorithm, P) for releases before, between and after the listed ones.
PROBE = r"""
#include <stdio.h>
#include "collsel_mpi_table.h"
int main(void)
{
    static const int releases[][2] = {{3, 0}, {4, 1}, {4, 9}, {5, 0}, {6, 2}};
    for (size_t r = 0; r < sizeof releases / sizeof releases[0]; r++) {
        const struct collsel_mpi_refusal *t =
            collsel_mpi_ompi_refusals(releases[r][0], releases[r][1]);
        for (int c = 0; c < COLLSEL_MPI_NCOLL; c++)
            for (int a = 0; a <= collsel_mpi_ompi_max_algorithm[c]; a++)
                for (int p = 1; p <= 9; p++)
                    if (collsel_mpi_refused(&t[c], a, p))
                        printf("%d.%d %s %d %d\n", releases[r][0], releases[r][1],
                               collsel_mpi_coll_names[c], a, p);
    }
    for (int c = 0; c < COLLSEL_MPI_NCOLL; c++)
        printf("names %s %s %d %s %s\n", collsel_mpi_coll_names[c], collsel_mpi_blob_name(c),
               collsel_mpi_mpich_count[c], collsel_mpi_ompi_cvar[c], collsel_mpi_mpich_cvar[c]);
    return 0;
}
"""


def _listed_release(major, minor):
    """The release whose refusals a runtime built against major.minor takes, as the C does."""
    listed = sorted(tuple(map(int, r.split("."))) for r in fallbacks.OMPI_RELEASE_REFUSALS)
    fit = [r for r in listed if r <= (major, minor)] or listed[:1]
    return "%d.%d" % fit[-1]


def _probe(tmp_path, header_text):
    """The PROBE program's lines, compiled against `header_text`."""
    (tmp_path / "collsel_mpi_table.h").write_text(header_text)
    (tmp_path / "probe.c").write_text(PROBE)
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
                    f"-I{tmp_path}", str(tmp_path / "probe.c"), "-o",
                    str(tmp_path / "probe")], check=True)
    return subprocess.run([str(tmp_path / "probe")], check=True, capture_output=True,
                          text=True).stdout.splitlines()


def _want():
    """PROBE's lines from the Python table."""
    want = []
    for major, minor in ((3, 0), (4, 1), (4, 9), (5, 0), (6, 2)):
        entries = fallbacks.OMPI_RELEASE_REFUSALS[_listed_release(major, minor)]
        for c in algorithms.collectives():
            for a in sorted(algorithms.TUNED_ALGORITHMS[c]):
                for p in range(1, 10):
                    if any(f.collective == c and f.algorithm == a and f.applies(p, 0, 0)
                           for f in entries):
                        want.append(f"{major}.{minor} {c} {a} {p}")
    for c in algorithms.collectives():
        want.append(f"names {c} {algorithms.BLOB_NAMES.get(c, c)} "
                    f"{len(algorithms.MPICH_ALGORITHMS[c])} {algorithms.ompi_algorithm_cvar(c)} "
                    f"{algorithms.mpich_algorithm_cvar(c)}")
    return want


needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")


@needs_gcc
def test_compiled_rules_answer_as_the_python_table(tmp_path):
    assert _probe(tmp_path, HEADER.read_text()) == _want()
    # 4.1.4's refusals are the ones the Python decisions apply (core.mpi.fallbacks.refused)
    assert fallbacks.OMPI_RELEASE_REFUSALS["4.1"] == fallbacks.REFUSALS


@needs_gcc
def test_a_release_refuses_only_what_its_own_entry_says(tmp_path, monkeypatch):
    """Were 5.0 to refuse nothing, a runtime built against 5.0 (or later) would defer nowhere,
    while one built against 4.1 keeps 4.1's refusals: nothing is inherited across releases."""
    monkeypatch.setitem(fallbacks.OMPI_RELEASE_REFUSALS, "5.0", ())
    got = _probe(tmp_path, mpi_table.header())
    assert got == _want()
    assert any(line.startswith("4.9 barrier 5 ") for line in got)
    assert not any(line.startswith(("5.0 ", "6.2 ")) for line in got)


@needs_gcc
def test_a_collective_added_to_the_table_reaches_the_c_side(tmp_path, monkeypatch):
    """design.md's walk-through, step 1 and 2: a collective that only the table names (here
    without MPICH names) gets its enum, names, max id, forcing variables and refusal slot."""
    monkeypatch.setitem(algorithms.TUNED_ALGORITHMS, "neighbor_allgather",
                        {0: "ignore", 1: "linear", 2: "ring"})
    monkeypatch.setitem(algorithms.FANINOUT_VARIABLES, "neighbor_allgather",
                        ("chain_fanout", "tree_fanout"))
    with pytest.raises(ValueError, match="neighbor_allgather needs a BLOB_NAMES entry"):
        mpi_table.header()   # 18 characters: too long for the blob
    monkeypatch.setitem(algorithms.BLOB_NAMES, "neighbor_allgather", "nbr_allgather")
    (tmp_path / "collsel_mpi_table.h").write_text(mpi_table.header())
    (tmp_path / "probe.c").write_text(r"""
#include <stdio.h>
#include "collsel_mpi_table.h"
int main(void)
{
    int c = COLLSEL_MPI_NEIGHBOR_ALLGATHER;
    printf("%d %s %s %d %s %d %d\n", COLLSEL_MPI_NCOLL, collsel_mpi_coll_names[c],
           collsel_mpi_blob_name(c), collsel_mpi_ompi_max_algorithm[c], collsel_mpi_ompi_cvar[c],
           collsel_mpi_mpich_count[c], collsel_mpi_ompi_refusals(5, 0)[c].algorithm);
    return 0;
}
""")
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
                    f"-I{tmp_path}", str(tmp_path / "probe.c"), "-o", str(tmp_path / "probe")],
                   check=True)
    out = subprocess.run([str(tmp_path / "probe")], check=True, capture_output=True,
                         text=True).stdout.split()
    assert out == ["15", "neighbor_allgather", "nbr_allgather", "2",
                   "coll_tuned_neighbor_allgather_algorithm", "0", "0"]
