"""The real benchmark's --probe (bench/round_probe.c running runtime/collsel_probe.c) under
real mpirun: the probe before every round, the probe_us field and the rounds' line, and nothing
of it without --probe.
"""
import shutil
import statistics
import subprocess

import pytest

from collsel.sources.measure import benchmark_program as bench

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None or shutil.which("mpicc") is None,
                                reason="Open MPI (mpirun, mpicc) needed; run make setup")
TIMEOUT_S = 120
FLAGS = ("--allow-run-as-root", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1",
         "--mca", "coll_tuned_use_dynamic_rules", "1")
METHODS = "0:0:0,1:0:0,6:0:0"


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    return bench.compile_bench(tmp_path_factory.mktemp("bench") / "collsel_bench")


def run(binary, np, *args):
    cmd = ["timeout", str(TIMEOUT_S), "mpirun", *FLAGS, "-np", str(np), str(binary),
           "--collective", "bcast", "--time-cap", "0.01", "--max-reps", "12", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S + 30)


@pytest.mark.parametrize("np", [2, 3])
def test_probe_before_every_round(binary, np):
    r = run(binary, np, "--sizes", "1,4097", "--methods", METHODS, "--probe", "4:100")
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    probe = [ln for ln in lines if ln.startswith("#@probe=")]
    assert len(probe) == 1 and probe[0].startswith("#@probe=collsel_probe 1.0.0 before every "
                                                   "round") and "at most 4 per pair" in probe[0]
    assert "#msg_size algorithm segsize faninout mean_us median_us min_us max_us stdev_us " \
           "ci_halfwidth_us n ci_met probe_us" in lines
    data = [ln.split() for ln in lines if ln and not ln.startswith("#")]
    assert [d[0] for d in data] == ["1"] * 3 + ["4097"] * 3
    assert all(len(d) == len(bench.PAIRED_OUTPUT_FIELDS) + 1 for d in data)
    for m in ("1", "4097"):
        rounds = [float(x) for ln in lines if ln.startswith(f"#@probe_rounds.{m}=")
                  for x in ln.split("=", 1)[1].split(",")]
        mine = [d for d in data if d[0] == m]
        assert len({d[-1] for d in mine}) == 1          # one probe per size: the methods' rounds
        assert len(rounds) == int(mine[0][-3])          # a probe before every round (n rounds)
        assert all(x > 0 for x in rounds)
        assert float(mine[0][-1]) == pytest.approx(statistics.median(rounds), rel=1e-5)


def test_without_probe_nothing_changes(binary):
    r = run(binary, 2, "--sizes", "1", "--methods", METHODS)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "probe" not in r.stdout
    data = [ln.split() for ln in r.stdout.splitlines() if ln and not ln.startswith("#")]
    assert all(len(d) == len(bench.PAIRED_OUTPUT_FIELDS) for d in data) and len(data) == 3


@pytest.mark.parametrize("args, message", [
    (("--sizes", "1", "--probe", "4"), "--probe needs --methods (paired mode)"),
    (("--sizes", "1", "--methods", METHODS, "--probe", "0"), "--probe '0' must be REPS"),
    (("--sizes", "1", "--methods", METHODS, "--probe", "4:x"), "--probe '4:x' must be REPS"),
])
def test_bad_probe_options(binary, args, message):
    r = run(binary, 2, *args)
    assert r.returncode != 0 and message in r.stderr, r.stderr[-2000:]


def test_the_shared_sources_are_part_of_the_cache_key(tmp_path, monkeypatch):
    """The run-time probe and the MPI_T code are compiled into the benchmark from beside it
    (links to runtime/ and include/ in the checkout, copies in a wheel), so an edit of either
    rebuilds the cached binary."""
    for name in ("collsel_probe.c", "collsel_probe.h", "collsel_cvar.c", "collsel_cvar.h"):
        assert (bench.source_dir() / name).is_file(), name
    copy = tmp_path / "bench"
    shutil.copytree(bench.source_dir(), copy)           # links followed: plain files
    monkeypatch.setattr(bench, "source_dir", lambda: copy)
    before = bench.source_digest()
    assert before == bench.source_digest() and len(before) == 64
    for name in ("collsel_probe.c", "collsel_cvar.h"):
        (copy / name).write_text((copy / name).read_text() + "\n/* edited */\n")
        after = bench.source_digest()
        assert after != before, name
        before = after
