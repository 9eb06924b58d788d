"""Run the model-fitting experiments of Nuriyev et al. 2022, section 5, on real Open MPI.

Two kinds, both through the benchmark program's `--experiment` mode (collsel/sources/measure/
collsel_bench.c, built by measure.benchmark_program), launched and supervised like a sweep's
(measure.launchers, measure.supervise):

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
import time

from collsel.core import algorithms, csvfile, values
from collsel.errors import CollselError, InputError, located
from collsel import __version__
from collsel.sources.measure import benchmark_program as bench, launchers, machine
from collsel.sources.measure.supervise import run_launch
from collsel.sources.sweep import launch_stats

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
    """Runs experiment launches; a launch silent for `timeout` seconds is killed."""

    def __init__(self, launcher="local", mpirun=None, bench_path=None, time_cap=0.1,
                 max_reps=200, timeout=600):
        self.launcher = launchers.make(launcher, mpirun)
        self.launcher.check()
        self.bench = bench.locate(bench_path)
        self.time_cap = time_cap
        self.max_reps = max_reps
        self.timeout = timeout
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
        rows = []

        def on_point(fields):
            m = int(fields["msg_size"])
            rows.append({"experiment": experiment, "comm_size": P, "msg_size": m,
                         "algorithm": algorithm, "segsize": segsize,
                         "gather_size": max(1, min(m, gather)) if experiment == "bcast-gather"
                         else 0, "launch": launch, "time_us": float(fields["median_us"]),
                         "n": int(fields["n"])})

        result = run_launch(cmd, env, sizes, self.timeout, on_point)
        if result.failure is not None:
            raise CollselError(f"experiment failed: {result.failure}; command: "
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


def run_all(runner, launches, progress_interval=30.0, log=None):
    """Rows of every launch; `log(text)`, when given, receives a progress line every
    `progress_interval` seconds and at the end."""
    rows, start, last = [], time.monotonic(), time.monotonic()
    for i, (exp, P, sizes, alg, seg, gather, launch) in enumerate(launches, 1):
        rows += runner.run(exp, P, sizes, alg, seg, gather, launch)
        now = time.monotonic()
        if log and (now - last >= progress_interval or i == len(launches)):
            log(f"{i}/{len(launches)} launches, {len(rows)} measurements, {now - start:.0f} s")
            last = now
    return rows


def base_metadata():
    """What every fit records about itself, measured or from a saved experiment file."""
    return {"source": "collsel model fit", "collsel_version": __version__}


def measure(runner, comm_sizes, msg_sizes, launches=3, command="", comm_sizes_text="",
            msg_sizes_text="", progress_interval=30.0, log=None):
    """Run the whole plan; (rows, metadata of the experiment file: machine, date, plan)."""
    meta = {**base_metadata(), "command": command, **machine.machine_metadata(),
            "date": machine.now_iso(), "loadavg_start": machine.loadavg()}
    start = time.monotonic()
    rows = run_all(runner, plan(comm_sizes, msg_sizes, launches=launches), progress_interval,
                   log)
    meta.update({"comm_sizes": comm_sizes_text, "msg_sizes": msg_sizes_text,
                 "launches_per_point": launches,
                 "launches": runner.launches, "wall_s": f"{time.monotonic() - start:.1f}",
                 "mapping": "; ".join(f"P={P}: {runner.launcher.mapping(P)}"
                                     for P in comm_sizes)})
    return rows, meta


def save(rows, metadata):
    out = io.StringIO()
    for k, v in metadata.items():
        out.write(f"# {k}={v}\n")
    w = csv.DictWriter(out, COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: r[k] for k in COLUMNS})
    return out.getvalue()


# The bcast algorithms models.bcast describes (Open MPI's ids, the baseline 0 excluded).
MODELLED_ALGORITHMS = tuple(a for a in sorted(algorithms.ALGORITHMS["bcast"])
                            if a != algorithms.BASELINE_ALGORITHM)
_RANGES = {"comm_size": values.COMM_SIZE, "msg_size": values.MSG_SIZE,
           "algorithm": values.ALGORITHM_ID, "segsize": values.SEGSIZE,
           "gather_size": values.MSG_SIZE, "launch": launch_stats.LAUNCHES,
           "n": bench.REPETITIONS}


def load(path):
    """Rows of an experiment file written by `save`; one located error for a bad line (every
    value held to its core.values range)."""
    doc = csvfile.read(path, "an experiment file")
    if doc.header is None:
        raise InputError(f"{path}: empty experiment file")
    if tuple(doc.header) != COLUMNS:
        raise located(path, doc.header_line, f"header must be {','.join(COLUMNS)}")
    rows = []
    for lineno, f in doc.rows:
        where = f"{path}:{lineno}"
        if len(f) != len(COLUMNS):
            raise located(path, lineno, f"{len(f)} fields, expected {len(COLUMNS)}")
        r = dict(zip(COLUMNS, f))
        if r["experiment"] not in ("nbft", "bcast-gather"):
            raise located(path, lineno, f"experiment '{r['experiment'][:40]}' is not nbft or "
                          "bcast-gather")
        for k, (low, high) in _RANGES.items():
            r[k] = values.integer(r[k], k, low, high, where)
        r["time_us"] = values.time_us(r["time_us"], "time_us", where)
        if r["experiment"] == "bcast-gather" and r["algorithm"] not in MODELLED_ALGORITHMS:
            raise located(path, lineno, f"algorithm {r['algorithm']} is not a bcast algorithm "
                          "with a model (" + ", ".join(map(str, MODELLED_ALGORITHMS)) + ")")
        rows.append(r)
    check_fittable(rows, path)
    return rows


def check_fittable(rows, path):
    """Refuse experiments a fit cannot use: it needs bcast+gather rows (one method each) and
    the P = 2 NBFT at two message sizes or more (gamma0's reference and Hockney's alpha, beta)."""
    if not any(r["experiment"] == "bcast-gather" for r in rows):
        raise InputError(f"{path}: no bcast-gather rows: nothing to fit a method from")
    if len({r["msg_size"] for r in rows if r["experiment"] == "nbft" and r["comm_size"] == 2}) < 2:
        raise InputError(f"{path}: needs nbft rows at P=2 for two message sizes or more (the "
                         "point-to-point reference of gamma0 and the Hockney fit)")
