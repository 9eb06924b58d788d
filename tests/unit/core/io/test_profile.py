"""collsel profile without an MPI (issue 41 item 1): the census and profile schemas, the merge of
the ranks' census files (core/io/profile.py), bad profiles and census files refused in one located
line with exit 2, and the whole command through a stand-in `srun` that writes the ranks' files
as libcollsel's census would (the real MPI launches: tests/integration/test_profile_mpis.py)."""
import copy
import json
import os
import stat

import jsonschema
import pytest

from collsel.commands.profile import with_census
from collsel.core import schemas
from collsel.core.io import profile
from collsel.core.mpi import algorithms
from helpers import run_in_process

HISTOGRAM = {"first_octave": 6, "octaves": 32, "steps_per_octave": 8}


def census(rank, size=2, entries=(), wall_ns=10**9, host="n0"):
    return {"format": "collsel-census", "version": 1, "rank": rank, "size": size, "host": host,
            "library": "Open MPI v4.1.4, package: Debian OpenMPI", "clock": "CLOCK_MONOTONIC",
            "wall_ns": wall_ns, "histogram": HISTOGRAM, "dropped": {"calls": 0, "ns": 0},
            "entries": list(entries)}


def entry(collective="allreduce", comm_size=2, m=8, ppn=2, buckets=((55, 3),), ns=30_000):
    return {"collective": collective, "comm_size": comm_size, "m": m, "ppn": ppn,
            "calls": sum(n for _, n in buckets), "ns": ns, "buckets": [list(b) for b in buckets]}


def two_ranks():
    return {"c.0.json": census(0, entries=[entry(buckets=((55, 3),), ns=30_000),
                                           entry("bcast", m=65536, buckets=((70, 1),),
                                                 ns=100_000_000)]),
            "c.1.json": census(1, entries=[entry(buckets=((55, 1), (60, 4)), ns=70_000)],
                               host="n1", wall_ns=3 * 10**9)}


@pytest.mark.parametrize("name", ("census", "profile"))
def test_schema_collectives_are_the_code_s(name):
    collective = schemas.schema(name)["properties"]["entries"]["items"]["properties"]["collective"]
    assert collective["enum"] == list(algorithms.ALGORITHMS)


def test_merge_sums_over_ranks_and_takes_the_median_of_all_calls():
    merged = profile.merge(two_ranks(), ["mpirun", "-n", "2", "./app"], "c.*.json")
    schemas.check(merged, "profile", "merged")            # what dumps() checks before writing
    assert merged["ranks"] == 2 and merged["hosts"] == 2 and merged["dropped_calls"] == 0
    assert merged["wall_time_s"] == {"mean": 2.0, "max": 3.0}
    bcast, allreduce = merged["entries"]                   # largest time first
    assert (bcast["collective"], bcast["ranks"], bcast["calls"]) == ("bcast", 1, 1)
    assert bcast["share"] == pytest.approx(0.1 / 4.0)      # over the wall time of both ranks
    assert (allreduce["ranks"], allreduce["calls"], allreduce["calls_per_rank"]) == (2, 8, 5)
    assert allreduce["time_s"] == pytest.approx(100e-6)
    # 8 calls: 4 in bucket 55 ([7680, 8192) ns), 4 in bucket 60 ([12288, 13312) ns): the lower
    # median (the 4th call) lies in bucket 55, reported as its midpoint
    assert allreduce["median_us"] == pytest.approx(7.936)


def test_bucket_midpoints_follow_the_documented_octaves():
    # bucket b = octave 6 + b // 8, step b % 8: [2^o (1 + s/8), 2^o (1 + (s+1)/8)) ns
    assert profile.bucket_midpoint_ns(0, HISTOGRAM) == 64 * (1 + 0.5 / 8)
    assert profile.bucket_midpoint_ns(8, HISTOGRAM) == 128 * (1 + 0.5 / 8)
    assert profile.bucket_midpoint_ns(55, HISTOGRAM) == 4096 * (1 + 7.5 / 8)
    assert profile.median_ns({3: 1, 9: 1, 20: 1}, HISTOGRAM) == \
        profile.bucket_midpoint_ns(9, HISTOGRAM)


def write(directory, docs):
    for name, doc in docs.items():
        (directory / name).write_text(json.dumps(doc))


def test_merge_refuses_a_missing_rank_and_ranks_of_another_launch(tmp_path):
    docs = two_ranks()
    del docs["c.1.json"]
    write(tmp_path, docs)
    with pytest.raises(profile.InputError, match=r"no census file of rank 1 of 2 \(1 missing\)"):
        profile.merge_prefix(tmp_path / "c", ["x"])
    write(tmp_path, {"c.1.json": census(1, size=3)})
    with pytest.raises(profile.InputError, match=r"c\.1\.json: size 3 differs from .*c\.0\.json"):
        profile.merge_prefix(tmp_path / "c", ["x"])


BAD_CENSUS = [
    (lambda d: d["entries"][0].update(calls=4), "entries[0].buckets: 3 calls in the buckets, 4"),
    (lambda d: d["entries"][0]["buckets"].append([256, 1]), "bucket 256 is beyond"),
    (lambda d: d["entries"].append(copy.deepcopy(d["entries"][0])), "the point allreduce P=2 m=8 "
     "ppn=2 again"),
    (lambda d: d.update(rank=2), "rank: 2 is not below size 2"),
    (lambda d: d["entries"][0].update(ns=-1), "entries[0].ns: -1 is less than the minimum of 0"),
]


@pytest.mark.parametrize("spoil, message", BAD_CENSUS)
def test_bad_census_files_are_refused_in_one_line(tmp_path, spoil, message):
    docs = two_ranks()
    spoil(docs["c.0.json"])
    write(tmp_path, docs)
    with pytest.raises(profile.InputError) as refused:
        profile.merge_prefix(tmp_path / "c", ["x"])
    assert str(refused.value).startswith(str(tmp_path / "c.0.json") + ": ")
    assert message in str(refused.value) and "\n" not in str(refused.value)


def good_profile(tmp_path):
    path = tmp_path / "good.json"
    path.write_text(profile.dumps(profile.merge(two_ranks(), ["srun", "./app"], "c")))
    return path


def test_show_prints_the_summary(tmp_path):
    done = run_in_process("profile", "--show", good_profile(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("collsel profile: 2 ranks on 2 host(s), Open MPI v4.1.4; wall "
                               "time 2 s per rank (mean; max 3 s), 2.50 % of it in collectives")
    assert lines[2].split() == ["bcast", "2.50", "%", "1", "calls", "over", "the", "ranks"]
    assert lines[3].split() == ["P=2", "m=64", "KiB", "ppn=2:", "2.50", "%,", "1", "calls/rank,",
                                "median", "29.7", "us"]  # bucket 70: 2^14 (1 + 6.5/8) ns


BAD_PROFILES = [
    (lambda d: d["entries"][0].update(collective="allreduc"),
     "entries[0].collective: 'allreduc' is not one of"),
    (lambda d: d["entries"][1].update(calls=-5), "entries[1].calls: -5 is less than the minimum"),
    (lambda d: d["entries"][1].update(calls_per_rank=9), "entries[1].calls_per_rank: 9 is above "
     "calls 8"),
    (lambda d: d["entries"].append(dict(d["entries"][0])), "entries[2]: the point bcast P=2 "
     "m=65536 ppn=2 again (first at entries[0])"),
    (lambda d: d["entries"][0].update(share=1.5), "entries[0].share: 1.5 is greater than the "
     "maximum of 1"),
    (lambda d: d.update(format="collsel-census"), "format: 'collsel-profile' was expected"),
]


@pytest.mark.parametrize("spoil, message", BAD_PROFILES)
def test_bad_profiles_are_refused_in_one_line(tmp_path, spoil, message):
    path = good_profile(tmp_path)
    doc = json.loads(path.read_text())
    spoil(doc)
    path.write_text(json.dumps(doc))
    done = run_in_process("profile", "--show", path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"collsel: error: {path}: ")
    assert message in done.stderr, done.stderr


def test_a_truncated_profile_is_refused_in_one_line(tmp_path):
    path = good_profile(tmp_path)
    text = path.read_text()
    path.write_text(text[:len(text) // 2])
    done = run_in_process("profile", "--show", path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"collsel: error: {path}:") and "not JSON" in done.stderr


def test_the_written_profile_fits_its_schema(tmp_path):
    doc = json.loads(good_profile(tmp_path).read_text())
    jsonschema.Draft202012Validator(schemas.schema("profile")).validate(doc)
    assert profile.read(tmp_path / "good.json") == doc


def test_census_words_go_right_after_the_launcher():
    lib, prefix = "/l/libcollsel.so", "/d/census"
    env = {"LD_PRELOAD": "/their.so"}
    words = ["timeout", "60", "mpirun", "-n", "2", "./app"]
    assert with_census(words, 2, "openmpi", lib, prefix, env) == [
        "timeout", "60", "mpirun", "-x", f"LD_PRELOAD={lib}:/their.so", "-x",
        f"COLLSEL_CENSUS={prefix}", "-n", "2", "./app"]
    assert with_census(["mpiexec", "-n", "2", "./app"], 0, "mpich", lib, prefix, {}) == [
        "mpiexec", "-genv", "LD_PRELOAD", lib, "-genv", "COLLSEL_CENSUS", prefix, "-n", "2",
        "./app"]
    assert with_census(["srun", "-n", "2", "./app"], 0, "srun", lib, prefix, {}) == [
        "srun", f"--export=ALL,LD_PRELOAD={lib},COLLSEL_CENSUS={prefix}", "-n", "2", "./app"]
    with pytest.raises(profile.InputError, match="LAUNCH sets LD_PRELOAD itself"):
        with_census(["mpirun", "-x", "LD_PRELOAD=/a.so", "./app"], 0, "openmpi", lib, prefix, {})


# A stand-in srun: finds COLLSEL_CENSUS in its --export word and writes the ranks' census files
# given in FAKE_CENSUS (a JSON {rank: document}) there, as libcollsel's ranks would; exits
# FAKE_STATUS.
FAKE_SRUN = """#!/bin/sh
prefix=$(printf '%s\\n' "$1" | sed -n 's/.*COLLSEL_CENSUS=\\([^,]*\\).*/\\1/p')
python3 - "$prefix" <<'EOF'
import json, os, sys
for rank, doc in json.loads(os.environ["FAKE_CENSUS"]).items():
    open(f"{sys.argv[1]}.{rank}.json", "w").write(json.dumps(doc))
EOF
echo "the program ran"
exit "${FAKE_STATUS:-0}"
"""


@pytest.fixture
def fake_srun(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    srun = bin_dir / "srun"
    srun.write_text(FAKE_SRUN)
    srun.chmod(srun.stat().st_mode | stat.S_IXUSR)
    lib = tmp_path / "libcollsel.so"
    lib.write_text("")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    docs = two_ranks()
    monkeypatch.setenv("FAKE_CENSUS", json.dumps({d["rank"]: d for d in docs.values()}))
    return lib


def test_profile_runs_the_launch_and_writes_the_merged_profile(tmp_path, fake_srun):
    out = tmp_path / "p.json"
    census_dir = tmp_path / "census"
    done = run_in_process("profile", "--out", out, "--libcollsel", fake_srun, "--census-dir",
                          census_dir, "--", "srun", "-n", "2", "./app")
    assert done.returncode == 0, done.stderr
    doc = profile.read(out)
    assert doc["command"] == ["srun", "-n", "2", "./app"] and len(doc["entries"]) == 2
    assert f"2 points -> {out}" in done.stdout
    assert sorted(os.listdir(census_dir)) == ["census.0.json", "census.1.json"]
    again = run_in_process("profile", "--out", out, "--libcollsel", fake_srun, "--census-dir",
                           census_dir, "--", "srun", "./app")
    assert again.returncode == 2 and "holds census files of an earlier run" in again.stderr


def test_a_failed_launch_leaves_the_output_as_it_was(tmp_path, fake_srun, monkeypatch):
    out = tmp_path / "p.json"
    out.write_text("before")
    monkeypatch.setenv("FAKE_STATUS", "3")
    done = run_in_process("profile", "--out", out, "--libcollsel", fake_srun, "--", "srun",
                          "./app")
    assert done.returncode == 1 and out.read_text() == "before"
    assert done.stderr == f"collsel: error: the launch exited with status 3; no profile written " \
                          f"to {out}\n"


def test_srun_needs_the_mpi_named(fake_srun):
    done = run_in_process("profile", "--out", "p.json", "--", "srun", "./app")
    assert done.returncode == 2 and "LAUNCH is srun: say which MPI" in done.stderr
