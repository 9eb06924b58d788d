"""Run the model-fitting experiments of Nuriyev et al. 2022, section 5, on real Open MPI.

Two kinds, both through the benchmark program's `--experiment` mode (collsel/sources/measure/
bench/experiments.c, built by measure.benchmark_program), launched and supervised like a sweep's
(measure.launchers, measure.supervise):

* nbft: the root sends m bytes to P-1 ranks with non-blocking sends (section 5.1), for
  P = 2 .. NBFT_MAX and the segment sizes; gives gamma0(P) = T(P) / T(2), and at P = 2 the
  point-to-point times that fit the Hockney baseline's alpha and beta.
* nbft-net (on the emulated cluster, `--cluster`): the same NBFT with the root alone on its node
  and the receivers on other nodes (models.cluster_launch.ROOT_ALONE), so every link is the
  network (c = 1); gives gamma1(P) = T1(P) / T1(2) and, beside nbft at P = 2, the channel ratio
  Q = T1(2) / T0(2) (eq. 15).
* bcast-gather: the forced bcast method followed by a flat gather of one segment (section
  5.2, eq. 16), for every method at a few P and message sizes; one row of eq. 19 each. On the
  cluster, at every nodes x ppn placement asked for (rank r on node r // ppn), so rows whose
  trees cross nodes fit the network parameters of each method.

Like a sweep point, every experiment point is measured in `launches` separate launches, in
rounds (the whole plan once, then again), because on a shared machine the level of a launch
moves by tens of percent while its own CI is a few percent; the fit uses the mean of a point's
launch medians (`mean_over_launches`). Results are kept as rows (dicts, one per point and launch)
and can be saved as CSV (`save`/`load`) so a fit can be redone without measuring again.
"""
import csv
import io
import time
from typing import NamedTuple

from collsel.core.io import csvfile, values
from collsel.core.mpi import algorithms
from collsel.errors import CollselError, InputError, located
from collsel import __version__
from collsel.sources.measure import benchmark_program as bench, launchers, machine
from collsel.sources.measure.supervise import run_launch
from collsel.research.models.cluster_launch import ROOT_ALONE, ClusterLauncher, describe
from collsel.sources.sweep import launch_stats

# nodes, ppn: the placement (cluster_launch); ppn 0 is the network NBFT's root-alone placement.
COLUMNS = ("experiment", "comm_size", "msg_size", "algorithm", "segsize", "gather_size",
           "nodes", "ppn", "launch", "time_us", "n")
POINT_COLUMNS = COLUMNS[:8]
# Files written before multi-node fits have no placement: every launch ran on one node.
ONE_NODE_COLUMNS = tuple(c for c in COLUMNS if c not in ("nodes", "ppn"))
EXPERIMENTS = ("nbft", "nbft-net", "bcast-gather")
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


class Launch(NamedTuple):
    """One launch of the plan: an experiment at P ranks placed nodes x ppn (cluster_launch)."""
    experiment: str
    comm_size: int
    sizes: list
    algorithm: int = 0
    segsize: int = 0
    gather_size: int = 0
    nodes: int = 1
    ppn: int = 0
    launch: int = 1


class Runner:
    """Runs experiment launches, on this machine or (given a collsel.cluster.Cluster)
    across the nodes of the emulated cluster; a launch silent for `timeout` seconds is killed."""

    def __init__(self, launcher="local", mpirun=None, bench_path=None, time_cap=0.1,
                 max_reps=200, timeout=600, cluster=None):
        self.cluster = cluster
        self.launcher = (ClusterLauncher(cluster, mpirun) if cluster is not None
                         else launchers.make(launcher, mpirun))
        self.launcher.check()
        self.bench = bench.locate(bench_path)
        self.time_cap = time_cap
        self.max_reps = max_reps
        self.timeout = timeout
        self.launches = 0
        self.placements_checked = 0

    def command(self, spec, mca, argv):
        if self.cluster is not None:
            return self.launcher.command(spec.comm_size, mca, argv, spec.nodes, spec.ppn)
        if spec.nodes != 1:
            raise ValueError(f"{spec.experiment} on {spec.nodes} nodes needs the cluster")
        return self.launcher.command(spec.comm_size, mca, argv)

    def mapping(self, spec):
        if self.cluster is not None:
            return self.launcher.mapping(spec.comm_size, spec.nodes, spec.ppn)
        return self.launcher.mapping(spec.comm_size)

    def run(self, spec, chain_fanout=4):
        """Rows of one Launch (one per message size)."""
        P, experiment = spec.comm_size, spec.experiment
        mca = {}
        if experiment == "bcast-gather":
            mca = {"coll_tuned_use_dynamic_rules": 1,
                   "coll_tuned_bcast_algorithm": spec.algorithm,
                   "coll_tuned_bcast_algorithm_segmentsize": spec.segsize,
                   "coll_tuned_bcast_algorithm_chain_fanout": chain_fanout}
        argv = [self.bench, "--experiment", "nbft" if experiment == "nbft-net" else experiment,
                "--sizes", ",".join(map(str, spec.sizes)),
                "--time-cap", str(self.time_cap), "--max-reps", str(self.max_reps)]
        if experiment == "bcast-gather":
            argv += ["--gather-size", str(spec.gather_size)]
        cmd, env = self.command(spec, mca, argv)
        self.launches += 1
        rows = []

        def on_point(fields):
            m = int(fields["msg_size"])
            rows.append({"experiment": experiment, "comm_size": P, "msg_size": m,
                         "algorithm": spec.algorithm, "segsize": spec.segsize,
                         "gather_size": max(1, min(m, spec.gather_size))
                         if experiment == "bcast-gather" else 0,
                         "nodes": spec.nodes, "ppn": spec.ppn, "launch": spec.launch,
                         "time_us": float(fields["median_us"]), "n": int(fields["n"])})

        result = run_launch(cmd, env, spec.sizes, self.timeout, on_point)
        if result.failure is not None:
            raise CollselError(f"experiment failed: {result.failure}; command: "
                               + launchers.render(cmd, env))
        self.check_placement(spec, result.meta.get("rank_hosts"), cmd, env)
        return rows

    def check_placement(self, spec, rank_hosts, cmd, env):
        """The ranks ran where the placement says (when the benchmark reports its ranks' host
        names, `#@rank_hosts=`): a model fitted to other placements would be silently wrong."""
        if self.cluster is None or rank_hosts is None:
            return
        want = self.launcher.hosts(spec.comm_size, spec.nodes, spec.ppn)
        got = rank_hosts.split(",")
        self.placements_checked += 1
        if got != want:
            raise CollselError(f"experiment {spec.experiment} P={spec.comm_size}: ranks ran on "
                               f"{','.join(got)[:200]}, the placement "
                               f"{describe(spec.nodes, spec.ppn)} puts them on "
                               f"{','.join(want)[:200]}; command: " + launchers.render(cmd, env))


def plan(comm_sizes=FIT_COMM_SIZES, msg_sizes=FIT_MSG_SIZES, methods=None, nbft_max=NBFT_MAX,
         launches=1, placements=None, net_nodes=0):
    """The Launches, round by round. bcast-gather runs at every (nodes, ppn) of `placements`
    (default: one node at each of `comm_sizes`); `net_nodes` >= 2 adds the network NBFTs, the
    root alone and the receivers over up to net_nodes - 1 other nodes."""
    one = [Launch("nbft", 2, sorted(set(msg_sizes) | set(SEGMENT_SIZES)), ppn=2)]
    one += [Launch("nbft", P, list(SEGMENT_SIZES), ppn=P) for P in range(3, nbft_max + 1)]
    if net_nodes >= 2:
        one += [Launch("nbft-net", P, sorted(set(msg_sizes) | set(SEGMENT_SIZES)) if P == 2
                       else list(SEGMENT_SIZES), nodes=min(net_nodes, P), ppn=ROOT_ALONE)
                for P in range(2, nbft_max + 1)]
    for alg, seg in methods or bcast_methods():
        for nodes, ppn in placements or [(1, P) for P in comm_sizes]:
            one.append(Launch("bcast-gather", nodes * ppn, list(msg_sizes), alg, seg,
                              seg or 8192, nodes, ppn))
    return [spec._replace(launch=r) for r in range(1, launches + 1) for spec in one]


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
    for i, spec in enumerate(launches, 1):
        rows += runner.run(spec)
        now = time.monotonic()
        if log and (now - last >= progress_interval or i == len(launches)):
            log(f"{i}/{len(launches)} launches, {len(rows)} measurements, {now - start:.0f} s")
            last = now
    return rows


def base_metadata():
    """What every fit records about itself, measured or from a saved experiment file."""
    return {"source": "collsel model fit", "collsel_version": __version__}


def measure(runner, comm_sizes, msg_sizes, launches=3, command="", comm_sizes_text="",
            msg_sizes_text="", progress_interval=30.0, log=None, methods=None,
            nbft_max=NBFT_MAX, placements=None, net_nodes=0):
    """Run the whole plan; (rows, metadata of the experiment file: machine, date, plan)."""
    meta = {**base_metadata(), "command": command, **machine.machine_metadata(),
            "date": machine.now_iso(), "loadavg_start": machine.loadavg()}
    if runner.cluster is not None:
        meta["cluster"] = runner.cluster.describe()
    start = time.monotonic()
    launch_plan = plan(comm_sizes, msg_sizes, methods, nbft_max, launches, placements,
                       net_nodes)
    rows = run_all(runner, launch_plan, progress_interval, log)
    mappings = {}
    for spec in launch_plan:
        mappings.setdefault(f"{spec.experiment} P={spec.comm_size} "
                            f"{describe(spec.nodes, spec.ppn)}", runner.mapping(spec))
    meta.update({"comm_sizes": comm_sizes_text, "msg_sizes": msg_sizes_text,
                 "launches_per_point": launches,
                 "launches": runner.launches, "wall_s": f"{time.monotonic() - start:.1f}",
                 "mapping": "; ".join(f"{k}: {v}" for k, v in mappings.items())})
    if runner.cluster is not None:
        meta["placements_checked"] = (f"{runner.placements_checked} of {runner.launches} "
                                      "launches (every rank's host, from #@rank_hosts)")
    return rows, meta


def save(rows, metadata, columns=COLUMNS):
    """An experiment file: `# key=value` metadata lines, then the rows' `columns` as CSV."""
    out = io.StringIO()
    for k, v in metadata.items():
        out.write(f"# {k}={v}\n")
    w = csv.DictWriter(out, columns, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: r[k] for k in columns})
    return out.getvalue()


# The bcast algorithms models.bcast describes (Open MPI's ids, the baseline 0 excluded).
MODELLED_ALGORITHMS = tuple(a for a in sorted(algorithms.ALGORITHMS["bcast"])
                            if a != algorithms.BASELINE_ALGORITHM)
_RANGES = {"comm_size": values.COMM_SIZE, "msg_size": values.MSG_SIZE,
           "algorithm": values.ALGORITHM_ID, "segsize": values.SEGSIZE,
           "gather_size": values.MSG_SIZE, "nodes": values.COMM_SIZE,
           "ppn": (0, values.COMM_SIZE[1]), "launch": launch_stats.LAUNCHES,
           "n": bench.REPETITIONS}


def placement_problem(r):
    """Why a row's placement cannot be its experiment's, or None."""
    P, nodes, ppn = r["comm_size"], r["nodes"], r["ppn"]
    if r["experiment"] == "nbft" and (nodes, ppn) != (1, P):
        return f"nbft runs on one node (nodes 1, ppn {P}), not nodes {nodes} ppn {ppn}"
    if r["experiment"] == "nbft-net" and (ppn != ROOT_ALONE or not 2 <= nodes <= P):
        return (f"nbft-net places the root alone (ppn 0) on 2 to P nodes, not nodes {nodes} "
                f"ppn {ppn}")
    if r["experiment"] == "bcast-gather" and nodes * ppn != P:
        return f"nodes {nodes} x ppn {ppn} is not comm_size {P}"
    return None


def load(path):
    """Rows of an experiment file written by `save`; one located error for a bad line (every
    value held to its core.io.values range)."""
    doc = csvfile.read(path, "an experiment file")
    if doc.header is None:
        raise InputError(f"{path}: empty experiment file")
    header = tuple(doc.header)
    if header not in (COLUMNS, ONE_NODE_COLUMNS):
        raise located(path, doc.header_line, f"header must be {','.join(COLUMNS)} (or, one "
                      f"node, {','.join(ONE_NODE_COLUMNS)})")
    rows = []
    for lineno, f in doc.rows:
        where = f"{path}:{lineno}"
        if len(f) != len(header):
            raise located(path, lineno, f"{len(f)} fields, expected {len(header)}")
        r = dict(zip(header, f))
        if r["experiment"] not in EXPERIMENTS:
            raise located(path, lineno, f"experiment '{r['experiment'][:40]}' is not "
                          + ", ".join(EXPERIMENTS))
        if header == ONE_NODE_COLUMNS:
            r.update(nodes="1", ppn=r["comm_size"])
        for k, (low, high) in _RANGES.items():
            r[k] = values.integer(r[k], k, low, high, where)
        problem = placement_problem(r)
        if problem:
            raise located(path, lineno, problem)
        r["time_us"] = values.time_us(r["time_us"], "time_us", where)
        if r["experiment"] == "bcast-gather" and r["algorithm"] not in MODELLED_ALGORITHMS:
            raise located(path, lineno, f"algorithm {r['algorithm']} is not a bcast algorithm "
                          "with a model (" + ", ".join(map(str, MODELLED_ALGORITHMS)) + ")")
        rows.append(r)
    check_fittable(rows, path)
    return rows


def check_fittable(rows, path):
    """Refuse experiments a fit cannot use: it needs bcast+gather rows (one method each) and
    the P = 2 NBFT at two message sizes or more (gamma0's reference and Hockney's alpha, beta);
    bcast+gather across nodes also needs the network NBFT at P = 2 at a segment size the
    one-node NBFT has (Q, eq. 15)."""
    if not any(r["experiment"] == "bcast-gather" for r in rows):
        raise InputError(f"{path}: no bcast-gather rows: nothing to fit a method from")
    sizes = {e: {r["msg_size"] for r in rows if r["experiment"] == e and r["comm_size"] == 2}
             for e in ("nbft", "nbft-net")}
    if len(sizes["nbft"]) < 2:
        raise InputError(f"{path}: needs nbft rows at P=2 for two message sizes or more (the "
                         "point-to-point reference of gamma0 and the Hockney fit)")
    crossing = any(r["experiment"] == "bcast-gather" and r["nodes"] > 1 for r in rows)
    if crossing and not sizes["nbft"] & sizes["nbft-net"] & set(SEGMENT_SIZES):
        raise InputError(f"{path}: bcast-gather rows across nodes need nbft and nbft-net rows "
                         "at P=2 at a common segment size (" + ", ".join(map(str, SEGMENT_SIZES))
                         + "): the channel ratio Q")
