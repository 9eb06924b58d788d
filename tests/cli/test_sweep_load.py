"""`collsel sweep --load-levels` (issue 19) under real mpirun, with a fake benchmark and a fake
stress-ng: the load is made around each launch and only then, levels interleave launch by
launch, rows carry load_level and probe_us (what the benchmark's probe saw), the table says how
the load was made, `collsel build --z probe_us` separates the levels by the probe alone, and
what the flags refuse.

The fake stress-ng (first on PATH) writes its arguments to $FAKE_LOAD_MARK while it runs and
removes the file when stopped. The fake benchmark reads that file: its probe is 5 µs without
load and 200 µs under a load with `--cpu`; without load method i (in --methods order) takes
10 + i µs, under load 10 + (n - 1 - i) µs, so the best method flips with the load.
"""
import os
import shutil
import subprocess
import sys

import pytest

from collsel.core.io import csvfile
from collsel.sources.sweep import load

needs_mpirun = pytest.mark.skipif(shutil.which("mpirun") is None,
                                  reason="Open MPI (mpirun) not installed; run make setup")
WAIT_S = 120
LEVELS = ("off", "high")
SIZES = (1, 2)
LAUNCHES = 3

FAKE_STRESS = r"""#!/bin/sh
echo "$*" > "$FAKE_LOAD_MARK"
trap 'rm -f "$FAKE_LOAD_MARK"; exit 0' TERM INT
while :; do sleep 0.05; done
"""

FAKE_BENCH = r"""#!/bin/sh
sizes=""; methods=""; seed=1; probe=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes="$2"; shift 2;;
    --methods) methods="$2"; shift 2;;
    --seed) seed="$2"; shift 2;;
    --probe) probe="$2"; shift 2;;
    *) shift;;
  esac
done
[ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] || exit 0
loaded=0
if [ -f "$FAKE_LOAD_MARK" ] && grep -q -- "--cpu" "$FAKE_LOAD_MARK"; then loaded=1; fi
echo "#@mpi_library=fake benchmark"
echo "#@runtime_type=fake"
echo "#@timer=fake"
echo "#@mode=paired"
echo "#@seed=$seed"
[ -n "$probe" ] && echo "#@probe=fake $probe"
for m in $(echo "$sizes" | tr , ' '); do
  echo "$methods" | tr , '
' | awk -v m="$m" -v loaded="$loaded" -v probe="$probe" -v n="$(echo "$methods" | tr , '
' | wc -l)" '
    { split($0, f, ":"); t = 10 + (loaded ? n - NR : NR - 1)
      line = sprintf("%s %s %s %s %.6f %.6f %.6f %.6f 1 0.5 20 1", m, f[1], f[2], f[3], t, t,
                     t - 1, t + 2)
      if (probe != "") line = line " " (loaded ? 200 : 5)
      print line }'
  [ -n "$probe" ] && echo "#@probe_rounds.$m=5,5,5"
done
exit 0
"""


@pytest.fixture
def fakes(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, text in (("stress-ng", FAKE_STRESS), ("fake_bench.sh", FAKE_BENCH)):
        (bindir / name).write_text(text)
        (bindir / name).chmod(0o755)
    mark = tmp_path / "load.mark"
    env = {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "FAKE_LOAD_MARK": str(mark)}
    return bindir / "fake_bench.sh", env, mark


def sweep_args(out, bench, *extra):
    return ["sweep", "--collective", "bcast", "--out", str(out), "--bench", str(bench),
            "--comm-sizes", "2", "--algorithms", "linear,binomial:0",
            "--msg-sizes", ",".join(map(str, SIZES)), "--launches", str(LAUNCHES),
            "--timeout", "60", "--progress-interval", "1000", *extra]


def collsel(args, env=None, timeout=WAIT_S):
    return subprocess.run([sys.executable, "-m", "collsel.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def rows_of(path):
    doc = csvfile.read(str(path))
    return doc.metadata, [dict(zip(doc.header, fields)) for _, fields in doc.rows]


@needs_mpirun
@pytest.mark.slow
def test_levels_interleave_and_rows_carry_the_level_and_the_probe(tmp_path, fakes):
    bench, env, mark = fakes
    out = tmp_path / "b.csv"
    r = collsel(sweep_args(out, bench, "--load-levels", ",".join(LEVELS)), env)
    assert r.returncode == 0, r.stderr
    assert not mark.exists()                    # the load was stopped after the last launch
    meta, rows = rows_of(out)
    assert meta["load"].startswith("stress-cpu (") and "high: " in meta["load"]
    assert meta["load_levels"].startswith("off,high: ")
    assert meta["probe"].startswith("benchmark --probe 8:200 ")
    assert "--load-levels off,high --load stress-cpu" in meta["options"]
    assert "--probe 8:200" in meta["options"]
    assert len(rows) == len(LEVELS) * len(SIZES) * 3
    for row in rows:
        high = row["load_level"] == "high"
        assert row["load_level"] in LEVELS
        # the probe saw the load exactly in the launches of level high
        assert float(row["probe_us"]) == (200 if high else 5)
        best = row["algorithm"] == ("6" if high else "0")
        assert row["tied"] == ("1" if best else "0")
    # levels interleave: in the journal, launch k of every level before launch k + 1 of any
    journal = str(out) + ".launches"
    _, jrows = rows_of(journal)
    with open(journal) as f:
        marks = [ln[2:].split("=", 1)[0] for ln in f if ln.startswith("# launch.")]
    assert marks == [f"launch.2@{level}.{k}" for k in range(1, LAUNCHES + 1) for level in LEVELS]
    seeds = {(r["load_level"], r["launch"]): r["seed"] for r in jrows}
    assert len(set(seeds.values())) == len(LEVELS) * LAUNCHES
    assert all(r["probe_us"] in ("5", "200") for r in jrows)


@needs_mpirun
@pytest.mark.slow
def test_build_on_the_probe_axis_separates_the_levels(tmp_path, fakes):
    bench, env, _ = fakes
    out = tmp_path / "b.csv"
    assert collsel(sweep_args(out, bench, "--load-levels", "off,high"), env).returncode == 0
    r = collsel(["build", out, "--collective", "bcast", "--z", "probe_us", "--out",
                 tmp_path / "tree"])
    assert r.returncode == 0, r.stderr
    assert "probe_us: the best method differs between probe_us values in 2 of 2" in r.stdout
    answers = {}
    for z in (0, 5, 104, 105, 200, 10**6):
        q = collsel(["query", tmp_path / "tree" / "tree.json", "--ids", "--comm-size", 2,
                     "--msg-size", 1, "--z", z])
        assert q.returncode == 0, q.stderr
        answers[z] = q.stdout.split()[0]
    # bins 5 and 200 (the cells' whole-µs probes), cut at the midpoint 103 (+1 = 103)
    assert answers == {0: "0", 5: "0", 104: "6", 105: "6", 200: "6", 10**6: "6"}


@needs_mpirun
@pytest.mark.slow
def test_resume_keeps_the_levels_and_the_dry_run_names_the_load(tmp_path, fakes):
    bench, env, mark = fakes
    out = tmp_path / "b.csv"
    dry = collsel(sweep_args(out, bench, "--load-levels", "off,high", "--dry-run"), env)
    assert dry.returncode == 0, dry.stderr
    loads = [ln for ln in dry.stdout.splitlines() if ln.startswith("# load ")]
    assert loads[:2] == ["# load off: nothing",
                         f"# load high: stress-ng --cpu {2 * load.StressCpu().cores} "
                         "--cpu-load 100 --quiet"]
    assert all("--probe 8:200" in ln for ln in dry.stdout.splitlines()
               if ln.startswith("mpirun"))
    assert not out.exists() and not mark.exists()
    assert collsel(sweep_args(out, bench, "--load-levels", "off,high"), env).returncode == 0
    again = collsel(sweep_args(out, bench, "--load-levels", "off,low,high", "--resume"), env)
    assert again.returncode == 2 and "--load-levels off,low,high (recorded off,high)" in \
        again.stderr


@pytest.mark.parametrize("extra, message", [
    (("--load-levels", "off,extreme"), "unknown level 'extreme'"),
    (("--load-levels", "off,off"), "listed twice"),
    (("--load-levels", ","), "empty list"),
    (("--load", "stress-cpu"), "--load stress-cpu needs --load-levels"),
    (("--load-levels", "off,low", "--load", "iperf3"), "give --cluster"),
    (("--load-levels", "off,low", "--raw", "x.raw"), "--raw with --load-levels"),
    (("--load-levels", "off,low", "--mode", "per-method"), "--load-levels needs --mode paired"),
    (("--probe", "0:200"), "--probe (REPS)"),
    (("--probe", "8:-1"), "--probe (CAP_US)"),
])
def test_bad_load_flags_are_one_line_and_exit_2(tmp_path, fakes, extra, message):
    bench, env, _ = fakes
    r = collsel(sweep_args(tmp_path / "b.csv", bench, *extra, "--dry-run"), env)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
