"""Running the LMO experiments (Lastovetsky & Rychkov 2009) through the benchmark program and
keeping their results (collsel/sources/measure/bench/lmo.c, `--experiment lmo|lmo-scan|
lmo-binomial`), one process per processor: on this machine (all ranks here), or on the emulated
cluster (`collsel cluster up`; rank r alone on node r, so every link is a network link, and the
ranks' hosts are checked against that placement).

A fit (`collsel model lmo-fit`) runs, in this order:
1. lmo-scan: linear scatter and gather from rank 0 at the scan sizes (thresholds S, M1, M2);
2. lmo: empty round-trips, round-trips with an M-byte message and empty reply, and the
   one-to-two experiments, at message sizes M below S (`auto_msg_sizes`), non-overlapping
   experiments at once (--schedule parallel) or one at a time (serial);
3. optionally the same with the other schedule, for the estimation cost of both.
Every experiment is repeated until its 95 % confidence interval is within --rel-ci of its mean
(or --max-reps, or --time-cap seconds per round). Rows (one per experiment and launch) are
saved as CSV (`save`/`load`) so a fit can be redone without measuring.
"""
import time

from collsel import __version__
from collsel.core.io import csvfile, values
from collsel.errors import CollselError, InputError, located
from collsel.sources.measure import benchmark_program as bench, launchers, machine
from collsel.sources.measure.supervise import run_launch
from collsel.research.models import experiments

KINDS = ("rt0", "rt", "o2t", "lscatter", "lgather", "bscatter", "bgather")
SCHEDULES = ("parallel", "serial")
LINE_FIELDS = ("kind", "root", "a", "b", "msg_size", "mean_us", "median_us", "min_us",
               "max_us", "stdev_us", "ci_halfwidth_us", "n", "ci_met")
COLUMNS = ("kind", "root", "a", "b", "msg_size", "schedule", "mapping", "launch", "mean_us",
           "median_us", "ci_halfwidth_us", "n", "ci_met")
MAX_PROCS = 64                  # collsel_bench's LMO_MAX_PROCS
# Scan: 1 KiB - 256 KiB, two sizes an octave (the paper scans with a fixed stride).
SCAN_SIZES = tuple(sorted({1 << k for k in range(10, 19)} | {3 << k for k in range(9, 17)}))
AUTO_MSG_SIZE_CAP = 65536       # the o2t size: at most this, and at most S
REL_CI = 0.025                  # the paper's 95 % confidence, 2.5 % error


def expected_lines(experiment, P, sizes, mapping=None):
    """The leading fields (kind, root, a, b, msg_size) of every output line, in order."""
    if experiment == "lmo-scan":
        return [(k, "0", "-1", "-1", str(m)) for m in sizes for k in ("lscatter", "lgather")]
    if experiment == "lmo-binomial":
        root = str((mapping or [0])[0])
        return [(k, root, "-1", "-1", str(m)) for m in sizes for k in ("bscatter", "bgather")]
    pairs = [(i, j) for i in range(P) for j in range(i + 1, P)]
    trips = [(i, j, k) for i, j in pairs for k in range(j + 1, P)]
    lines = [("rt0", str(i), str(j), "-1", "0") for i, j in pairs]
    for m in sizes:
        lines += [("rt", str(i), str(j), "-1", str(m)) for i, j in pairs]
        for i, j, k in trips:
            lines += [("o2t", str(r), str(a), str(b), str(m))
                      for r, a, b in ((i, j, k), (j, i, k), (k, i, j))]
    return lines


def mapping_text(mapping):
    return "identity" if mapping is None else "-".join(map(str, mapping))


class Runner:
    """Launches of the LMO experiments, one rank per processor, through an experiments.Runner
    (its launchers, placement check and silence timeout)."""

    def __init__(self, mpirun=None, bench_path=None, time_cap=0.05, max_reps=1000,
                 rel_ci=REL_CI, timeout=600, cluster=None):
        self.base = experiments.Runner(mpirun=mpirun, bench_path=bench_path, time_cap=time_cap,
                                       max_reps=max_reps, timeout=timeout, cluster=cluster)
        self.cluster, self.bench, self.timeout = cluster, self.base.bench, timeout
        self.time_cap, self.max_reps, self.rel_ci = time_cap, max_reps, rel_ci
        self.wall = {}              # experiment label -> seconds of its launches

    def launch(self, experiment, P, sizes, schedule="parallel", mapping=None, launch=1):
        """Rows of one launch and its `#@` header."""
        on_cluster = self.cluster is not None
        spec = experiments.Launch(experiment, P, list(sizes), nodes=P if on_cluster else 1,
                                  ppn=1 if on_cluster else P)
        argv = [self.bench, "--experiment", experiment, "--sizes", ",".join(map(str, sizes)),
                "--time-cap", str(self.time_cap), "--max-reps", str(self.max_reps),
                "--rel-ci", str(self.rel_ci)]
        if experiment == "lmo":
            argv += ["--schedule", schedule]
        elif on_cluster:
            argv += ["--runtime", "global"]     # the nodes share this machine's clock
        if mapping is not None:
            argv += ["--mapping", ",".join(map(str, mapping))]
        cmd, env = self.base.command(spec, {}, argv)
        rows = []

        def on_point(f):
            rows.append({"kind": f["kind"], "root": int(f["root"]), "a": int(f["a"]),
                         "b": int(f["b"]), "msg_size": int(f["msg_size"]),
                         "schedule": schedule if experiment == "lmo" else "",
                         "mapping": mapping_text(mapping) if experiment == "lmo-binomial"
                         else "", "launch": launch,
                         **{k: float(f[k]) for k in ("mean_us", "median_us", "ci_halfwidth_us")},
                         "n": int(f["n"]), "ci_met": int(f["ci_met"])})

        start = time.monotonic()
        result = run_launch(cmd, env, sizes, self.timeout, on_point,
                            lines=expected_lines(experiment, P, sizes, mapping),
                            names=LINE_FIELDS)
        label = experiment + (f" {schedule}" if experiment == "lmo" else "")
        self.wall[label] = round(self.wall.get(label, 0.0) + time.monotonic() - start, 3)
        self.base.launches += 1
        if result.failure is not None:
            raise CollselError(f"experiment failed: {result.failure}; command: "
                               + launchers.render(cmd, env))
        self.base.check_placement(spec, result.meta.get("rank_hosts"), cmd, env)
        return rows, result.meta


def auto_msg_sizes(S, scan_sizes=SCAN_SIZES):
    """Message sizes of the round-trips and one-to-two experiments: the largest scan size at
    most min(S, AUTO_MSG_SIZE_CAP), and a quarter of it (M <= S keeps the one-to-two
    experiments in the scatter's small-message regime, section 5)."""
    cap = AUTO_MSG_SIZE_CAP if S is None else min(S, AUTO_MSG_SIZE_CAP)
    fits = [m for m in scan_sizes if m <= cap]
    top = max(fits) if fits else min(scan_sizes)
    return sorted({max(1, top // 4), top})


def base_metadata():
    return {"source": "collsel model lmo-fit", "collsel_version": __version__}


def launch_metadata(runner, command, P):
    meta = {**base_metadata(), "command": command, **machine.machine_metadata(),
            "date": machine.now_iso(), "loadavg_start": machine.loadavg(), "processors": P,
            "rel_ci": runner.rel_ci, "time_cap_s": runner.time_cap, "max_reps": runner.max_reps,
            "placement": ("one rank per node of the emulated cluster" if runner.cluster
                          else "every rank on this machine")}
    if runner.cluster is not None:
        meta["cluster"] = runner.cluster.describe()
        meta["cluster_nodes"] = ";".join(f"{n.name}:{n.rate}:{n.cpu_share:g}"
                                         for n in runner.cluster.nodes[:P])
    return meta


def save(rows, metadata):
    return experiments.save(rows, metadata, COLUMNS)


_INTS = {"root": (-1, MAX_PROCS - 1), "a": (-1, MAX_PROCS - 1), "b": (-1, MAX_PROCS - 1),
         "msg_size": bench.MSG_SIZE, "launch": (1, 1_000_000), "n": bench.REPETITIONS,
         "ci_met": (0, 1)}


def load(path):
    """(rows, metadata) of an experiment file written by `save`; one located error for a bad
    line (every value held to its range)."""
    doc = csvfile.read(path, "an LMO experiment file")
    if doc.header is None:
        raise InputError(f"{path}: empty LMO experiment file")
    if tuple(doc.header) != COLUMNS:
        raise located(path, doc.header_line, f"header must be {','.join(COLUMNS)}")
    rows = []
    for lineno, f in doc.rows:
        where = f"{path}:{lineno}"
        if len(f) != len(COLUMNS):
            raise located(path, lineno, f"{len(f)} fields, expected {len(COLUMNS)}")
        r = dict(zip(COLUMNS, (x.strip() for x in f)))
        if r["kind"] not in KINDS:
            raise located(path, lineno, f"kind '{r['kind'][:40]}' is not one of "
                          + ", ".join(KINDS))
        for k, (low, high) in _INTS.items():
            r[k] = values.integer(r[k], k, low, high, where)
        for k in ("mean_us", "median_us"):
            r[k] = values.time_us(r[k], k, where)
        r["ci_halfwidth_us"] = bench.check_field("ci_halfwidth_us", r["ci_halfwidth_us"], where)
        if r["kind"] in ("rt0", "rt", "o2t") and r["schedule"] not in SCHEDULES:
            raise located(path, lineno, f"schedule '{r['schedule'][:40]}' is not parallel or "
                          "serial")
        rows.append(r)
    return rows, dict(doc.metadata)
