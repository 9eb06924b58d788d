"""The C benchmark program on its own, under real mpirun (sources: generator/collsel/sources/
measure/bench/)."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from collsel.sources.measure import benchmark_program as bench

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None or shutil.which("mpicc") is None,
                                reason="Open MPI (mpirun, mpicc) not installed; run make setup")

ROOT = ["--allow-run-as-root"] if os.geteuid() == 0 else []


def mpirun(binary, nprocs, *args, mca=None, env=None, timeout=120):
    cmd = ["mpirun", *ROOT, "--oversubscribe", "-np", str(nprocs)]
    for k, v in (mca or {}).items():
        cmd += ["--mca", k, str(v)]
    return subprocess.run(cmd + [binary, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def parse(stdout):
    meta, rows = {}, []
    for line in stdout.splitlines():
        if line.startswith("#@"):
            k, _, v = line[2:].partition("=")
            meta[k] = v
        elif line and not line.startswith("#"):
            f = line.split()
            rows.append(dict(m=int(f[0]), mean=float(f[1]), median=float(f[2]), min=float(f[3]),
                             max=float(f[4]), stdev=float(f[5]), ci=float(f[6]), n=int(f[7]),
                             met=int(f[8])))
    return meta, rows


@pytest.fixture(scope="module")
def binary():
    return bench.locate()


@pytest.mark.parametrize("args, message", [
    (["--collective", "allgathr", "--sizes", "1"], "unknown collective 'allgathr' (known: "
     "bcast, reduce, allreduce, allgather, allgatherv, alltoall, alltoallv, barrier, exscan, "
     "gather, reduce_scatter, reduce_scatter_block, scan, scatter)"),
    (["--collective", "barrier", "--sizes", "0,4"], "barrier has no message size: pass --sizes 0"),
    (["--collective", "bcast", "--sizes", "1,x"], "bad message size 'x'"),
    (["--collective", "bcast", "--sizes", "3G"], "exceeds INT_MAX"),
    (["--collective", "bcast"], "--sizes is required"),
    (["--sizes", "1"], "--collective is required"),
    (["--collective", "bcast", "--sizes", "1", "--min-reps", "1"], "--min-reps '1'"),
    (["--collective", "bcast", "--sizes", "1", "--bogus", "1"], "unknown option '--bogus'"),
    (["--collective", "bcast", "--sizes", "1", "--time-cap"], "needs a value"),
    (["--collective", "bcast", "--sizes", "1", "--runtime", "wall"], "--runtime 'wall'"),
])
def test_bad_arguments(binary, args, message):
    r = mpirun(binary, 1, *args, timeout=60)
    assert r.returncode != 0
    first = r.stderr.splitlines()[0]
    assert first.startswith("collsel_bench: ") and message in first, r.stderr
    assert r.stdout == ""


def test_output_is_self_describing_and_consistent(binary):
    sizes = [0, 1, 3, 1000, 65536, 1 << 20]
    r = mpirun(binary, 3, "--collective", "bcast", "--sizes", ",".join(map(str, sizes)),
               "--time-cap", "0.05", mca={"coll_tuned_use_dynamic_rules": 1,
                                          "coll_tuned_bcast_algorithm": 7})
    assert r.returncode == 0, r.stderr
    meta, rows = parse(r.stdout)
    assert meta["nprocs"] == "3" and meta["collective"] == "bcast"
    assert meta["mpi_library"].startswith("Open MPI")
    assert meta["coll_tuned_bcast_algorithm"] == "7"
    assert meta["runtime_type"] == "global_max_end_minus_min_start"   # one node, one clock
    assert [x["m"] for x in rows] == sizes
    for x in rows:
        assert 0 <= x["min"] <= x["median"] <= x["max"] and x["min"] <= x["mean"] <= x["max"]
        assert x["n"] >= 2 and x["ci"] >= 0
        assert x["met"] == (x["n"] >= 5 and x["ci"] <= 0.025 * x["mean"])


def test_local_runtime_is_available(binary):
    r = mpirun(binary, 2, "--collective", "reduce", "--sizes", "64", "--runtime", "local",
               "--time-cap", "0.01")
    assert r.returncode == 0, r.stderr
    meta, rows = parse(r.stdout)
    assert meta["runtime_type"] == "max_over_ranks_of_local_time" and rows[0]["median"] > 0


@pytest.mark.parametrize("collective, algs", [("bcast", range(0, 10)), ("reduce", range(0, 8))])
def test_every_forced_algorithm_gives_the_right_result(binary, collective, algs):
    """The program checks each result (bcast data, reduce sums) and aborts when wrong; odd P and
    odd sizes exercise the segment remainders."""
    for alg in algs:
        r = mpirun(binary, 3, "--collective", collective, "--sizes", "1,4097,100003",
                   "--time-cap", "0.005", "--warmup", "1",
                   mca={"coll_tuned_use_dynamic_rules": 1,
                        f"coll_tuned_{collective}_algorithm": alg,
                        f"coll_tuned_{collective}_algorithm_segmentsize": 1024})
        assert r.returncode == 0, (alg, r.stderr[-500:])
        assert len(parse(r.stdout)[1]) == 3


def test_no_out_of_bounds_access_under_asan(tmp_path):
    """Built with AddressSanitizer: no access outside the buffers for any size."""
    exe = tmp_path / "bench_asan"
    build = subprocess.run(bench.compile_command("mpicc", exe, ["-fsanitize=address", "-g",
                                                                 "-O1", "-std=c99"]),
                           capture_output=True, text=True, timeout=300)
    if build.returncode != 0:
        pytest.skip("mpicc cannot build with -fsanitize=address: " + build.stderr[-200:])
    for collective in ("bcast", "reduce"):
        r = mpirun(str(exe), 3, "--collective", collective, "--sizes", "0,1,7,4097,262147",
                   "--time-cap", "0.005", env={"ASAN_OPTIONS": "detect_leaks=0"})
        assert r.returncode == 0 and "AddressSanitizer" not in r.stderr, r.stderr[-1000:]


def test_the_shipped_capabilities_are_what_the_program_reports(binary):
    """capabilities.json, which collsel reads before launching, is the program's own
    --capabilities output (no MPI launcher needed); `make bench-capabilities` rewrites it."""
    done = subprocess.run([binary, "--capabilities"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    shipped = bench.source_dir() / bench.CAPABILITIES_FILE
    assert shipped.read_text() == done.stdout, "run `make bench-capabilities`"
    reported = bench.capabilities_from(json.loads(done.stdout), "--capabilities")
    assert reported == bench.capabilities()
    assert reported.sizeless == ("barrier",) and len(reported.collectives) == 14


HARNESS_PROBE = Path(__file__).parents[3] / "c" / "harness_probe.c"


@pytest.fixture(scope="module")
def harness_probe(tmp_path_factory):
    out = tmp_path_factory.mktemp("harness_probe") / "harness_probe.so"
    subprocess.run(["mpicc", "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror", "-o",
                    str(out), str(HARNESS_PROBE)], check=True, timeout=120)
    return out


@pytest.mark.parametrize("paired", [False, True], ids=["per-launch", "paired-probe"])
def test_an_interposed_library_sees_only_the_measured_calls(binary, harness_probe, tmp_path,
                                                            paired):
    """The harness's barriers, reductions, gathers and communicators go through PMPI_*: a
    library preloaded over MPI_* (tests/c/harness_probe.c) sees the measured MPI_Bcast calls
    alone, one per warm-up call (--warmup 1) and timed repetition of every size and method, and
    nothing of the paired mode's forcing or of the probe run before every round."""
    methods = ["--methods", "0:0,6:0", "--probe", "4"] if paired else []
    r = subprocess.run(["mpirun", *ROOT, "--oversubscribe", "--mca", "coll_tuned_use_dynamic_rules",
                        "1", "-x", f"LD_PRELOAD={harness_probe}", "-x",
                        f"HARNESS_PROBE_DIR={tmp_path}", "-np", "2", binary, "--collective",
                        "bcast", "--sizes", "1,4096", "--min-reps", "3", "--max-reps", "3",
                        "--warmup", "1", *methods], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = [line.split() for line in r.stdout.splitlines() if line[:1].isdigit()]
    assert len(lines) == (4 if paired else 2)
    calls = 1 + int(lines[0][10 if paired else 7])    # per line: the warm-up call and n timed
    assert all(int(f[10 if paired else 7]) + 1 == calls for f in lines)
    for rank in (0, 1):
        seen = (tmp_path / f"calls.{rank}").read_text().splitlines()
        assert seen == [f"MPI_Bcast {calls * len(lines)}"], (rank, seen)
