"""The C benchmark's allreduce under real mpirun at P=2 (Open MPI): every coll/tuned algorithm
forced per method, the result checked on every rank, m = count bytes of MPI_UNSIGNED_CHAR (what
4.1.4's fixed decision computes: dsize * count)."""
import re

import pytest

from collsel.core.mpi import algorithms
from collsel.sources.measure import benchmark_program as bench
from test_bench_paired import HAVE_OMPI, QUICK, ompi, parse

needs_ompi = pytest.mark.skipif(not HAVE_OMPI, reason="Open MPI (mpirun, mpicc) not installed")
METHODS = ",".join(f"{a}:{1024 if algorithms.segments('allreduce', a) else 0}"
                   for a in algorithms.TUNED_ALGORITHMS["allreduce"])


@pytest.mark.slow
@needs_ompi
def test_every_algorithm_forced_per_method():
    sizes = [4, 100, 65536]
    r = ompi(2, "--collective", "allreduce", "--sizes", ",".join(map(str, sizes)),
             "--methods", METHODS, "--seed", 3, *QUICK)
    assert r.returncode == 0, r.stderr
    meta, rows = parse(r.stdout)
    assert meta["collective"] == "allreduce" and meta["forcing"] == "mpi_t"
    assert meta["datatype"] == "MPI_UNSIGNED_CHAR" and meta["op"] == "MPI_SUM"
    # m is the byte count of the call: one MPI_UNSIGNED_CHAR per byte, dsize * count
    assert [(int(x["msg_size"]), f"{x['algorithm']}:{x['segsize']}") for x in rows] == \
        [(m, t) for m in sizes for t in METHODS.split(",")]
    assert all(0 < float(x["min_us"]) <= float(x["max_us"]) for x in rows)


@pytest.mark.slow
@needs_ompi
def test_a_wrong_result_is_caught_and_named():
    r = ompi(2, "--collective", "allreduce", "--sizes", "16,100", "--methods", METHODS,
             "--fault", "corrupt@100", *QUICK)
    assert r.returncode == 5
    assert "wrong result at byte 99 of a 100-byte allreduce (method 0)" in r.stderr, r.stderr
    assert {x["msg_size"] for x in parse(r.stdout)[1]} == {"16"}   # nothing of size 100


@pytest.mark.slow
@needs_ompi
def test_a_hierarchical_method_is_refused():
    r = ompi(2, "--collective", "allreduce", "--sizes", "4",
             "--methods", f"{algorithms.HIER_BASE + 211}:0", *QUICK)
    assert r.returncode == 2 and r.stdout == ""
    assert "hierarchical method '1000211' exists for bcast and reduce only" in r.stderr, r.stderr


def test_m_is_the_byte_count_open_mpi_decides_on():
    """4.1.4's allreduce_intra_dec_fixed decides on dsize * count: the benchmark calls
    MPI_Allreduce with count = m elements of a 1-byte type (M_TOTAL: count = m), so its m is
    that product."""
    calls = (bench.source_dir() / "colls_reduce.c").read_text()
    table = (bench.source_dir() / "colls.c").read_text()
    call = re.search(r"MPI_Allreduce\(s, r, sh->(\w+), (\w+), MPI_SUM, c\)", calls)
    assert call and call.groups() == ("count", "UC")
    assert "#define UC MPI_UNSIGNED_CHAR" in calls
    assert '{.name = "allreduce", "MPI_Allreduce", M_TOTAL,' in table
    assert "return (long long)m;" in table          # M_TOTAL: count = m
