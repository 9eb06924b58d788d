"""core.mpi.fallbacks: the table of Open MPI 4.1.4's silent fallbacks, and the table reader that drops
a forced method only at the cells where it falls back (tests/forcing/test_forcing.py checks the
entries against the library itself)."""
import re

import pytest

from collsel.core.mpi import fallbacks
from collsel.core.maps.table import read_table

HEADER = "collective,comm_size,msg_size,algorithm,segsize,time_us"


@pytest.mark.parametrize("collective, alg, nprocs, m, segsize, runs", [
    ("bcast", 4, 4, 1, 0, 2),          # split_bintree at 1 byte: chain
    ("bcast", 4, 4, 2, 0, None),
    ("bcast", 4, 4, 64, 64, 2),        # segment larger than half the message
    ("bcast", 4, 4, 128, 64, None),
    ("bcast", 8, 4, 3, 0, 1),          # scatter_allgather, count < P: basic_linear
    ("bcast", 8, 4, 4, 0, None),
    ("reduce", 7, 6, 3, 0, 1),         # redscat_gather: count < pof2(6) = 4
    ("reduce", 7, 6, 4, 0, None),
    ("allreduce", 5, 4, 4096, 0, 4),   # segmented ring without a segment size: ring
    ("allreduce", 5, 4, 4096, 1024, None),
    ("allreduce", 5, 4, 4095, 1024, 4),
    ("allgather", 3, 6, 64, 0, 2),     # recursive doubling at P = 6: bruck
    ("allgather", 3, 8, 64, 0, None),
    ("allgatherv", 4, 5, 64, 0, 3),
    ("barrier", 5, 4, 0, 0, None),     # two_proc refuses: the entry runs nothing
    ("bcast", 0, 4, 1, 0, None),       # the MPI's own choice never falls back
])
def test_the_entry_that_applies(collective, alg, nprocs, m, segsize, runs):
    entry = fallbacks.fallback(collective, alg, nprocs, m, segsize)
    expected_usable = runs is None and not (collective == "barrier" and alg == 5)
    assert fallbacks.usable(collective, alg, nprocs, m, segsize) == expected_usable
    if runs is not None:
        assert entry.runs == runs


def test_every_entry_names_a_source_line():
    for entry in fallbacks.FALLBACKS:
        assert re.fullmatch(r"ompi/mca/coll/base/coll_base_\w+\.c:\d+-\d+", entry.source), entry


def test_the_table_drops_a_method_only_where_it_falls_back(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(HEADER + "\n" + "\n".join([
        "bcast,4,1,4,0,5",      # split_bintree at 1 byte ran chain: dropped
        "bcast,4,1,2,0,6",      # chain itself at 1 byte: kept
        "bcast,4,1,0,0,7",      # the default: kept
        "bcast,4,1024,4,0,8",   # split_bintree where it runs: kept
        "bcast,3,8,8,0,9",      # scatter_allgather, 8 >= P: kept
        "bcast,16,8,8,0,9",     # and 8 < P = 16: dropped
    ]) + "\n")
    table = read_table(path)
    kept = list(zip(table.comm_size.tolist(), table.msg_size.tolist(), table.algorithm.tolist()))
    assert kept == [(4, 1, 2), (4, 1, 0), (4, 1024, 4), (3, 8, 8)]
    assert table.origin == [f"{path}:{n}" for n in (3, 4, 5, 6)]
