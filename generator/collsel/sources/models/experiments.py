"""Run the model-fitting experiments of Nuriyev et al. 2022, section 5, on real Open MPI.

Two kinds, both through the benchmark program's `--experiment` mode (collsel/sources/measure/
collsel_bench.c, built by collsel.sweep.bench) and launched like a sweep (collsel.sweep.launchers):

* nbft: the root sends m bytes to P-1 ranks with non-blocking sends (section 5.1), for
  P = 2 .. NBFT_MAX and the segment sizes; gives gamma0(P) = T(P) / T(2), and at P = 2 the
  point-to-point times that fit the Hockney baseline's alpha and beta.
* bcast-gather: the forced bcast method followed by a flat gather of one segment (section
  5.2, eq. 16), for every method at a few P and message sizes; one row of eq. 19 each.

Like a sweep point, every experiment point is measured in `launches` separate launches, in
rounds (the whole plan once, then again), because on a shared machine the level of a launch
moves by tens of percent while its own CI is a few percent; the fit uses the mean of a point's
launch medians (`mean_over_launches`). Results are kept as rows (dicts, one per point and launch)
and can be saved as CSV (`save`/`load`) so a fit can be redone without measuring again.
"""
import csv
import io
import subprocess
import sys
import time

from collsel.errors import CollselError, InputError
from collsel.sources.measure import benchmark_program as bench, launchers

COLUMNS = ("experiment", "comm_size", "msg_size", "algorithm", "segsize", "gather_size",
           "launch", "time_us", "n")
POINT_COLUMNS = COLUMNS[:6]
# Defaults: 3 process counts x 12 sizes (4^k bytes, 1 B - 4 MiB) per method.
FIT_COMM_SIZES = (4, 8, 16)
FIT_MSG_SIZES = tuple(4 ** k for k in range(12))
SEGMENT_SIZES = (1024, 8192, 32768, 131072)
NBFT_MAX = 8


def bcast_methods():
    """The methods of the bench-data bcast sweep: 1, 8, 9 unsegmented; 2-7 x 5 segment sizes."""
    methods = [(1, 0), (8, 0), (9, 0)]
    methods += [(a, s) for a in range(2, 8) for s in (0,) + SEGMENT_SIZES]
    return sorted(methods)


class Runner:
    def __init__(self, launcher="local", mpirun=None, bench_path=None, time_cap=0.1,
                 max_reps=200, timeout=600, log=sys.stderr):
        self.launcher = launchers.make(launcher, mpirun)
        self.launcher.check()
        self.bench = bench.locate(bench_path)
        self.time_cap = time_cap
        self.max_reps = max_reps
        self.timeout = timeout
        self.log = log
        self.launches = 0

    def run(self, experiment, P, sizes, algorithm=0, segsize=0, gather=8192, launch=1,
            chain_fanout=4):
        mca = {}
        if experiment == "bcast-gather":
            mca = {"coll_tuned_use_dynamic_rules": 1, "coll_tuned_bcast_algorithm": algorithm,
                   "coll_tuned_bcast_algorithm_segmentsize": segsize,
                   "coll_tuned_bcast_algorithm_chain_fanout": chain_fanout}
        argv = [self.bench, "--experiment", experiment, "--sizes", ",".join(map(str, sizes)),
                "--time-cap", str(self.time_cap), "--max-reps", str(self.max_reps)]
        if experiment == "bcast-gather":
            argv += ["--gather-size", str(gather)]
        cmd, env = self.launcher.command(P, mca, argv)
        self.launches += 1
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout,
                                  env={**__import__("os").environ, **env})
        except subprocess.TimeoutExpired:
            raise CollselError(f"experiment timed out after {self.timeout} s: "
                               + launchers.render(cmd, env)) from None
        if done.returncode != 0:
            raise CollselError(f"experiment failed (exit {done.returncode}): "
                               f"{launchers.render(cmd, env)}\n{done.stderr.strip()[-2000:]}")
        rows = []
        for line in done.stdout.splitlines():
            if not line or line.startswith("#"):
                continue
            f = line.split()
            m = int(f[0])
            rows.append({"experiment": experiment, "comm_size": P, "msg_size": m,
                         "algorithm": algorithm, "segsize": segsize,
                         "gather_size": max(1, min(m, gather)) if experiment == "bcast-gather"
                         else 0, "launch": launch, "time_us": float(f[2]), "n": int(f[7])})
        if len(rows) != len(sizes):
            raise CollselError(f"experiment printed {len(rows)} of {len(sizes)} sizes: "
                               + launchers.render(cmd, env))
        return rows


def plan(comm_sizes=FIT_COMM_SIZES, msg_sizes=FIT_MSG_SIZES, methods=None, nbft_max=NBFT_MAX,
         launches=1):
    """The launches, round by round: (experiment, P, sizes, algorithm, segsize, gather size,
    launch number)."""
    one = [("nbft", 2, sorted(set(msg_sizes) | set(SEGMENT_SIZES)), 0, 0, 0)]
    one += [("nbft", P, list(SEGMENT_SIZES), 0, 0, 0) for P in range(3, nbft_max + 1)]
    for alg, seg in methods or bcast_methods():
        for P in comm_sizes:
            one.append(("bcast-gather", P, list(msg_sizes), alg, seg, seg or 8192))
    return [(*spec, r) for r in range(1, launches + 1) for spec in one]


def mean_over_launches(rows):
    """One row per point: time_us = mean of its launches' medians, n = their repetitions."""
    points = {}
    for r in rows:
        points.setdefault(tuple(r[k] for k in POINT_COLUMNS), []).append(r)
    return [{**dict(zip(POINT_COLUMNS, key)), "launches": len(group),
             "time_us": sum(r["time_us"] for r in group) / len(group),
             "n": sum(r["n"] for r in group)} for key, group in points.items()]


def run_all(runner, launches, progress_interval=30.0):
    rows, start, last = [], time.monotonic(), time.monotonic()
    for i, (exp, P, sizes, alg, seg, gather, launch) in enumerate(launches, 1):
        rows += runner.run(exp, P, sizes, alg, seg, gather, launch)
        now = time.monotonic()
        if now - last >= progress_interval or i == len(launches):
            print(f"collsel model fit: {i}/{len(launches)} launches, {len(rows)} measurements, "
                  f"{now - start:.0f} s", file=runner.log, flush=True)
            last = now
    return rows


def save(rows, metadata):
    out = io.StringIO()
    for k, v in metadata.items():
        out.write(f"# {k}={v}\n")
    w = csv.DictWriter(out, COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: r[k] for k in COLUMNS})
    return out.getvalue()


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            lines = [(i, line) for i, line in enumerate(f, 1) if not line.startswith("#")]
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from None
    if not lines:
        raise InputError(f"{path}: empty experiment file")
    header = lines[0][1].strip().split(",")
    if tuple(header) != COLUMNS:
        raise InputError(f"{path}:{lines[0][0]}: header must be {','.join(COLUMNS)}")
    rows = []
    for lineno, line in lines[1:]:
        f = line.strip().split(",")
        try:
            r = dict(zip(COLUMNS, f))
            for k in COLUMNS[1:7] + ("n",):
                r[k] = int(r[k])
            r["time_us"] = float(r["time_us"])
            if len(f) != len(COLUMNS) or r["experiment"] not in ("nbft", "bcast-gather") \
                    or not r["time_us"] > 0:
                raise ValueError
        except (ValueError, KeyError):
            raise InputError(f"{path}:{lineno}: bad experiment row") from None
        rows.append(r)
    return rows
