"""The C benchmark's collectives beyond bcast/reduce/allreduce (bench/colls*.c): every
coll/tuned algorithm forced per method in paired mode under real mpirun (Open MPI), each first
call checked against the reference result, unusable methods reported per size, m < P skipped
where m is a sum of counts; and the parsing of those header lines on the Python side."""
import os
import re
import subprocess
import sys

import pytest

from collsel.core.mpi import algorithms
from collsel.sources.measure import benchmark_program as bench
from collsel.sources.measure.supervise import run_launch
from test_bench_paired import HAVE_MPICH, HAVE_OMPI, QUICK, ompi, parse

needs_ompi = pytest.mark.skipif(not HAVE_OMPI, reason="Open MPI (mpirun, mpicc) not installed")
NEW = ("allgather", "allgatherv", "alltoall", "alltoallv", "barrier", "exscan", "gather",
       "reduce_scatter", "reduce_scatter_block", "scan", "scatter")
SHORT = [*QUICK[:2], "--max-reps", "3", *QUICK[4:]]

# What m is for each collective: the quantity Open MPI 4.1.4's fixed decision computes
# (ompi/mca/coll/tuned/coll_tuned_decision_fixed.c, the line; v5.0.x: the same file and lines).
M_AXIS = {
    "bcast": ("M_TOTAL", 522), "reduce": ("M_TOTAL", 677), "allreduce": ("M_TOTAL", 67),
    "allgather": ("M_BLOCK", 1107), "allgatherv": ("M_BLOCK", 1258), "alltoall": ("M_BLOCK", 244),
    "alltoallv": ("M_BLOCK", 418), "barrier": ("M_NONE", 464), "gather": ("M_BLOCK", 1399),
    "scatter": ("M_BLOCK", 1486), "reduce_scatter": ("M_SUM", 838),
    "reduce_scatter_block": ("M_BLOCK", 986), "scan": ("M_BLOCK", None),
    "exscan": ("M_BLOCK", None),
}


def every_method(collective):
    tokens = [f"{a}:0" for a in algorithms.TUNED_ALGORITHMS[collective]]
    return ",".join(tokens + (["4:0:2"] if collective == "alltoall" else []))   # max_requests


def test_the_table_says_what_m_is_for_all_14():
    text = (bench.source_dir() / "colls.c").read_text()
    kinds = dict(re.findall(r'\{\.name = "([a-z_]+)", "\w+", (M_[A-Z]+)', text))
    assert kinds == {c: kind for c, (kind, _) in M_AXIS.items()}
    assert set(kinds) == set(algorithms.TUNED_ALGORITHMS)
    comment = (bench.source_dir() / "colls.h").read_text().split("*/", 1)[0]
    for c, (_, line) in M_AXIS.items():      # the source line is in the table's comment
        assert line is None or f":{line}" in comment, c
    assert bench.capabilities().sizeless == ("barrier",)


@pytest.mark.slow
@needs_ompi
@pytest.mark.parametrize("collective", NEW)
def test_every_method_runs_checked_or_is_marked_unusable(collective):
    sizes = ["0"] if collective == "barrier" else ["4", "100"]
    methods = every_method(collective)
    r = ompi(3, "--collective", collective, "--sizes", ",".join(sizes), "--methods", methods,
             "--seed", 5, *SHORT)
    if collective == "allgatherv":   # Open MPI registers its variables read-only for MPI_T
        assert r.returncode == 6 and r.stdout == ""
        assert "cannot set coll_tuned_allgatherv_algorithm=0 for method 0:0:0 (read-only for " \
               "MPI_T in this MPI: force it per launch, --mca)" in r.stderr, r.stderr
        return
    assert r.returncode == 0, r.stderr          # every first call matched the reference
    meta, rows = parse(r.stdout)
    assert meta["collective"] == collective and meta["forcing"] == "mpi_t"
    got = {(x["msg_size"], f"{x['algorithm']}:{x['segsize']}:{x['faninout']}") for x in rows}
    for m in sizes:
        gone = set(meta.get(f"unusable.{m}", "").split(",")) - {""}
        for token in methods.split(","):
            full = token if token.count(":") == 2 else token + ":0"
            assert ((m, full) in got) != (full in gone), (m, full)
    # two_proc algorithms refuse P = 3: unusable, the others measured
    two_proc = {"allgather": "6", "alltoall": "5", "barrier": "5"}.get(collective)
    if two_proc:
        assert all(f"{two_proc}:0:0" in meta[f"unusable.{m}"].split(",") for m in sizes)


@pytest.mark.slow
@needs_ompi
def test_a_wrong_alltoall_result_is_caught_and_named():
    r = ompi(3, "--collective", "alltoall", "--sizes", "4,100", "--methods", "0:0,2:0",
             "--fault", "corrupt@100", *SHORT)
    assert r.returncode == 5
    # 3 blocks of 100 bytes on the last rank: its last byte is damaged
    assert "wrong result at byte 299 of a 100-byte alltoall (method 0)" in r.stderr, r.stderr
    assert {x["msg_size"] for x in parse(r.stdout)[1]} == {"4"}


@pytest.mark.slow
@needs_ompi
def test_reduce_scatter_skips_m_below_p_for_every_method():
    r = ompi(4, "--collective", "reduce_scatter", "--sizes", "2,3,8", "--methods",
             "0:0,1:0,3:0", *SHORT)
    assert r.returncode == 0, r.stderr
    meta, rows = parse(r.stdout)
    assert meta["skipped"] == "2,3"
    assert [(x["msg_size"], x["algorithm"]) for x in rows] == [("8", "0"), ("8", "1"),
                                                                ("8", "3")]


@pytest.mark.slow
@needs_ompi
@pytest.mark.parametrize("collective, methods, missing", [
    ("barrier", "1:1024", "coll_tuned_barrier_algorithm_segmentsize"),
    ("scan", "1:0:2", "a fan-in/out variable"),
])
def test_a_parameter_without_its_variable_is_refused(collective, methods, missing):
    r = ompi(2, "--collective", collective, "--sizes", "0" if collective == "barrier" else "4",
             "--methods", methods, *SHORT)
    assert r.returncode == 6 and r.stdout == ""
    assert f"forcing did not take: method {methods}{':0' if methods.count(':') == 1 else ''} " \
           f"needs {missing}" in r.stderr, r.stderr


def test_skipped_and_unusable_lines_are_parsed():
    assert bench.not_measured("skipped", "2,3") == [("2", ()), ("3", ())]
    assert bench.not_measured("unusable.100", "6:0:0,4:0:2") == [("100", ("6", "0", "0")),
                                                                 ("100", ("4", "0", "2"))]
    assert bench.not_measured("unusable_rounds.4", "1") == []
    assert bench.not_measured("collective", "bcast") == []


def test_a_launch_no_longer_expects_what_it_said_it_would_not_measure():
    """supervise.run_launch drops the lines a `#@skipped=` or `#@unusable.M=` line announces,
    so such a launch ends complete; on_meta sees every header line."""
    out = ("#@collective=reduce_scatter\n#@skipped=2\n#@unusable.8=3:0:0\n"
           + "".join(f"8 {a} 0 0 1 1 1 1 0 0 3 1\n" for a in (0, 1)))
    script = f"import sys; sys.stdout.write({out!r})"
    lines = [(str(m), a, "0", "0") for m in (2, 8) for a in ("0", "1", "3")]
    seen, metas = [], []
    result = run_launch([sys.executable, "-c", script], {}, [2, 8], 30, seen.append,
                        lines=lines, names=bench.PAIRED_OUTPUT_FIELDS,
                        on_meta=lambda k, v: metas.append(k))
    assert result.failure is None
    assert [x["algorithm"] for x in seen] == ["0", "1"]
    assert metas == ["collective", "skipped", "unusable.8"]
    short = run_launch([sys.executable, "-c", script.replace("#@unusable.8=3:0:0\\n", "")], {},
                       [2, 8], 30, seen.append, lines=lines, names=bench.PAIRED_OUTPUT_FIELDS)
    assert "reported 2 of 6 lines" in short.failure


def test_a_failed_launch_keeps_the_benchmark_s_own_message():
    """mpirun's box after the benchmark's one line must not push it out of what a failed first
    launch shows (LaunchResult.stderr_last)."""
    script = ("import sys; sys.stderr.write('collsel_bench: forcing did not take: X\\n' + "
              "''.join(f'mpirun box line {i}\\n' for i in range(10))); sys.exit(6)")
    result = run_launch([sys.executable, "-c", script], {}, [4], 30, lambda f: None)
    assert result.stderr_last[0] == "collsel_bench: forcing did not take: X"
    assert result.stderr_last[1:] == [f"mpirun box line {i}" for i in range(5, 10)]


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_MPICH, reason="MPICH (mpirun.mpich, mpicc.mpich) not installed")
def test_mpich_forces_a_new_collective_by_name_and_marks_refusals():
    """MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM by name; with MPIR_CVAR_COLLECTIVE_FALLBACK=error
    recursive_doubling refuses P = 3 (not a power of two): unusable, the others measured."""
    binary = bench.locate(mpicc=bench.MPICC["mpich"])
    methods = "auto:0,brucks:0,recursive_doubling:0,ring:0"
    r = subprocess.run(["mpirun.mpich", "-np", "3", binary, "--collective", "allgather",
                        "--sizes", "4,100", "--methods", methods, *SHORT], capture_output=True,
                       text=True, timeout=120,
                       env={**os.environ, "MPIR_CVAR_COLLECTIVE_FALLBACK": "error"})
    assert r.returncode == 0, r.stderr
    meta, rows = parse(r.stdout)
    assert meta["algorithm_cvar"] == "MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM"
    assert meta["unusable.4"] == meta["unusable.100"] == "recursive_doubling:0:0"
    assert [x["algorithm"] for x in rows] == ["auto", "brucks", "ring"] * 2
