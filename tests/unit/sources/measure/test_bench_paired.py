"""The C benchmark's paired mode (--methods; protocol B) under real mpirun: Open MPI and MPICH."""
import os
import shutil
import subprocess

import pytest

from collsel.sources.measure import benchmark_program as bench

HAVE_OMPI = shutil.which("mpirun") is not None and shutil.which("mpicc") is not None
HAVE_MPICH = shutil.which("mpirun.mpich") is not None and shutil.which("mpicc.mpich") is not None
ROOT = ["--allow-run-as-root"] if os.geteuid() == 0 else []
METHODS = "0:0,6:0,1:0,9:1024,2:1024:2"
QUICK = ["--min-reps", "2", "--max-reps", "4", "--warmup", "1", "--time-cap", "0.02"]


def ompi(nprocs, *args, timeout=60):
    cmd = ["mpirun", *ROOT, "--oversubscribe", "--mca", "mpi_yield_when_idle", "1",
           "--mca", "coll_tuned_use_dynamic_rules", "1", "-np", str(nprocs), bench.locate()]
    return subprocess.run(cmd + list(map(str, args)), capture_output=True, text=True,
                          timeout=timeout)


def parse(stdout):
    """(#@ header items, rows as dicts keyed by PAIRED_OUTPUT_FIELDS)."""
    meta, rows = {}, []
    for line in stdout.splitlines():
        if line.startswith("#@"):
            key, _, value = line[2:].partition("=")
            meta[key] = value
        elif line and not line.startswith("#"):
            fields = line.split()
            assert len(fields) == len(bench.PAIRED_OUTPUT_FIELDS), line
            rows.append(dict(zip(bench.PAIRED_OUTPUT_FIELDS, fields)))
    return meta, rows


def raw_order(path):
    """(method, round) in the order the calls were made, from a --raw file."""
    lines = path.read_text().splitlines()
    assert lines[0].startswith("#@collsel_bench_version=")
    header = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    assert lines[header].split() == ["test", "nrep", "count", "runtime_sec", "algorithm",
                                     "segsize", "faninout"]
    rows = [line.split() for line in lines[header + 1:]]
    assert all(r[0] == "MPI_Bcast" and float(r[3]) > 0 for r in rows)
    return [(r[2], r[1], f"{r[4]}:{r[5]}") for r in rows]


@pytest.mark.skipif(not HAVE_OMPI, reason="Open MPI (mpirun, mpicc) not installed")
@pytest.mark.parametrize("nprocs, collective", [(2, "bcast"), (4, "bcast"), (4, "reduce")])
def test_one_line_per_method_in_order(nprocs, collective):
    methods = METHODS if collective == "bcast" else "0:0,5:0,1:0,7:0,3:1024"
    sizes = [4, 100, 4096]
    r = ompi(nprocs, "--collective", collective, "--sizes", ",".join(map(str, sizes)),
             "--methods", methods, "--seed", 7, *QUICK)
    assert r.returncode == 0, r.stderr
    meta, rows = parse(r.stdout)
    assert meta["mode"] == "paired" and meta["seed"] == "7" and meta["methods"] == methods
    assert meta["forcing"] == "mpi_t" and meta["mpi_family"] == "openmpi"
    assert meta["nprocs"] == str(nprocs) and meta["collective"] == collective
    tokens = methods.split(",")
    assert [(int(x["msg_size"]), f"{x['algorithm']}:{x['segsize']}") for x in rows] == \
        [(m, ":".join(t.split(":")[:2])) for m in sizes for t in tokens]
    for x in rows:
        assert x["faninout"] == ("2" if x["algorithm"] == "2" else "0")
        low, mid, high = (float(x[k]) for k in ("min_us", "median_us", "max_us"))
        assert 0 < low <= mid <= high and 2 <= int(x["n"]) <= 4


@pytest.mark.skipif(not HAVE_OMPI, reason="Open MPI (mpirun, mpicc) not installed")
def test_a_wrong_result_is_caught_and_named():
    r = ompi(2, "--collective", "bcast", "--sizes", "16,100", "--methods", METHODS,
             "--fault", "corrupt@100", *QUICK)
    assert r.returncode == 5
    assert "wrong result at byte 99 of a 100-byte bcast (method 0)" in r.stderr, r.stderr
    assert [x["msg_size"] for x in parse(r.stdout)[1]] == ["16"] * 5   # nothing of size 100


@pytest.mark.skipif(not HAVE_OMPI, reason="Open MPI (mpirun, mpicc) not installed")
@pytest.mark.parametrize("methods, message", [
    ("x:0", "algorithm 'x' must be a coll/tuned id"),
    ("6", "must be ALG:SEGSIZE[:FANINOUT]"),
    ("6:0:1:2", "must be ALG:SEGSIZE[:FANINOUT]"),
    ("6:-1", "bad segment size '-1'"),
    ("6:0:x", "bad fan-in/out 'x'"),
    ("6:0,6:0", "'6' is listed twice"),
    ("99:0", "'99' is not a coll/tuned bcast algorithm (known: 0, 1, 2"),
    (",", "--methods lists no method"),
])
def test_bad_methods_are_usage_errors(methods, message):
    r = ompi(2, "--collective", "bcast", "--sizes", "4", "--methods", methods, *QUICK)
    assert r.returncode == 2
    assert r.stderr.startswith("collsel_bench: ") and message in r.stderr.splitlines()[0], \
        r.stderr
    assert r.stdout == ""


@pytest.mark.skipif(not HAVE_OMPI, reason="Open MPI (mpirun, mpicc) not installed")
def test_seed_without_methods_is_a_usage_error():
    r = ompi(1, "--collective", "bcast", "--sizes", "4", "--seed", "3")
    assert r.returncode == 2 and "--seed and --raw need --methods" in r.stderr


@pytest.mark.skipif(not HAVE_OMPI, reason="Open MPI (mpirun, mpicc) not installed")
def test_the_seed_fixes_the_call_order(tmp_path):
    orders = {}
    for name, seed in (("a", 11), ("b", 11), ("c", 12)):
        r = ompi(2, "--collective", "bcast", "--sizes", "4,64", "--methods", METHODS,
                 "--seed", seed, "--raw", tmp_path / name, "--min-reps", "4", "--max-reps",
                 "4", "--warmup", "1")
        assert r.returncode == 0, r.stderr
        orders[name] = raw_order(tmp_path / name)
    assert len(orders["a"]) == 2 * 4 * 5        # sizes x rounds x methods
    assert orders["a"] == orders["b"] and orders["a"] != orders["c"]
    for m in ("4", "64"):                        # each round calls every method once
        for rnd in range(4):
            called = [x[2] for x in orders["a"] if x[:2] == (m, str(rnd))]
            assert sorted(called) == sorted(":".join(t.split(":")[:2])
                                            for t in METHODS.split(","))


@pytest.mark.skipif(not HAVE_MPICH, reason="MPICH (mpirun.mpich, mpicc.mpich) not installed")
def test_mpich_forces_its_own_algorithms_by_name():
    binary = bench.locate(mpicc=bench.MPICC["mpich"])
    assert binary != bench.locate()              # the Open MPI build stays beside it
    methods = "auto:0,binomial:0,scatter_ring_allgather:0"
    r = subprocess.run(["mpirun.mpich", "-np", "2", binary, "--collective", "bcast", "--sizes",
                        "8,1024", "--methods", methods, *QUICK], capture_output=True, text=True,
                       timeout=60, env={**os.environ, "MPIR_CVAR_COLLECTIVE_FALLBACK": "error"})
    assert r.returncode == 0, r.stderr
    meta, rows = parse(r.stdout)
    assert meta["mpi_family"] == "mpich" and meta["collective_fallback"] == "error"
    # the values MPICH 4.0's enum gives these names (core/mpi/algorithms.py's MPICH ids)
    assert meta["algorithm_values"] == "auto=0,binomial=1,scatter_ring_allgather=5"
    assert [x["algorithm"] for x in rows] == methods.replace(":0", "").split(",") * 2
    bad = subprocess.run(["mpirun.mpich", "-np", "2", binary, "--collective", "bcast",
                          "--sizes", "8", "--methods", "knomial:0", *QUICK],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "'knomial' is not an MPICH bcast algorithm" in bad.stderr
