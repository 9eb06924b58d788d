"""Helpers the test modules share (and tests/runtime/make_cases.py, run with tests/ on
PYTHONPATH): paths of the fixtures, tables made from them, running collsel in-process, compiling
and checking emitted C against `collsel query`."""
import csv
import json
import pathlib
import subprocess
import sys

import numpy as np

from collsel.core.evaluate import candidates
from collsel.core.mpi import algorithms
from collsel.core.evaluate.recommendation_figures import CandidateRow, Recommendation, Selected

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
FIXTURES = SHARED / "fixtures"
TANJADERIN = {c: FIXTURES / "datasets" / f"trieste_tanjaderin_{c}_combined.csv"
              for c in ("bcast", "reduce")}
INT_MAX = 2**31 - 1
SIZE_MAX = 2**64 - 1
CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O1"]
DRIVER = pathlib.Path(__file__).parent / "c" / "decision_driver.c"


def tanjaderin_table(collective, directory):
    """The Trieste CSV mapped to the canonical columns (names map through algorithms.py)."""
    out = pathlib.Path(directory) / f"tanjaderin_{collective}.csv"
    with open(TANJADERIN[collective], newline="") as src, open(out, "w") as dst:
        dst.write(f"# source={TANJADERIN[collective].name}\n")
        dst.write("collective,comm_size,msg_size,algorithm,segsize,time_us\n")
        for row in csv.DictReader(src):
            dst.write(f"{collective},{row['Processes']},{row['Size']},{row['Algorithm']},0,"
                      f"{row['Latency(us)']}\n")
    return out



def crossing_table(path, comm_sizes):
    """A bcast table whose two methods cross between measured P: method 1 grows as P (10 us at
    P = 4, 40 us at 16), method 2 stays at 30 us, at m = 8 and 1024. Log-linear in log P, their
    times cross at P = 12, where a plain map cuts a gap at its midpoint."""
    with open(path, "w") as f:
        f.write("collective,comm_size,msg_size,algorithm,segsize,time_us\n")
        for p in comm_sizes:
            for m in (8, 1024):
                f.write(f"bcast,{p},{m},1,0,{10.0 * p / 4}\nbcast,{p},{m},2,0,30\n")
    return path


def collsel(*args, **kw):
    """`collsel ARGS` in a subprocess of this Python (the installed package under `make
    test`): its own process, as a user runs it (commands fork workers, set signal handlers and
    launch MPI), with subprocess.run's keywords (cwd, env, timeout)."""
    return subprocess.run([sys.executable, "-m", "collsel.cli", *map(str, args)],
                          capture_output=True, text=True, **kw)


def synthetic_3d(path, categorical=False):
    """A small octree input: 3 methods whose ranking depends on P, m and ppn."""
    rng = np.random.default_rng(7)
    zs = ["bynode", "byslot", "bycore"] if categorical else [1, 2, 4]
    with open(path, "w") as f:
        f.write("collective,comm_size,msg_size,algorithm,segsize,time_us,ppn\n")
        for p in (2, 3, 4, 8, 16):
            for m in [0] + [2**k for k in range(0, 23, 2)]:
                for zi, z in enumerate(zs):
                    for alg, seg, cost in ((1, 0, p * (1 + m / 1e3)),
                                           (6, 0, np.log2(p + 1) * (3 + m / 1e3) * (1 + zi)),
                                           (3, 8192, 40 + m / 4e3 * (1 + zi / 2))):
                        t = cost * (1 + 0.05 * rng.random())
                        f.write(f"bcast,{p},{m},{alg},{seg},{t:.4f},{z}\n")
    return path


def build(tmp_path, table, collective, *options):
    out = tmp_path / "out"
    r = collsel("build", table, "--collective", collective, "--prefix", "t",
                "--out", out, *options)
    assert r.returncode == 0, r.stderr
    return out


def compile_decision(out, three_d):
    exe = out / "decide"
    macro = "-DDECIDE3=t_decide3" if three_d else "-DDECIDE=t_decide"
    subprocess.run(["gcc", *CFLAGS, macro, f"-I{out}", str(DRIVER), str(out / "decision.c"),
                    "-o", str(exe)], check=True)
    return exe


def query_points(doc, n_random, seed=1):
    """Every measured point, every cut and the value just below it, extremes, and random points."""
    rng = np.random.default_rng(seed)
    axes = doc["axes"]
    p_vals = sorted(set(axes[0]["values"] + axes[0]["cuts"] + [c - 1 for c in axes[0]["cuts"]]
                        + [1, 2, INT_MAX]))
    m_vals = sorted(set(axes[1]["values"] + axes[1]["cuts"] + [c - 1 for c in axes[1]["cuts"]]
                        + [0, 1, SIZE_MAX]))
    p_vals = [p for p in p_vals if p >= 1]
    p_rand = np.concatenate([rng.integers(1, 2 * max(axes[0]["values"]) + 2, n_random // 2),
                             np.exp(rng.uniform(0, np.log(INT_MAX), n_random - n_random // 2))
                             .astype(np.int64)])
    m_rand = [int(x) for x in np.exp2(rng.uniform(0, 64, n_random)).astype(np.float64)]
    m_rand = [min(SIZE_MAX, x) for x in m_rand]
    points = [(p, m) for p in p_vals for m in m_vals] + list(zip(p_rand.tolist(), m_rand))
    if len(axes) == 3:
        z_vals = axes[2]["values"]
        z_all = z_vals + [c - 1 for c in axes[2]["cuts"]] + [min(z_vals) - 5, max(z_vals) + 5]
        if axes[2]["kind"] == "category":
            z_all = z_vals
        points = [(p, m, z_all[i % len(z_all)]) for i, (p, m) in enumerate(points)]
    return points


def agree(out, n_random):
    doc = json.loads((out / "tree.json").read_text())
    agree_with_query(out, compile_decision(out, len(doc["axes"]) == 3), n_random)


def agree_with_query(out, exe, n_random):
    """The decision program `exe` (points on stdin) answers as `collsel query` on the tree in
    `out` over every cut, cut-1, extreme and n_random random points."""
    doc = json.loads((out / "tree.json").read_text())
    points = query_points(doc, n_random)
    text = "".join(" ".join(map(str, pt)) + "\n" for pt in points)
    c_out = subprocess.run([str(exe)], input=text, capture_output=True, text=True, check=True)
    q = collsel("query", out / "tree.json", "--ids", "--points", "-", input=text)
    assert q.returncode == 0, q.stderr
    c_lines, q_lines = c_out.stdout.splitlines(), q.stdout.splitlines()
    assert len(c_lines) == len(points) >= n_random
    bad = [(pt, c, py) for pt, c, py in zip(points, c_lines, q_lines) if c != py]
    assert not bad, f"{len(bad)} disagreements, first: {bad[:3]}"


def read_points(table_path):
    """Independent reading of a canonical table with plain csv:
    ({(P, m): {(alg, seg, fan): time}}, {(P, m): algorithm-0 time})."""
    times, base = {}, {}
    with open(table_path) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            alg = int(r["algorithm"]) if r["algorithm"].isdigit() else \
                algorithms.algorithm_id(r["collective"], r["algorithm"])
            key = (int(r["comm_size"]), int(r["msg_size"]))
            if alg == 0:
                base[key] = float(r["time_us"])
            else:
                times.setdefault(key, {})[(alg, int(r["segsize"]), int(r.get("faninout") or 0))] \
                    = float(r["time_us"])
    return times, base


FAKE_BENCH = r"""#!/bin/sh
# A stand-in for collsel_bench: rank 0 prints the header and the lines of each size of --sizes,
# each size after $FAKE_BENCH_SLEEP seconds (default none). Without --methods (per-method mode):
# one line per size, time $FAKE_BENCH_TIME (default 10 µs). With --methods (paired mode,
# protocol B): one line per method and size, in --methods order; the median of method i
# (0-based) is $FAKE_BENCH_TIME + i + (seed mod 5) / 10, so methods differ by a launch-independent
# step ($FAKE_BENCH_TIE=1: all methods equal but for a jitter that changes with the seed, so no
# method is distinguishably faster; $FAKE_BENCH_CROSS=1: $FAKE_BENCH_TIME + (i + size) mod 7 + the
# same launch step, so the fastest method changes with the size); --raw FILE gets every
# repetition in ReproMPI's layout.
# $FAKE_BENCH_UNUSABLE=M:A:S:F,...: method A:S:F is unusable at size M (a `#@unusable.M=` line
# before the size's lines, and no line of its own).
# $FAKE_BENCH_PAUSE=COLLECTIVE:N:DIR: paired launch N of COLLECTIVE (its launches counted in
# DIR) stops after its first size's lines: it creates DIR/paused, then waits until DIR/release
# exists (at most 10 minutes), so a test kills the sweep at a known moment, not after a sleep.
sizes=""; methods=""; seed=1; raw=""; collective=""; pause=""
while [ $# -gt 0 ]; do
  case "$1" in
    --collective) collective="$2"; shift 2;;
    --sizes) sizes="$2"; shift 2;;
    --methods) methods="$2"; shift 2;;
    --seed) seed="$2"; shift 2;;
    --raw) raw="$2"; shift 2;;
    *) shift;;
  esac
done
[ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" = 0 ] || exit 0
if [ -n "$FAKE_BENCH_PAUSE" ] && [ "${FAKE_BENCH_PAUSE%%:*}" = "$collective" ]; then
  pdir=${FAKE_BENCH_PAUSE#*:*:}; pn=${FAKE_BENCH_PAUSE#*:}; pn=${pn%%:*}
  echo >> "$pdir/launches.$collective"
  [ "$(wc -l < "$pdir/launches.$collective")" -eq "$pn" ] && pause=1
fi
echo "#@mpi_library=fake benchmark"
echo "#@runtime_type=fake"
echo "#@timer=fake"
if [ -z "$methods" ]; then
  for m in $(echo "$sizes" | tr , ' '); do
    sleep "${FAKE_BENCH_SLEEP:-0}"
    echo "$m ${FAKE_BENCH_TIME:-10} 10 9 12 1 0.5 20 1"
  done
  exit 0
fi
echo "#@mode=paired"
echo "#@seed=$seed"
echo "#@methods=$methods"
echo "#@forcing=mpi_t"
echo "#@mpi_family=${FAKE_BENCH_FAMILY:-openmpi}"
if [ -n "$raw" ]; then
  printf '#@mode=paired
#@seed=%s
#@methods=%s
test nrep count runtime_sec algorithm segsize faninout
'     "$seed" "$methods" > "$raw"
fi
for m in $(echo "$sizes" | tr , ' '); do
  sleep "${FAKE_BENCH_SLEEP:-0}"
  gone=$(echo "$FAKE_BENCH_UNUSABLE" | tr , '
' | sed -n "s/^$m://p" | paste -sd, -)
  [ -z "$gone" ] || echo "#@unusable.$m=$gone"
  echo "$methods" | tr , '
' | awk -v m="$m" -v base="${FAKE_BENCH_TIME:-10}" -v seed="$seed"       -v raw="$raw" -v tie="${FAKE_BENCH_TIE:-0}" -v cross="${FAKE_BENCH_CROSS:-0}" -v gone=",$gone," '
    { split($0, f, ":"); if (f[3] == "") f[3] = 0
      if (index(gone, "," f[1] ":" f[2] ":" f[3] ",")) next
      t = base + (NR - 1) + (seed % 5) / 10
      if (tie == 1) t = base + ((substr(seed, 1, 6) + NR * 3) % 7) / 10
      if (cross == 1) t = base + (NR - 1 + m) % 7 + (seed % 5) / 10
      printf "%s %s %s %s %.6f %.6f %.6f %.6f 1 0.5 20 1\n", m, f[1], f[2], f[3], t, t, t - 1, t + 2
      if (raw != "") for (r = 0; r < 20; r++)
        printf "fake %d %s %.10f %s %s %s\n", r, m, t / 1e6, f[1], f[2], f[3] >> raw }'
  if [ -n "$pause" ]; then
    pause=""; : > "$pdir/paused"; waited=0
    while [ ! -e "$pdir/release" ] && [ $waited -lt 6000 ]; do
      sleep 0.1; waited=$((waited + 1))
    done
  fi
done
"""


def write_fake_bench(path):
    """The fake benchmark as an executable script at `path`; returns the path."""
    path = pathlib.Path(path)
    path.write_text(FAKE_BENCH)
    path.chmod(0o755)
    return path


def synthetic_table(path, collective, comm_sizes=(2, 3, 4, 6, 8), msg_sizes=(1, 64, 4096, 65536),
                    seed=5):
    """A small table of `collective`: the MPI's default (0) and its first three algorithms, with
    costs whose order changes with P and m (so its tree splits), a 2 % jitter."""
    rng = np.random.default_rng(seed)
    algs = sorted(algorithms.ALGORITHMS[collective])[1:4]
    costs = (lambda p, m: p * (2 + m / 500), lambda p, m: np.log2(p + 1) * (6 + m / 200),
             lambda p, m: 30 + m / 800 + p)
    with open(path, "w") as f:
        f.write(f"# collective={collective}\n"
                "collective,comm_size,msg_size,algorithm,segsize,time_us\n")
        for p in comm_sizes:
            for m in msg_sizes:
                times = [c(p, m) * (1 + 0.02 * rng.random()) for c in costs[:len(algs)]]
                for alg, t in zip([0, *algs], [1.1 * min(times), *times]):
                    f.write(f"{collective},{p},{m},{alg},0,{t:.4f}\n")
    return path


def switching_table(path, collective, low, high, comm_sizes=(2, 4, 8),
                    msg_sizes=(256, 512, 2048, 4096), switch=1024):
    """A table of `collective` in which algorithm `low` is fastest below `switch` bytes and
    `high` from it, at every P (the MPI's default, 0, slowest): its exact tree has one m cut."""
    rows = [f"# collective={collective}", "collective,comm_size,msg_size,algorithm,segsize,time_us"]
    for p in comm_sizes:
        for m in msg_sizes:
            fast, slow = (low, high) if m < switch else (high, low)
            for alg, t in ((0, 30.0), (fast, 10.0), (slow, 20.0)):
                rows.append(f"{collective},{p},{m},{alg},0,{t + m / 1000:.3f}")
    pathlib.Path(path).write_text("\n".join(rows) + "\n")
    return path


def run_in_process(*args):
    """`collsel ARGS` in this process (the CLI's own main), as a CompletedProcess (returncode,
    stdout, stderr): no interpreter start per call."""
    import contextlib
    import io

    from collsel import cli
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main([str(a) for a in args])
        except SystemExit as e:
            code = e.code
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def recommendation_with(nested=None, compared=None, criterion="combined", fallback=None,
                        edge=None):
    """A Recommendation (core.evaluate.recommendation_figures) whose selection holds these figures, the
    rest placeholders."""
    row = CandidateRow("exact, balanced split, majority leaves", 3, 1.0, {}, 0.0)
    return Recommendation(criterion, (), "why", selection=Selected(
        "scored", "statistic", "se over", "rule", 3, row, candidates.Candidate("exact"), row,
        compared or {}, nested or {}, {}, edge, fallback))
