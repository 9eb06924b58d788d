"""`collsel sweep`: measure every forced MPI algorithm into a performance table."""
import argparse
import os
import re
import shlex
import sys

from collsel.core import algorithms, sizes, values
from collsel.core.files import write_file
from collsel.errors import InputError
from collsel.sources.measure import benchmark_program as bench, launchers
from collsel.sources.sweep import launch_stats, load, paired, plan, refine, run, shapes
from collsel.sources.sweep.sbatch import sbatch_script

SWEEP_HELP = """\
Measure every algorithm (and segment size) of one collective for each communicator size P and
message size m, plus algorithm 0 (the MPI's own decision) as the baseline, and write the
canonical performance table. Progress is appended as it is made, so a killed sweep loses at
most the launch in flight; --resume continues it.

modes (--mode):
  paired (default)  one launch per (P, launch number) measures ALL methods of P, interleaved in
                    rounds shuffled by the launch's recorded seed, so the launch effect cancels
                    in each launch's comparison; --launches (default 5) such launches are the
                    replications. time_us = mean of the launch medians with its CI across
                    launches; the table adds `tied` (indistinguishable from the cell's best by
                    a paired t-interval of per-launch log-ratios) and `p_best` (bootstrap over
                    launches): see the table's '# tie_rule='. Open MPI or MPICH (--mpi).
  per-method        the old mode: one launch per (P, method, launch number), --launches
                    default 3; Open MPI only. Kept to compare the two.

Defaults: Open MPI: all coll/tuned algorithms; segment sizes 0,1K,8K,32K,128K for the
algorithms that segment. MPICH: all its algorithms but smp (smp needs several nodes; ask for it
with --algorithms). P = 2,3,4,6,8,12,16; m = powers of two and the midpoints 3*2^k, 1 B .. 4 MiB.

Several nodes (paired mode): --nodes LIST --ppn LIST measures every P = nodes x ppn >= 2 with
ppn ranks on each of `nodes` nodes (mpirun --host h1:PPN,... --map-by ppr:PPN:node; srun
--nodes N --ntasks-per-node PPN), rows carrying `nodes` and `ppn` columns (a third axis:
`collsel build --z ppn`). Every launch's ranks are checked against the mapping (the benchmark
reports each rank's host; the journal records them); a launch placed otherwise stops the sweep.
--cluster runs on the emulated cluster of `collsel cluster up` (its hostfile, agent and TCP
settings; with --launcher srun inside `salloc`, or through the --emit-sbatch script).

Under background load (paired mode): --load-levels off,low,medium,high measures every method at
every level, each shape's levels one after the other in every round of launches (so levels
interleave and methods stay paired within a launch); --load names what makes the load
(stress-cpu or stress-memory on this machine; iperf3 or slurm-mpi between the emulated
cluster's nodes), started before each launch and stopped after it. Rows carry `load_level`
(experiment control only) and `probe_us`: the benchmark probes before every round (--probe,
on with --load-levels): the median over launches of each launch's median round probe, what a
program sees at run time (runtime/collsel_probe.c). `collsel build --z probe_us` bins it.

examples:
  collsel sweep --collective bcast --out bcast.csv
  collsel sweep --collective reduce --comm-sizes 2-8 --algorithms binomial,pipeline:8K --out r.csv
  collsel sweep --collective bcast --out bcast.csv --resume
  collsel sweep --collective bcast --out bcast.csv --dry-run
  collsel sweep --collective bcast --out bcast.csv --emit-sbatch sweep.sbatch
  collsel sweep --collective bcast --out bcast.csv --refine 600s --raw bcast.raw
  collsel sweep --collective reduce --mpi mpich --out reduce-mpich.csv
  collsel sweep --collective bcast --mode per-method --out bcast-old.csv
  collsel sweep --collective bcast --cluster --nodes 1,2,4 --ppn 1,2 --out bnp.csv
  salloc -N 4 --ntasks-per-node 2 -p collsel \\
    collsel sweep --collective bcast --cluster --launcher srun --nodes 1,2,4 --ppn 1,2 --out b.csv
  collsel sweep --collective bcast --cluster --nodes 1,2 --ppn 1,2 --out b.csv --emit-sbatch b.sh
  sbatch --wait b.sh
  collsel sweep --collective bcast --comm-sizes 2,4 --load-levels off,low,high --out bl.csv
  collsel sweep --collective bcast --cluster --nodes 2,4 --ppn 1 --load iperf3 \
    --load-levels off,low,medium,high --out bl-cluster.csv
"""


def register(subparsers):
    p = subparsers.add_parser("sweep", help="measure Open MPI algorithms into a table",
                              description=SWEEP_HELP,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--collective", required=True, help="bcast or reduce")
    p.add_argument("--mode", default="paired", choices=("paired", "per-method"),
                   help="paired (default): all methods of a P in each launch; per-method: one "
                        "launch per method (the old mode, Open MPI only)")
    p.add_argument("--mpi", default="openmpi", choices=algorithms.FAMILIES,
                   help="which MPI to measure (default openmpi): its launcher (mpirun.openmpi "
                        "/ mpirun.mpich when present, else mpirun), the benchmark built with "
                        "its mpicc, its own algorithms, named natively in the table (MPICH: "
                        "'# algorithm_family=mpich', MPIR_CVAR_COLLECTIVE_FALLBACK=error). "
                        "mpich needs --mode paired and --launcher local or hostfile (--cluster "
                        "included)")
    p.add_argument("--seed", default=1, help="paired: the seed every launch's own seed (the "
                   "order of methods in its rounds) and the bootstrap derive from (default 1; "
                   "recorded)")
    p.add_argument("--refine", metavar="BUDGET",
                   help="paired: after the planned launches, launch again where cells are "
                        "undecided (the best's p_best below --confidence and some other "
                        "method neither distinguishably slower nor within --equivalence of "
                        "it): the P with most undecided cells first, only those "
                        "sizes, until all are decided or BUDGET is spent: 'Ns' seconds or 'N' "
                        "launches. Resumable; the table is rewritten from the journal at the end")
    p.add_argument("--confidence", default=0.95,
                   help="paired: p_best a cell's best must reach to count as decided (default "
                        "0.95)")
    p.add_argument("--equivalence", default="5", metavar="PCT",
                   help="paired, for --refine: a method whose whole 95 %% paired interval of "
                        "its time ratio to the best lies within +-PCT%% counts as practically "
                        "equal, so it does not keep a cell undecided (default 5)")
    p.add_argument("--raw", metavar="FILE",
                   help="paired: also keep every repetition in FILE (ReproMPI per-repetition "
                        "layout, one '#@' block per launch; the launches' own files stay in "
                        "FILE.parts/), rebuilt atomically at the end")
    p.add_argument("--probe", nargs="?", const=PROBE_DEFAULT, metavar="REPS:CAP_US",
                   help="paired: before every round the benchmark runs the run-time probe "
                        "(runtime/collsel_probe.c: 4 KB ping-pongs between rank pairs, at most "
                        "REPS per pair, none after CAP_US microseconds; default "
                        f"{PROBE_DEFAULT}) and rows gain probe_us, the median over launches of "
                        "each launch's median round probe")
    p.add_argument("--load-levels", metavar="LIST",
                   help="paired: measure every shape at each background-load level of LIST "
                        f"({','.join(load.LEVELS)}), levels interleaved within each round of "
                        "launches; rows gain load_level and probe_us (implies --probe), and with "
                        "--cluster cluster_load (Slurm's busy nodes, from squeue, the "
                        "scheduler's view)")
    p.add_argument("--load", choices=load.GENERATORS,
                   help="with --load-levels: what makes the load, started before each launch "
                        f"and stopped after it (default {load.GENERATORS[0]}). stress-cpu: "
                        "stress-ng CPU workers, 0.5 / 1 / 2 x the cores (low / medium / high); "
                        "stress-memory: stress-ng stream workers, 1 / cores / 2 x cores; with "
                        "--cluster, iperf3: TCP streams node k -> k+1 at 10 / 40 / 80 %% of the "
                        "link rate, slurm-mpi: another Slurm job of back-to-back bcasts of "
                        "4 KiB / 64 KiB / 1 MiB over every node (the two network generators "
                        "are designed but not yet validated)")
    p.add_argument("--out", required=True, help="table to write (CSV)")
    p.add_argument("--algorithms", help="comma list of ids or names, ALG:SEG pins a segment "
                   "size, hier:G:INNER:OUTER adds a hierarchical method (Open MPI: G groups of "
                   "consecutive ranks, INNER inside them, OUTER among their leaders) "
                   "(default: all but 0)")
    p.add_argument("--segsizes", help="segment sizes for segmenting algorithms "
                   "(default 0,1K,8K,32K,128K)")
    p.add_argument("--comm-sizes", help="P values: list and ranges, e.g. 2-16 or 2,4,8 "
                   "(default 2,3,4,6,8,12,16; not with --nodes/--ppn)")
    p.add_argument("--nodes", metavar="LIST",
                   help="paired: node counts (list and ranges, e.g. 1,2,4); with --ppn, every "
                        "P = nodes x ppn >= 2 is measured with ppn ranks on each of the first "
                        "`nodes` hosts of the hostfile (--launcher hostfile, --cluster) or of "
                        "the allocation (srun), and rows carry `nodes` and `ppn` columns. "
                        "Replaces --comm-sizes")
    p.add_argument("--ppn", metavar="LIST",
                   help="paired, with --nodes: ranks per node (list and ranges, e.g. 1,2)")
    p.add_argument("--cluster", nargs="?", const="", metavar="DIR",
                   help="run on the emulated cluster `collsel cluster up` made (state "
                        "directory DIR, default $COLLSEL_CLUSTER_DIR or "
                        "/var/lib/collsel/cluster): --launcher hostfile by default, with the "
                        "cluster's hostfile, launch agent and TCP settings, ranks unbound and "
                        "yielding (the nodes share this machine's cores); --launcher srun "
                        "(inside salloc) adds --mpi=pmix; the table records the links "
                        "('# links=')")
    p.add_argument("--msg-sizes", help="message sizes in bytes, K/M suffixes allowed "
                   "(default 1 B..4 MiB, powers of two and midpoints)")
    p.add_argument("--no-baseline", action="store_true",
                   help="do not measure algorithm 0 (Open MPI's own decision)")
    p.add_argument("--resume", action="store_true",
                   help="continue the sweep in --out. --mode, --mpi, --seed, --collective, "
                        "--launches, --time-cap, "
                        "--rel-ci, --min-reps, --max-reps, --warmup, --launcher, "
                        "--launcher-args, --bench, --probe, --load-levels and --load must be "
                        "as recorded (the table's "
                        "'# options=' line); --comm-sizes, --msg-sizes and --algorithms "
                        "(with --segsizes, --no-baseline) may add values but not drop recorded "
                        "ones; --out, --timeout, --refine, --confidence and --raw may differ")
    p.add_argument("--force", action="store_true", help="overwrite an existing --out")
    p.add_argument("--dry-run", action="store_true",
                   help="print the launch commands only (reads, never writes, takes no lock; "
                        "says so in a '# note:' line when another sweep is writing --out)")
    p.add_argument("--launcher", choices=launchers.LAUNCHERS,
                   help="local mpirun (default; hostfile with --cluster), mpirun --hostfile, "
                        "or srun (inside a Slurm allocation)")
    p.add_argument("--hostfile", help="hostfile for --launcher hostfile")
    p.add_argument("--map-by", default="core", help="mpirun --map-by for --launcher hostfile")
    p.add_argument("--mpirun", help="launcher program (default mpirun, or srun)")
    p.add_argument("--launcher-args", default="", help="extra launcher arguments (one string)")
    p.add_argument("--bench", help="benchmark binary (default: build the shipped collsel_bench.c with mpicc)")
    p.add_argument("--mpicc", help="MPI compiler wrapper for the benchmark (default: mpicc "
                   "under --mpi openmpi, mpicc.mpich under --mpi mpich)")
    p.add_argument("--launches", default=None,
                   help="separate launches per point (default 5 paired, 3 per-method): "
                        "launches differ by more than one launch's own CI, so time_us is the "
                        "mean of the launch medians and its CI is taken across them; they run "
                        "in rounds, spreading each point over the sweep's time. Paired: 3 at "
                        "least for a useful tie test (2 give a t quantile of 12.7)")
    p.add_argument("--time-cap", default=0.03,
                   help="seconds of timed repetitions per point and launch at most "
                        "(default 0.03; paired: the benchmark gets this times the number of "
                        "methods for each size, all methods together, so both modes spend "
                        "alike)")
    p.add_argument("--rel-ci", default=0.025,
                   help="target 95%% CI half-width relative to the mean, for each launch's "
                        "stopping rule and for ci_met across launches (default 0.025)")
    p.add_argument("--min-reps", default=5, help="repetitions before the CI "
                   "test (default 5; fewer only when one call exceeds the time cap)")
    p.add_argument("--max-reps", default=300,
                   help="repetition cap per launch (default 300; the CI is across launches, so "
                        "one launch needs only a stable median)")
    p.add_argument("--warmup", default=2, help="warm-up calls per point (default 2)")
    p.add_argument("--timeout", default=120.0,
                   help="kill a launch that prints nothing for this many seconds (default 120)")
    p.add_argument("--fault", help=argparse.SUPPRESS)   # test hook, passed to the benchmark
    p.add_argument("--progress-interval", default=30.0,
                   help="seconds between progress lines when stderr is not a terminal")
    p.add_argument("--emit-sbatch", metavar="FILE",
                   help="write a Slurm batch script running this sweep with srun, then stop "
                        "(submitting it again resumes the sweep). With --nodes/--ppn it asks "
                        "for max(nodes) nodes and max(ppn) tasks per node; with --cluster it "
                        "targets the cluster's partition and runs there (`sbatch --wait FILE` "
                        "with the cluster's SLURM_CONF): the directory, --out and the "
                        "benchmark must then lie outside /tmp (each node has a private /tmp)")
    p.add_argument("--sbatch-time", default="04:00:00", help="--time of the batch script")
    p.add_argument("--sbatch-nodes", help="--nodes of the batch script (not with --nodes: it "
                   "follows from them)")
    p.add_argument("--sbatch-args", default="", help="more #SBATCH options, one string")
    p.set_defaults(run=run_sweep)


# --probe's default: 8 exchanges per pair, none started after 200 us; the probe's own limits
# (include/collsel_probe.h: COLLSEL_PROBE_MAX_REPS, COLLSEL_PROBE_MAX_TIME_CAP_US).
PROBE_DEFAULT = "8:200"
PROBE_REPS_MAX = 100000
PROBE_CAP_US_MAX = 1e9
# Flag ranges that are not the benchmark's own (benchmark_program.py holds those).
TIMEOUT_S = (0.0, 7 * 86400.0)          # --timeout: open below, a week above
PROGRESS_S = (0.0, 86400.0)             # --progress-interval: open below, a day above
SBATCH_TIME = re.compile(r"\d+(:\d{1,2}){0,2}|\d+-\d{1,2}(:\d{1,2}){0,2}")


def _check_numbers(args):
    """Every numeric flag, checked and converted in place (core.values ranges; the benchmark's
    own option ranges from benchmark_program.py); one line naming the flag."""
    if args.launches is None:
        args.launches = 5 if args.mode == "paired" else 3
    args.launches = values.integer(args.launches, "--launches", *launch_stats.LAUNCHES)
    args.seed = values.integer(args.seed, "--seed", 0, 2**64 - 1)
    args.confidence = values.number(args.confidence, "--confidence", 0.0, 1.0)
    args.equivalence = values.number(args.equivalence, "--equivalence", 0.0, 100.0) / 100.0
    args.refine_budget = refine.parse_budget(args.refine)
    if args.mode == "per-method":
        for flag, given in (("--mpi mpich", args.mpi != "openmpi"),
                            ("--refine", args.refine is not None), ("--raw", args.raw),
                            ("--nodes/--ppn", args.nodes or args.ppn),
                            ("--cluster", args.cluster is not None),
                            ("--probe", args.probe), ("--load-levels", args.load_levels)):
            if given:
                raise InputError(f"{flag} needs --mode paired (the per-method mode measures "
                                 "Open MPI only, one method per launch)")
    args.load_levels = (load.parse_levels(args.load_levels) if args.load_levels is not None
                        else None)
    if args.load is not None and not args.load_levels:
        raise InputError(f"--load {args.load} needs --load-levels (the levels to make)")
    args.load = args.load or load.GENERATORS[0]
    if args.load_levels and args.probe is None:
        args.probe = PROBE_DEFAULT
    if args.probe is not None:
        args.probe = _probe(args.probe)
    if args.load_levels and args.raw:
        raise InputError("--raw with --load-levels: not supported yet (the raw parts are named "
                         "by P and launch, not by level)")
    args.time_cap = values.number(args.time_cap, "--time-cap", *bench.TIME_CAP_S)
    args.rel_ci = values.number(args.rel_ci, "--rel-ci", *bench.REL_CI)
    args.min_reps = values.integer(args.min_reps, "--min-reps", *bench.REPS)
    args.max_reps = values.integer(args.max_reps, "--max-reps", args.min_reps, bench.REPS[1])
    args.warmup = values.integer(args.warmup, "--warmup", *bench.WARMUP)
    args.timeout = values.number(args.timeout, "--timeout", *TIMEOUT_S, low_open=True)
    args.progress_interval = values.number(args.progress_interval, "--progress-interval",
                                    *PROGRESS_S, low_open=True)
    if args.sbatch_nodes is not None:
        low, _, high = str(args.sbatch_nodes).partition("-")
        first = values.integer(low, "--sbatch-nodes", *values.COMM_SIZE)
        if high:
            values.integer(high, "--sbatch-nodes (the maximum of MIN-MAX)", first,
                           values.COMM_SIZE[1])
    if not SBATCH_TIME.fullmatch(args.sbatch_time.strip()):
        raise InputError(f"--sbatch-time {args.sbatch_time!r} is not a Slurm time (MINUTES, "
                         "H:MM:SS, D-HH, D-HH:MM:SS, ...)")
    for flag, text in (("--sbatch-args", args.sbatch_args), ("--launcher-args",
                                                             args.launcher_args)):
        try:
            shlex.split(text or "")
        except ValueError as e:
            raise InputError(f"{flag} {text!r}: {e} (one string of shell words)") from None
        values.one_line(text, flag)


def _probe(text):
    """--probe REPS[:CAP_US], checked against the probe's limits, as 'REPS:CAP_US'."""
    reps, _, cap = str(text).strip().partition(":")
    reps = values.integer(reps, "--probe (REPS)", 1, PROBE_REPS_MAX)
    cap = values.number(cap or PROBE_DEFAULT.split(":")[1], "--probe (CAP_US)", 0.0,
                        PROBE_CAP_US_MAX)
    return f"{reps}:{cap:g}"


def _canonical(args, cfg, launcher_name, program=("collsel",), cluster=None):
    """The sweep as explicit options, so a batch script or a log reproduces it exactly."""
    if cfg.explicit:
        grid = ["--nodes", ",".join(map(str, sorted({s.nodes for s in cfg.shapes}))),
                "--ppn", ",".join(map(str, sorted({s.ppn for s in cfg.shapes})))]
    else:
        grid = ["--comm-sizes", ",".join(map(str, cfg.comm_sizes))]
    parts = [*program, "sweep", "--mode", cfg.mode, "--mpi", cfg.family, "--collective",
             cfg.collective, "--out", os.path.abspath(cfg.out), *grid,
             "--msg-sizes", ",".join(map(str, cfg.msg_sizes)),
             "--algorithms", ",".join(f"{m.algorithm}:{m.segsize}" for m in cfg.methods
                                      if m.algorithm != algorithms.BASELINE_ALGORITHM),
             "--launches", str(args.launches),
             "--time-cap", str(args.time_cap), "--rel-ci", str(args.rel_ci),
             "--min-reps", str(args.min_reps), "--max-reps", str(args.max_reps),
             "--warmup", str(args.warmup), "--timeout", str(args.timeout),
             "--launcher", launcher_name]
    if cluster is not None:
        parts += ["--cluster", cluster.state_dir]
    if cfg.mode == "paired":
        parts += ["--seed", str(cfg.seed), "--confidence", str(cfg.confidence),
                  "--equivalence", f"{100 * cfg.equivalence:g}"]
        if args.refine:
            parts += ["--refine", args.refine.strip()]
        if args.raw:
            parts += ["--raw", os.path.abspath(args.raw)]
        if args.probe:
            parts += ["--probe", args.probe]
        if args.load_levels:
            parts += ["--load-levels", ",".join(args.load_levels), "--load", args.load]
    if args.no_baseline:
        parts.append("--no-baseline")
    if args.launcher_args:
        parts += ["--launcher-args", args.launcher_args]
    if args.bench:
        parts += ["--bench", os.path.abspath(args.bench)]
    if args.fault:
        parts += ["--fault", args.fault]
    return shlex.join(parts)


def run_sweep(args):
    # Everything given is checked before anything is built, launched, read or written.
    for flag in ("out", "emit_sbatch", "bench", "hostfile", "mpirun", "mpicc", "map_by",
                 "collective", "algorithms", "segsizes", "comm_sizes", "msg_sizes", "fault",
                 "raw", "refine", "nodes", "ppn", "cluster", "probe", "load_levels"):
        values.one_line(getattr(args, flag), "--" + flag.replace("_", "-"))
    values.output_file(args.out, "--out")
    if args.raw is not None:
        values.output_file(args.raw, "--raw")
    if args.emit_sbatch is not None:
        values.output_file(args.emit_sbatch, "--emit-sbatch")
    try:
        collective = algorithms.check_collective(args.collective, args.mpi)
    except InputError as e:
        raise InputError(f"--collective: {e}") from None
    _check_numbers(args)
    methods = plan.plan_methods(collective, args.algorithms, args.segsizes,
                                baseline=not args.no_baseline, family=args.mpi)
    groups = _shapes(args)
    comm_sizes = sorted({s.p for s in groups}) if groups else (
        sizes.parse_comm_sizes(args.comm_sizes) if args.comm_sizes
        else list(plan.DEFAULT_COMM_SIZES))
    msg_sizes = (sizes.parse_size_list(args.msg_sizes, "--msg-sizes", *bench.MSG_SIZE,
                                       name="message size (an int count in the benchmark)")
                 if args.msg_sizes else sizes.default_msg_sizes())
    if args.resume and args.force:
        raise InputError("--resume and --force contradict each other")

    sbatch = args.emit_sbatch is not None
    cluster = _cluster(args)
    name = args.launcher or ("hostfile" if cluster is not None else "local")
    launcher = launchers.make("srun" if sbatch else name, args.mpirun, args.launcher_args,
                              args.hostfile, args.map_by, for_script=sbatch, family=args.mpi,
                              cluster=cluster)
    if not sbatch:
        launcher.check()
    for shape in groups or ():
        launcher.check_shape(shape.nodes, shape.ppn)
    bench_args = ["--time-cap", str(args.time_cap), "--rel-ci", str(args.rel_ci),
                  "--min-reps", str(args.min_reps), "--max-reps", str(args.max_reps),
                  "--warmup", str(args.warmup)]
    if args.fault:
        bench_args += ["--fault", args.fault]
    if args.probe:
        bench_args += ["--probe", args.probe]
    bench_args += _runtime(cluster, groups)
    # A batch script for a real cluster builds the benchmark where it runs; the emulated
    # cluster's nodes share this machine's files, so it is built now.
    bench_path = _locate_bench(args, build=not (args.dry_run or (sbatch and cluster is None)))
    if cluster is not None and launcher.name == "srun":
        _visible_on_the_nodes(args, bench_path, whole_sweep=sbatch)
    argv0 = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "collsel"
    argv0 = "collsel" if argv0 in ("collsel", "__main__.py", "cli.py") else argv0
    cfg = plan.Config(
        collective=collective, out=args.out, comm_sizes=comm_sizes, msg_sizes=msg_sizes,
        methods=methods, launcher=launcher, bench_path=bench_path, bench_args=bench_args,
        silence_timeout=args.timeout, resume=args.resume, force=args.force,
        dry_run=args.dry_run,
        command=shlex.join([argv0] + sys.argv[1:]),
        progress_interval=args.progress_interval, launches=args.launches, rel_ci=args.rel_ci,
        mode=args.mode, family=args.mpi, seed=args.seed, refine=args.refine_budget,
        confidence=args.confidence, equivalence=args.equivalence, raw=args.raw,
        shapes=groups, links=cluster.describe() if cluster is not None else None,
        probe=args.probe, load_levels=args.load_levels,
        load=_load_generator(args, cluster, bench_path, check=not (args.dry_run or sbatch)),
        scheduler=(load.SchedulerView(cluster)
                   if cluster is not None and args.load_levels else None))
    cfg.options = _canonical(args, cfg, launcher.name, cluster=cluster)

    if sbatch:
        # On the emulated cluster the script runs inside node n1's namespace: this Python and
        # the package it imports (outside /tmp) rather than whatever `collsel` PATH finds.
        program = (sys.executable, "-m", "collsel.cli") if cluster is not None else ("collsel",)
        inner = _canonical(args, cfg, "srun", program, cluster) + " --resume"
        text = sbatch_script(cfg, inner, args.sbatch_time, args.sbatch_nodes, args.sbatch_args,
                             partition=cluster.partition if cluster is not None else None)
        write_file(args.emit_sbatch, text)
        os.chmod(args.emit_sbatch, 0o755)
        print(f"wrote {args.emit_sbatch}; submit it with: sbatch {args.emit_sbatch}")
        return 0
    runner = paired if args.mode == "paired" else run
    if args.dry_run:
        for line in runner.dry_run(cfg):
            print(line)
        return 0
    return runner.run(cfg, sys.stderr)


def _load_generator(args, cluster, bench_path, check):
    """The --load generator of --load-levels (sweep/load.py), its program checked when the sweep
    runs here; None without levels."""
    if not args.load_levels:
        return None
    generator = load.make(args.load, cluster, bench_path)
    if check:
        generator.check()
    return generator


def _runtime(cluster, groups):
    """The benchmark's --runtime when one table mixes one-node and multi-node launches, so
    every row has one meaning. The emulated nodes share this machine's clock: the global
    runtime (latest end - earliest start; right when ranks share cores, see collsel_bench.c).
    Real nodes have their own clocks: the slowest rank's local time, on one node too.
    Otherwise the benchmark decides (global on one node)."""
    if cluster is not None:
        return ["--runtime", "global"]
    if groups and any(s.nodes > 1 for s in groups):
        return ["--runtime", "local"]
    return []


def _shapes(args):
    """The explicit nodes x ppn shapes of --nodes/--ppn, or None (a --comm-sizes sweep)."""
    if args.nodes is None and args.ppn is None:
        return None
    if args.comm_sizes:
        raise InputError("--comm-sizes cannot be given with --nodes/--ppn: P is nodes x ppn "
                         "for every pair (drop --comm-sizes)")
    if args.sbatch_nodes is not None:
        raise InputError("--sbatch-nodes cannot be given with --nodes/--ppn: the batch script "
                         "asks for max(--nodes) nodes")
    return shapes.explicit(args.nodes, args.ppn)


def _cluster(args):
    """The emulated cluster of --cluster (collsel.sources.cluster.load), or None."""
    if args.cluster is None:
        return None
    from collsel.sources import cluster
    return cluster.load(args.cluster or None)


# Each emulated node mounts its own directory over /tmp (sources/cluster): a batch script
# running on a node cannot see this machine's /tmp.
PRIVATE_ON_NODES = "/tmp"


def _visible_on_the_nodes(args, bench_path, whole_sweep):
    """One line when what srun starts on a node of the emulated cluster could not reach a file
    it needs: the benchmark and its --raw parts; for the batch script (`whole_sweep`, the
    sweep itself runs on a node) also the directory, --out, this Python and collsel."""
    import collsel
    paths = [("the benchmark", bench_path), ("--raw", args.raw)]
    if whole_sweep:
        paths += [("the current directory", os.getcwd()), ("--out", args.out),
                  ("this Python", sys.executable),
                  ("the collsel package", os.path.dirname(collsel.__file__))]
    for what, path in paths:
        if path is None:
            continue
        full = os.path.realpath(os.path.abspath(path))
        if full == PRIVATE_ON_NODES or full.startswith(PRIVATE_ON_NODES + "/"):
            how = "--emit-sbatch" if whole_sweep else "--launcher srun"
            raise InputError(f"{how} on the emulated cluster: {what} ({full}) is under "
                             f"{PRIVATE_ON_NODES}, which every node of the emulated cluster "
                             "replaces by its own: use a directory outside /tmp")


def _locate_bench(args, build):
    """The benchmark binary, built with the --mpi family's compiler wrapper
    (benchmark_program.MPICC) unless --mpicc names one."""
    return bench.locate(args.bench, args.mpicc or bench.MPICC[args.mpi], build=build)
