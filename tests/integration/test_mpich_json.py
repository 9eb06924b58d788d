"""(c) MPICH 4.0 (Debian `mpich`) with `collsel emit --target mpich-json`.

MPICH reads the file given by MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE in place of its whole
built-in MPIR selection tree. MPIR_CVAR_DEVICE_COLLECTIVES=none makes MPI_Bcast / MPI_Reduce go
to MPIR_Bcast_impl / MPIR_Reduce_impl (not the ch4 device's own composition tree), and the
*_INTRA_ALGORITHM CVARs are `auto` (their default, set explicitly), so every call is selected by
the JSON. Shown here:
  - bcast and reduce run with the generated file without assertion and with correct results
    (P = 2, 3, 4, 5, 8; 20 sizes each);
  - the file is what MPICH uses: the same file without its collective=bcast subtree makes
    MPI_Bcast fail MPICH's "no algorithm selected" assertion;
  - a forced pathological file (same tree, every bcast method mapped to
    scatter_ring_allgather) is measurably slower at P = 4, m = 1 MiB than the generated one
    (there it picks binomial): launches alternate, medians compared, under the measure lock.
"""
import fcntl
import json
import os
import pathlib
import statistics
import subprocess
import time

import pytest

from collsel.core import treefile
from collsel.sinks.emit import mpich_json

REPO = pathlib.Path(__file__).resolve().parents[2]
BASE = REPO / "build" / "mpich" / "generic.json"
PROGRAM = pathlib.Path(__file__).with_name("coll_check.c")
LOCK = "/tmp/collsel-measure.lock"
# Open MPI methods with no MPICH 4.0 counterpart (linear, chain, pipeline, binary trees,
# knomial) -> MPICH's tree algorithm, binomial; the exact counterparts come from the table.
GOOD_MAP = ",".join([f"bcast:{i}=binomial" for i in (1, 2, 3, 4, 5, 7)]
                    + [f"reduce:{i}=binomial" for i in (1, 2, 3, 4, 6)])
BAD = "MPIR_Bcast_intra_scatter_ring_allgather"
PATHOLOGICAL_MAP = ",".join(f"bcast:{i}=scatter_ring_allgather" for i in range(1, 10))
TIMED_P, TIMED_M, LAUNCHES, REPS = 4, 1048576, 5, 15
MIN_RATIO = 1.5


def collsel(*args):
    r = subprocess.run(["collsel", *map(str, args)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    if not BASE.exists():
        pytest.fail(f"{BASE} missing: run `make mpich-base` (make integration does)")
    d = tmp_path_factory.mktemp("mpich")
    trees = []
    for c in ("bcast", "reduce"):
        collsel("build", REPO / "bench-data" / f"{c}-sweep.csv", "--collective", c,
                "--max-depth", "4", "--out", d / c)
        trees.append(d / c / "tree.json")
    out = {"trees": trees}
    for name, mapping in (("generated", GOOD_MAP), ("pathological", PATHOLOGICAL_MAP)):
        out[name] = d / f"{name}.json"
        collsel("emit", "--target", "mpich-json", *trees, "--mpich-base", BASE,
                "--mpich-map", f"{GOOD_MAP},{mapping}", "--out", out[name])
    doc = json.loads(out["generated"].read_text())
    del doc["collective=bcast"]
    out["no-bcast"] = d / "no-bcast.json"
    out["no-bcast"].write_text(json.dumps(doc))
    exe = d / "coll_check"
    r = subprocess.run(["mpicc.mpich", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-o",
                        str(exe), str(PROGRAM)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out["program"] = exe
    return out


def launch(files, selection, p, *args, timeout=120):
    env = dict(os.environ, MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=str(files[selection]),
               MPIR_CVAR_DEVICE_COLLECTIVES="none", MPIR_CVAR_BCAST_INTRA_ALGORITHM="auto",
               MPIR_CVAR_REDUCE_INTRA_ALGORITHM="auto")
    cmd = ["timeout", str(timeout), "mpirun.mpich", "-np", str(p), str(files["program"]),
           *map(str, args)]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout + 30)


SIZES = {"bcast": [1, 3, 8, 9, 10, 55, 56, 100, 1000, 2508, 2509, 4096, 12288, 65536, 100000,
                   262144, 500000, 1048576, 2000000, 4194304],
         "reduce": [4, 8, 12, 56, 100, 1000, 2048, 2052, 4096, 12288, 16384, 65536, 100000,
                    131072, 262144, 500000, 1048576, 2000000, 3000000, 4194304]}


@pytest.mark.parametrize("collective", ["bcast", "reduce"])
def test_generated_json_runs_correctly(files, collective):
    for p in (2, 3, 4, 5, 8):
        r = launch(files, "generated", p, collective, *SIZES[collective])
        assert r.returncode == 0, f"P={p}: exit {r.returncode}\n{r.stdout}\n{r.stderr[-2000:]}"
        assert "Assertion" not in r.stderr and "Internal error" not in r.stderr, r.stderr
        results = [line for line in r.stdout.splitlines() if line.startswith("check ")]
        assert results == [f"check {collective} m={m} ok" for m in SIZES[collective]], r.stdout


def test_mpich_selects_from_the_file(files):
    """Without a collective=bcast subtree MPICH finds no bcast algorithm: the file is used."""
    r = launch(files, "no-bcast", 4, "bcast", 64)
    assert r.returncode != 0
    # MPIR_Bcast_allcomm_auto: MPIR_Assert(cnt) after MPIR_Csel_search
    assert "Assertion failed in file src/mpi/coll/mpir_coll.c" in r.stderr, r.stderr[-2000:]
    assert ": cnt" in r.stderr, r.stderr[-2000:]
    r = launch(files, "no-bcast", 4, "reduce", 64)       # reduce is still in the file
    assert r.returncode == 0 and "check reduce m=64 ok" in r.stdout, r.stderr[-2000:]


def choice(files, name, p, m):
    loaded = treefile.load(files["trees"][0])
    mapping = mpich_json.parse_map(f"{GOOD_MAP},{name}" if name else GOOD_MAP, ["bcast"])
    names = {**mpich_json.MPICH_NAMES["bcast"], **mapping["bcast"]}
    return names[loaded.methods[int(loaded.decide([[p], [m]])[0])].algorithm]


def test_pathological_json_is_slower(files):
    good = choice(files, "", TIMED_P, TIMED_M)
    assert good != BAD and choice(files, PATHOLOGICAL_MAP, TIMED_P, TIMED_M) == BAD
    with open(LOCK, "a") as lock:
        deadline = time.monotonic() + 1800
        while True:                                   # wait for the measurement lock, bounded
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pytest.fail(f"{LOCK} held by another measurement for 30 minutes")
                time.sleep(2)
        times = {"generated": [], "pathological": []}
        for _ in range(LAUNCHES):                     # alternate, so drift hits both alike
            for name in times:
                r = launch(files, name, TIMED_P, "--reps", REPS, "bcast", TIMED_M)
                assert r.returncode == 0, r.stderr[-2000:]
                line = [x for x in r.stdout.splitlines() if x.startswith("time bcast")][0]
                times[name].append(float(line.split("us=")[1]))
    med = {name: statistics.median(v) for name, v in times.items()}
    ratio = med["pathological"] / med["generated"]
    print(f"MPICH bcast P={TIMED_P} m={TIMED_M}: generated ({good.split('_')[-1]}) median "
          f"{med['generated']:.0f} us {sorted(round(x) for x in times['generated'])}, "
          f"pathological (scatter_ring_allgather) median {med['pathological']:.0f} us "
          f"{sorted(round(x) for x in times['pathological'])}, ratio {ratio:.2f}")
    assert ratio > MIN_RATIO
