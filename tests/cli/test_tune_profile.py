"""`collsel tune --profile FILE`: the plan holds only the profile's collectives at its P and m
(the dry run, no MPI), a bad profile is one line and exit 2 with nothing written, the
refinement is shared by time share, and (slow: the fake benchmark under real mpirun, about
15 s) the sweeps measure only the profiled points and the summary's expected saving is the
tables' figures times the profile's calls."""
import dataclasses
import json
import pathlib

import pytest

from collsel.core.maps import table as perf_table
from collsel.core.mpi import algorithms
from collsel.core.trees import treefile
from collsel.pipeline.tune import layout, plan as tune_plan, profile_region

from helpers import collsel, write_fake_bench
from test_sweep import needs_mpirun, one_error_line

WAIT_S = 300
ROOT = pathlib.Path(__file__).resolve().parents[2]


def entry(collective, p, m, calls_per_rank, time_s, ranks=2):
    return {"collective": collective, "comm_size": p, "m": m, "ppn": p, "ranks": ranks,
            "calls": calls_per_rank * ranks, "calls_per_rank": calls_per_rank,
            "time_s": time_s, "median_us": 10.0, "share": time_s / ranks / 2.0}


# allreduce most of the time at two sizes, a bcast, an alltoallv (no m: the MPI decides it by
# P alone), a sliver of barrier and a one-rank allgather
ENTRIES = [entry("allreduce", 2, 8192, 500, 0.8), entry("allreduce", 2, 8, 500, 0.2),
           entry("bcast", 2, 65536, 50, 0.1), entry("alltoallv", 2, 0, 10, 0.05),
           entry("barrier", 2, 0, 2, 0.001), entry("allgather", 1, 64, 1, 0.0002, ranks=1)]


def write_profile(path, entries=ENTRIES):
    doc = {"format": "collsel-profile", "version": 1, "command": ["mpirun", "-np", "2", "./app"],
           "library": "Open MPI v4.1.4", "ranks": 2, "hosts": 1,
           "wall_time_s": {"mean": 2.0, "max": 2.1}, "dropped_calls": 0, "entries": entries}
    path.write_text(json.dumps(doc))
    return path


def test_the_plan_is_the_profiled_collectives_at_their_p_and_m(tmp_path):
    out = tmp_path / "t"
    r = collsel("tune", "--out", out, "--profile", write_profile(tmp_path / "p.json"),
                "--budget", "10m", "--dry-run", timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("collsel tune: 2 collectives (allreduce, bcast), budget 10m")
    assert "allreduce: P = 2; m = 8,8192" in lines and "bcast: P = 2; m = 65536" in lines
    left = [line.split()[2] for line in lines if line.startswith("left out: ")]
    assert left == ["alltoallv", "barrier", "allgather"], lines
    assert any("beyond the 99% of the program's time" in line for line in lines
               if line.startswith("left out: barrier"))
    assert [line for line in lines if line.startswith("profile ")][0].endswith(
        "tuned by time share: allreduce 90.9%, bcast 9.1%")
    assert not out.exists()


def test_collectives_narrow_the_profile_and_refinement_follows_time_share(tmp_path):
    r = collsel("tune", "--out", tmp_path / "t", "--profile", write_profile(tmp_path / "p.json"),
                "--collectives", "bcast,barrier", "--budget", "10m", "--dry-run", timeout=60)
    assert r.returncode == 0, r.stderr
    # barrier's 1 ms is under 1 % of what bcast and barrier take: it is left out too
    assert r.stdout.startswith("collsel tune: 1 collective (bcast)")
    assert "left out: allreduce (" in r.stdout and "not tuned here" in r.stdout
    plan = tune_plan.TunePlan("host h", "collsel tune", "openmpi", "local", "10m", 600.0,
                              ("allreduce", "bcast"), "coarse-refine", (), (), (),
                              profile_region.read(write_profile(tmp_path / "q.json"),
                                                  "openmpi", None))
    assert profile_region.refinement_weight(plan, "allreduce") == pytest.approx(1.0 / 1.1)
    assert profile_region.refinement_weight(plan, "bcast") == pytest.approx(0.1 / 1.1)
    alone = dataclasses.replace(plan, collectives=("bcast",), profile=None)
    assert profile_region.refinement_weight(alone, "bcast") == 1.0


def spoiled(spoil):
    def write(path):
        doc_path = write_profile(path)
        doc = json.loads(doc_path.read_text())
        spoil(doc)
        doc_path.write_text(json.dumps(doc))
        return doc_path
    return write


@pytest.mark.parametrize("make, extra, message", [
    (spoiled(lambda d: d["entries"][0].update(collective="allreduc")), [],
     "entries[0].collective: 'allreduc' is not one of"),
    (spoiled(lambda d: d["entries"][1].update(calls=-5)), [],
     "entries[1].calls: -5 is less than the minimum"),
    (lambda path: (write_profile(path), path.write_text(path.read_text()[:200]))[0], [],
     "not JSON"),
    (write_profile, ["--comm-sizes", "2,4"], "the profile gives P and m; drop --comm-sizes"),
    (write_profile, ["--replay", ROOT / "bench-data" / "paired" / "bcast-openmpi.csv"],
     "with --replay: "),
    (lambda path: write_profile(path, [entry("alltoallv", 2, 0, 10, 0.05)]), [],
     "no collective of it can be tuned"),
])
def test_a_bad_profile_is_one_line_and_writes_nothing(tmp_path, make, extra, message):
    path = make(tmp_path / "p.json")
    out = tmp_path / "t"
    r = collsel("tune", "--out", out, "--profile", path, "--budget", "10m", *extra, timeout=60)
    line = one_error_line(r)
    assert message in line and (str(path) in line or "--" in line), line
    assert r.stdout == "" and not out.exists()


@needs_mpirun
@pytest.mark.slow
def test_a_profiled_tune_measures_only_the_profile_and_prices_its_calls(tmp_path):
    bench = write_fake_bench(tmp_path / "fake_bench.sh")
    out = tmp_path / "t"
    r = collsel("tune", "--out", out, "--profile", write_profile(tmp_path / "p.json"),
                "--bench", bench, "--budget", "2m", "--timeout", "60",
                "--progress-interval", "1000", timeout=WAIT_S,
                env={**__import__("os").environ, "FAKE_BENCH_CROSS": "1"})
    assert r.returncode == 0, r.stderr
    recorded = json.loads((out / layout.PLAN).read_text())
    assert recorded["collectives"] == ["allreduce", "bcast"] and "profile" in recorded
    assert sorted(p.name for p in out.iterdir() if (p / "table.csv").exists()) == \
        ["allreduce", "bcast"]
    for collective, cells in (("allreduce", {(2, 8), (2, 8192)}), ("bcast", {(2, 65536)})):
        perf = perf_table.read_table(layout.table(out, collective), measured=True)
        assert set(zip(perf.comm_size.tolist(), perf.msg_size.tolist())) == cells
    # the saving of bcast's one point, from its table and tree: 50 calls per rank x (default
    # time - the tree's method's time)
    perf = perf_table.read_table(layout.table(out, "bcast"))
    tree = treefile.load(layout.tree_json(out, "bcast"))
    chosen = tree.methods[int(tree.decide([[2], [65536]])[0])]

    def time_of(method):
        rows = ((perf.algorithm == method.algorithm) & (perf.segsize == method.segsize)
                & (perf.faninout == method.faninout))
        return float(perf.time_us[rows][0])
    saved_ms = 50 * (time_of(algorithms.Method(0, 0, 0)) - time_of(chosen)) / 1e3
    lines = r.stdout.splitlines()
    start = lines.index(f"for the application profiled in {tmp_path / 'p.json'} (2 s per rank):")
    bcast = lines[start + 3].split()
    assert bcast[:3] == ["bcast", "50", "ms"] and float(bcast[3]) == pytest.approx(saved_ms,
                                                                                   rel=0.01)
    assert lines[start + 4].startswith("  expected saving against Open MPI's default: ")
    assert "(in sample: " in lines[start + 4]


def test_resume_takes_the_recorded_profile_not_a_new_one(tmp_path):
    r = collsel("tune", "--out", tmp_path / "t", "--resume", "--profile",
                write_profile(tmp_path / "p.json"), timeout=60)
    assert "drop --profile" in one_error_line(r)
