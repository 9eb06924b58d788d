"""`collsel sweep`: measure every forced MPI algorithm into a performance table."""
import argparse
import os
import re
import shlex
import sys

from collsel.core import algorithms, names, sizes, values
from collsel.core.files import write_file
from collsel.errors import InputError
from collsel.sources.measure import benchmark_program as bench, launchers, mpi_home
from collsel.sources.sweep import (engine, launch_stats, load, paired, plan, racing, refine,
                                   replay, run, shapes)
from collsel.sources.sweep.sbatch import sbatch_script
from collsel.commands import add_command

SWEEP_HELP = """\
Measure every algorithm (and segment size) of one collective for each communicator size P and
message size m, plus algorithm 0 (the MPI's own decision) as the baseline, into a performance
table. Progress is appended as it is made: a killed sweep loses at most the launch in flight
and --resume continues it. A first launch that fails at start-up stops the sweep there, with
the launcher's message.

--mode paired (default): one launch per (P, launch number) measures all methods of P in rounds
shuffled by the launch's seed, so the launch effect cancels; --launches such launches are the
replications: time_us is the mean of the launch medians, its CI across launches, and `tied` /
`p_best` say which methods are indistinguishable from the best ('# tie_rule=' in the table).
--mode per-method: one launch per (P, method), Open MPI and Intel MPI (--mpi intel: the only
mode, its presets are forced through I_MPI_ADJUST_<COLL> in each launch's environment).

Defaults: all algorithms of --mpi (MPICH: but smp, which needs several nodes, and
reduce_scatter's noncommutative, on which MPICH 4.0.2 asserts at a P no power of two); segment
sizes 0,1K,8K,32K,128K where an algorithm segments; P = 2,3,4,6,8,12,16; m = 1 B..4 MiB, powers of
two and their midpoints. --nodes/--ppn place ranks on several nodes (rows gain nodes, ppn; each
launch's placement is checked); --cluster runs on the emulated cluster of `collsel cluster up`;
--load-levels measures under background load (rows gain load_level, probe_us).

examples:
  collsel sweep --collective bcast --out bcast.csv            (--dry-run: plan and estimate)
  collsel sweep --collective bcast --out bcast.csv --resume
  collsel sweep --collective reduce --comm-sizes 2-8 --algorithms binomial,pipeline:8K --out r.csv
  collsel sweep --collective reduce --mpi mpich --out reduce-mpich.csv
  collsel sweep --collective bcast --cluster --nodes 1,2,4 --ppn 1,2 --out bnp.csv
  salloc -N 3 --ntasks-per-node 2 collsel sweep --collective bcast --launcher srun \\
      --nodes 1,3 --ppn 1,2 --out b.csv
  collsel sweep --collective bcast --nodes 1,2 --ppn 1,2 --out b.csv --emit-sbatch b.sh
  collsel sweep --collective bcast --comm-sizes 2,4 --load-levels off,low,high --out bl.csv
"""


def register(subparsers):
    p = add_command(subparsers, "sweep",
                    usage="collsel sweep --collective NAME --out FILE [options]",
                    description=SWEEP_HELP, formatter_class=_HelpFormatter)
    what = p.add_argument_group("what to measure")
    what.add_argument("--collective", required=True, metavar="NAME",
                      help=f"{' or '.join(collectives())} (the benchmark's collectives)")
    what.add_argument("--mpi", default="openmpi", choices=mpi_home.MPI_NAMES,
                      help="the MPI measured (default openmpi): its launcher, its mpicc, its "
                           "own algorithm names; mpich: --mode paired, --launcher local or "
                           "hostfile")
    what.add_argument("--mpi-home", metavar="DIR",
                      help="the --mpi installation's prefix (bin/mpicc, its launcher, for "
                           "intel its environment), e.g. build/mpis/openmpi5 of make "
                           "setup-mpis (default: Debian's Open MPI / MPICH; Intel MPI from "
                           "I_MPI_ROOT or impi_info on PATH)")
    what.add_argument("--mode", choices=("paired", "per-method"),
                      help="paired (default) or per-method (see above; the default under "
                           "--mpi intel)")
    what.add_argument("--algorithms", metavar="LIST", help="ids or names, comma list; ALG:SEG "
                      "pins a segment size; hier:G:INNER:OUTER adds a hierarchical method (Open "
                      "MPI, paired; G groups of consecutive ranks). Default: all but 0")
    what.add_argument("--segsizes", metavar="LIST", help="segment sizes of segmenting algorithms "
                      "(default 0,1K,8K,32K,128K)")
    what.add_argument("--no-baseline", action="store_true",
                      help="do not measure algorithm 0 (the MPI's own decision)")
    what.add_argument("--comm-sizes", metavar="LIST", help="P values, lists and ranges: 2-16 "
                      "or 2,4,8")
    what.add_argument("--msg-sizes", metavar="LIST", help="message sizes in bytes, K/M "
                      "suffixes allowed")
    what.add_argument("--nodes", metavar="LIST",
                      help="paired, with --ppn: node counts (e.g. 1,2,4); every P = nodes x "
                           "ppn >= 2 runs ppn ranks on each of the first `nodes` hosts (of the "
                           "hostfile, or the allocation). Replaces --comm-sizes")
    what.add_argument("--ppn", metavar="LIST", help="paired, with --nodes: ranks per node")
    what.add_argument("--probe", nargs="?", const=PROBE_DEFAULT, metavar="REPS:CAP_US",
                      help="paired: run the run-time probe (runtime/collsel_probe.c) before "
                           f"every round (default {PROBE_DEFAULT}); rows gain probe_us")
    what.add_argument("--load-levels", metavar="LIST",
                      help=f"paired: measure under each background load level of LIST "
                           f"({','.join(load.LEVELS)}), interleaved; implies --probe")
    what.add_argument("--load", choices=load.GENERATORS,
                      help=f"what makes the load (default {load.GENERATORS[0]}; iperf3 and "
                           "slurm-mpi between the nodes of --cluster)")

    stats = p.add_argument_group("statistics")
    stats.add_argument("--launches", default=None, metavar="N",
                       help="separate launches per point, the replications of its CI "
                            "(default 5 paired, 3 per-method; paired: 3 at least)")
    stats.add_argument("--time-cap", default=0.03, metavar="S",
                       help="seconds of repetitions per point and launch at most (default "
                            "0.03)")
    stats.add_argument("--rel-ci", default=0.025, metavar="F",
                       help="target 95%% CI half-width / mean, per launch and across launches "
                            "(default 0.025)")
    stats.add_argument("--min-reps", default=5, metavar="N", help="repetitions before the CI test "
                       "(default 5)")
    stats.add_argument("--max-reps", default=300, metavar="N", help="repetitions per launch "
                       "at most (default 300)")
    stats.add_argument("--warmup", default=2, metavar="N", help="warm-up calls per point "
                       "(default 2)")
    stats.add_argument("--seed", default=1, metavar="N", help="paired: the seed of the "
                       "launches' orders and of the bootstrap (default 1)")
    stats.add_argument("--refine", metavar="BUDGET",
                       help="paired: then launch again where cells are undecided, until "
                            "decided or BUDGET ('600s' or a launch count) is spent")
    stats.add_argument("--strategy", choices=racing.STRATEGIES, default=racing.DEFAULT,
                       help="paired: what --refine launches: every method where a cell is "
                            "undecided (coarse-refine, the default), or only the methods "
                            "still in the race there (adaptive: sources/sweep/racing.py)")
    stats.add_argument("--confidence", default=0.95, metavar="P",
                       help="paired: p_best a decided cell's best reaches (default 0.95)")
    stats.add_argument("--equivalence", default="5", metavar="PCT",
                       help="--refine: methods within +-PCT%% of the best count as equal "
                            "(default 5)")

    where = p.add_argument_group("where to run")
    where.add_argument("--launcher", choices=launchers.LAUNCHERS,
                       help="local mpirun (default), mpirun --hostfile (default with "
                            "--cluster), or srun inside a Slurm allocation")
    where.add_argument("--srun-mpi", metavar="PLUGIN",
                       help="--launcher srun: srun --mpi=PLUGIN (default: the cluster's "
                            "MpiDefault, from its slurm.conf or `scontrol show config`; "
                            f"{launchers.SRUN_MPI_FALLBACK} when it is unset or none)")
    where.add_argument("--cluster", nargs="?", const="", metavar="DIR",
                       help="run on the emulated cluster of `collsel cluster up` (state DIR, "
                            "default $COLLSEL_CLUSTER_DIR or /var/lib/collsel/cluster): its "
                            "hostfile, agent and TCP settings, ranks unbound and yielding")
    where.add_argument("--hostfile", metavar="FILE", help="hostfile for --launcher hostfile")
    where.add_argument("--map-by", default="core", metavar="X", help="mpirun --map-by for "
                       "--launcher hostfile (default core)")
    where.add_argument("--mpirun", metavar="PROGRAM", help="launcher program (default "
                       "--mpi-home's, else mpirun.openmpi / mpirun.mpich when present, else "
                       "mpirun; srun)")
    where.add_argument("--launcher-args", default="", metavar="ARGS", help="extra launcher "
                       "arguments, one string")
    where.add_argument("--bench", metavar="PROGRAM", help="benchmark program (default: "
                       "collsel_bench.c built with --mpicc)")
    where.add_argument("--mpicc", metavar="PROGRAM", help="compiler wrapper (default "
                       "--mpi-home's, else mpicc; mpicc.mpich under --mpi mpich)")
    where.add_argument("--timeout", default=120.0, metavar="S",
                       help="kill a launch silent this many seconds (default 120)")
    where.add_argument("--emit-sbatch", metavar="FILE",
                       help="write a Slurm batch script running this sweep with srun, then "
                            "stop (submitting it again resumes); with --cluster it runs on "
                            "the cluster (directory, --out, benchmark outside /tmp)")
    where.add_argument("--sbatch-time", default="04:00:00", metavar="T", help="--time of the "
                       "batch script (default 04:00:00)")
    where.add_argument("--sbatch-nodes", metavar="N", help="--nodes of the batch script (not "
                       "with --nodes)")
    where.add_argument("--sbatch-args", default="", metavar="ARGS", help="more #SBATCH "
                       "options, one string")
    where.add_argument("--replay", metavar="TABLE",
                       help="paired: launch nothing; answer every launch from TABLE, a "
                            "recorded table (and its journal TABLE.launches when there is "
                            "one), charged what it cost on the real machine on a simulated "
                            "clock (docs/guide/replay.md); --comm-sizes, --msg-sizes, "
                            "--algorithms and --mpi default to the table's")
    where.add_argument("--fault", help=argparse.SUPPRESS)   # test hook, passed to the benchmark

    out = p.add_argument_group("output")
    out.add_argument("--out", required=True, metavar="FILE", help="table to write (CSV)")
    out.add_argument("--raw", metavar="FILE",
                     help="paired: also keep every repetition in FILE (ReproMPI layout)")
    out.add_argument("--resume", action="store_true",
                     help="continue the sweep in --out with the options its '# options=' "
                          "line records; the grid may grow; --out, --timeout, --refine, "
                          "--confidence, --equivalence, --raw and --srun-mpi may differ")
    out.add_argument("--force", action="store_true", help="overwrite an existing --out")
    out.add_argument("--dry-run", action="store_true",
                     help="print the launches, their count and an estimated wall time, then "
                          "stop (writes nothing, builds nothing)")
    out.add_argument("--progress-interval", default=30.0, metavar="S",
                     help="seconds between progress lines when stderr is not a terminal")
    p.set_defaults(run=run_sweep)


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """The description as written, options in 100 columns (the description's width)."""

    def __init__(self, prog):
        super().__init__(prog, width=100, max_help_position=28)


def collectives(family=None):
    """The collectives the sweep can measure: the benchmark's own (what it reports of itself),
    of those the MPI family (all families when None) has algorithms for."""
    families = [family] if family else algorithms.FAMILIES
    return [c for c in bench.capabilities().collectives
            if any(c in algorithms.registry(f) for f in families)]


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
    apart = args.collective in plan.PER_METHOD.get(args.mpi, ())
    why = plan.PER_METHOD_WHY.format(c=args.collective)
    args.mode_note = None
    if args.mode is None:
        args.mode = "per-method" if args.mpi == "intel" else plan.mode_of(args.collective,
                                                                          args.mpi)
        if apart:
            args.mode_note = f"note: {args.collective} is measured --mode per-method: {why}"
    if apart and args.mode == "paired":
        raise InputError(f"--collective {args.collective} --mode paired: {why}; measure it with "
                         "--mode per-method (its default: leave --mode out)")
    if args.mpi == "intel" and args.mode == "paired":
        raise InputError("--mpi intel --mode paired: Intel MPI reads I_MPI_ADJUST_* in MPI_Init "
                         "only (its MPI_T cvars take no effect at run time); use --mode "
                         "per-method")
    if args.launches is None:
        args.launches = 5 if args.mode == "paired" else 3
    args.launches = values.integer(args.launches, "--launches", *launch_stats.LAUNCHES)
    args.seed = values.integer(args.seed, "--seed", 0, 2**64 - 1)
    args.confidence = values.number(args.confidence, "--confidence", 0.0, 1.0)
    args.equivalence = values.number(args.equivalence, "--equivalence", 0.0, 100.0) / 100.0
    args.refine_budget = refine.parse_budget(args.refine)
    if args.mode == "per-method":
        for flag, given in (("--mpi mpich", args.mpi == "mpich"),
                            ("--refine", args.refine is not None), ("--raw", args.raw),
                            ("--strategy adaptive", args.strategy != racing.DEFAULT),
                            ("--nodes/--ppn", args.nodes or args.ppn),
                            ("--cluster", args.cluster is not None),
                            ("--probe", args.probe), ("--load-levels", args.load_levels)):
            if given and apart:
                raise InputError(f"{flag}: --collective {args.collective} is measured --mode "
                                 f"per-method ({why}), which takes no {flag}")
            if given:
                raise InputError(f"{flag} needs --mode paired (the per-method mode measures "
                                 "Open MPI and Intel MPI only, one method per launch)")
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
    if args.mpi_home:
        parts += ["--mpi-home", os.path.abspath(args.mpi_home)]
    if cluster is not None:
        parts += ["--cluster", cluster.state_dir]
    if cfg.mode == "paired":
        parts += ["--seed", str(cfg.seed), "--confidence", str(cfg.confidence),
                  "--equivalence", f"{100 * cfg.equivalence:g}"]
        if cfg.strategy != racing.DEFAULT:
            parts += ["--strategy", cfg.strategy]
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
    if args.mpi_home:
        parts += ["--mpi-home", args.mpi_home]
    if launcher_name == "srun":
        parts += ["--srun-mpi", cfg.launcher.mpi_plugin]
    if args.launcher_args:
        parts += ["--launcher-args", args.launcher_args]
    if args.bench:
        parts += ["--bench", os.path.abspath(args.bench)]
    if args.fault:
        parts += ["--fault", args.fault]
    if args.replay:
        parts += ["--replay", os.path.abspath(args.replay)]
    return shlex.join(parts)


def run_sweep(args):
    # Everything given is checked before anything is built, launched, read or written.
    for flag in ("out", "emit_sbatch", "bench", "hostfile", "mpirun", "mpicc", "mpi_home",
                 "map_by",
                 "collective", "algorithms", "segsizes", "comm_sizes", "msg_sizes", "fault",
                 "raw", "refine", "nodes", "ppn", "cluster", "probe", "load_levels", "replay"):
        values.one_line(getattr(args, flag), "--" + flag.replace("_", "-"))
    recording = _replayed(args)
    values.output_file(args.out, "--out")
    if args.raw is not None:
        values.output_file(args.raw, "--raw")
    if args.emit_sbatch is not None:
        values.output_file(args.emit_sbatch, "--emit-sbatch")
    install = mpi_home.resolve(args.mpi, args.mpi_home)
    collective = check_collective(args.collective, args.mpi)
    args.mpicc = args.mpicc or install.mpicc
    _check_numbers(args)
    methods = plan.plan_methods(collective, args.algorithms, args.segsizes,
                                baseline=not args.no_baseline, family=args.mpi,
                                mpich_version=(mpi_home.mpich_version(install)
                                               if args.mpi == "mpich" and not recording
                                               else None))
    groups = _shapes(args)
    comm_sizes = sorted({s.p for s in groups}) if groups else (
        sizes.parse_comm_sizes(args.comm_sizes) if args.comm_sizes
        else list(plan.DEFAULT_COMM_SIZES))
    msg_sizes = (sizes.parse_size_list(args.msg_sizes, "--msg-sizes", *bench.MSG_SIZE,
                                       name="message size (an int count in the benchmark)")
                 if args.msg_sizes else sizes.default_msg_sizes())
    if collective in bench.capabilities().sizeless:
        if args.msg_sizes and msg_sizes != [0]:
            raise InputError(f"--msg-sizes: {collective} has no message size; leave "
                             "--msg-sizes out (or give 0)")
        msg_sizes = [0]
    if args.resume and args.force:
        raise InputError("--resume and --force contradict each other")
    left_out = []
    if args.mode == "per-method" and not args.algorithms:
        # a refused call ends a per-method launch: by default such a method is left out (as
        # tune does), said; --algorithms naming it measures it anyway
        left_out = plan.refused(collective, methods, comm_sizes, msg_sizes, args.mpi)
        methods = [m for m in methods if m not in {x for x, _ in left_out}]
    plan.check_benchmark_can(args.mode, methods, msg_sizes, args.max_reps, args.time_cap)

    sbatch = args.emit_sbatch is not None
    cluster = _cluster(args)
    name = args.launcher or ("hostfile" if cluster is not None else "local")
    if args.srun_mpi is not None and not (name == "srun" or sbatch):
        raise InputError(f"--srun-mpi {args.srun_mpi} is for --launcher srun (or "
                         f"--emit-sbatch), not --launcher {name}")
    launcher = (replay.ReplayLauncher(recording, args.seed, collective, args.mpi, args.time_cap,
                                      args.min_reps, args.max_reps, args.warmup) if recording
                else launchers.make("srun" if sbatch else name, args.mpirun or install.mpirun,
                                    args.launcher_args, args.hostfile, args.map_by,
                                    for_script=sbatch, family=args.mpi, cluster=cluster,
                                    mpi_plugin=args.srun_mpi, env=install.env))
    if not sbatch:
        launcher.check()
    for shape in groups or ():
        launcher.check_shape(shape.nodes, shape.ppn)
    # --time-cap is Config.time_cap (Config.bench_options puts it first)
    bench_args = ["--rel-ci", str(args.rel_ci),
                  "--min-reps", str(args.min_reps), "--max-reps", str(args.max_reps),
                  "--warmup", str(args.warmup)]
    if args.fault:
        bench_args += ["--fault", args.fault]
    if args.probe:
        bench_args += ["--probe", args.probe]
    bench_args += _runtime(cluster, groups)
    # A batch script for a real cluster builds the benchmark where it runs; the emulated
    # cluster's nodes share this machine's files, so it is built now.
    bench_path = "collsel_bench" if recording else _locate_bench(
        args, install.env, build=not (args.dry_run or (sbatch and cluster is None)))
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
        time_cap=args.time_cap,
        mode=args.mode, family=args.mpi, mpi_home=install.home, seed=args.seed,
        refine=args.refine_budget,
        confidence=args.confidence, equivalence=args.equivalence, strategy=args.strategy,
        raw=args.raw,
        shapes=groups, links=cluster.describe() if cluster is not None else None,
        probe=args.probe, load_levels=args.load_levels,
        load=_load_generator(args, cluster, bench_path, check=not (args.dry_run or sbatch)),
        scheduler=(load.SchedulerView(cluster)
                   if cluster is not None and args.load_levels else None),
        warnings=[line for line in (_oversubscribed(launcher, groups or shapes.plain(comm_sizes)),
                                    _emulated_without_cluster(args, launcher),
                                    args.mode_note) if line]
        + [f"note: left out {why_out}: the per-method mode cannot mark it unusable per cell; "
           "name it in --algorithms to measure it anyway" for _, why_out in left_out])
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
    protocol = (replay.Replay if recording else paired.Paired if args.mode == "paired"
                else run.PerMethod)(cfg)
    if args.dry_run:
        lines = engine.dry_run(protocol)
        print("\n".join(cfg.warnings), file=sys.stderr, end="\n" if cfg.warnings else "",
              flush=True)
        for line in lines:
            print(line)
        return 0
    try:
        return engine.run(protocol, sys.stderr)
    except KeyboardInterrupt:
        # the sweep's explicit options (the table records them): a resume must match them
        raise KeyboardInterrupt(f"continue with: {cfg.options} --resume") from None


def _replayed(args):
    """The replay.Recording of --replay (None without it); the grid, the algorithms and the MPI
    not given default to the recording's. Refused with what a replay cannot answer."""
    if args.replay is None:
        return None
    for flag, given in (("--mode per-method", args.mode == "per-method"), ("--raw", args.raw),
                        ("--nodes/--ppn", args.nodes or args.ppn), ("--probe", args.probe),
                        ("--cluster", args.cluster is not None),
                        ("--load-levels", args.load_levels),
                        ("--emit-sbatch", args.emit_sbatch)):
        if given:
            raise InputError(f"--replay with {flag}: a replay answers paired launches of plain "
                             "P from the recorded table only")
    recording = replay.load(args.replay)
    if names.canonical(args.collective, collectives()) != recording.collective:
        raise InputError(f"--collective {args.collective}: --replay {args.replay} records "
                         f"{recording.collective}")
    args.mpi = recording.family
    args.comm_sizes = args.comm_sizes or ",".join(map(str, recording.comm_sizes))
    args.msg_sizes = args.msg_sizes or ",".join(map(str, recording.msg_sizes))
    forced = [x for x in recording.methods if x.algorithm != algorithms.BASELINE_ALGORITHM]
    args.algorithms = args.algorithms or ",".join(f"{x.algorithm}:{x.segsize}" for x in forced)
    if len(forced) == len(recording.methods):
        args.no_baseline = True         # the recording has no default to replay
    return recording


def check_collective(collective, family):
    """The --collective, if the benchmark runs it under `family`; one line otherwise."""
    if family not in algorithms.FAMILIES:
        raise InputError(f"--mpi {family}: collsel knows no {mpi_home.TITLE[family]} "
                         "algorithms yet (core.algorithms has no catalogue of them)")
    known = collectives(family)
    collective = names.canonical(collective, collectives())     # 'MPI_Allreduce' (core.names)
    if collective in known:
        return collective
    measures = f"the sweep's benchmark, collsel_bench, measures {', '.join(known)}"
    if collective in collectives():
        raise InputError(f"--collective {collective}: with --mpi {family} {measures} only "
                         f"(collsel knows no {family} {collective} algorithms)")
    if collective in algorithms.registry(family):
        raise InputError(f"--collective {collective}: {measures} only ({collective} tables can "
                         "be read by collsel ingest)")
    raise InputError(f"--collective: unknown collective '{collective}'"
                     f"{names.did_you_mean(collective, collectives())} ({measures})")


def _oversubscribed(launcher, groups):
    """One warning line when some launch puts more ranks on a machine than it has cores (the
    emulated cluster's nodes all share this one), or None."""
    over, cores = [], None
    for shape in groups:
        sharing = launcher.sharing(shape.p, shape.ppn or None)
        if sharing and sharing[0] > sharing[1]:
            where = f"{shape.nodes}x{shape.ppn}" if shape.explicit else ""
            per_node = launcher.name == "srun" and not launcher.shares_this_machine
            over.append(f"P={shape.p}" + (f" ({where})" if where else ""))
            cores = f"{sharing[1]} cores" + (" per node" if per_node else "")
    if not over:
        return None
    why = (" (the emulated nodes share this machine's cores)" if launcher.shares_this_machine
           else "")
    return (f"warning: {', '.join(dict.fromkeys(over))} on {cores}: oversubscribed{why}; "
            "times include time-sharing of the cores between ranks, not what dedicated cores "
            "would give")


def _emulated_without_cluster(args, launcher):
    """A note when srun runs on the emulated cluster (SLURM_CONF is its slurm.conf) without
    --cluster: the sweep works, but without the cluster's settings; None otherwise."""
    conf = os.environ.get("SLURM_CONF")
    if args.cluster is not None or launcher.name != "srun" or not conf:
        return None
    from collsel.sources import cluster
    try:
        emulated = cluster.load()
    except InputError:
        return None
    if os.path.realpath(emulated.slurm_conf) != os.path.realpath(conf):
        return None
    return (f"note: this allocation is on the emulated cluster ({emulated.state_dir}); "
            "--cluster would add its settings: ranks unbound and yielding the shared cores, "
            "one clock (--runtime global), the links in the table")


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
    runtime (latest end - earliest start; right when ranks share cores, see
    docs/formats/benchmark-output.md).
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
        # The path as the node uses it, and where its links lead (a venv's python under /tmp
        # links to /usr/bin, yet the node cannot reach the link itself).
        for full in dict.fromkeys((os.path.abspath(path), os.path.realpath(path))):
            if full == PRIVATE_ON_NODES or full.startswith(PRIVATE_ON_NODES + "/"):
                how = "--emit-sbatch" if whole_sweep else "--launcher srun"
                raise InputError(f"{how} on the emulated cluster: {what} ({full}) is under "
                                 f"{PRIVATE_ON_NODES}, which every node of the emulated "
                                 "cluster replaces by its own: use a directory outside /tmp")


def _locate_bench(args, env, build):
    """The benchmark binary, built with --mpicc (the --mpi installation's compiler wrapper
    unless given) in the installation's environment `env`."""
    return bench.locate(args.bench, args.mpicc, build=build, env=env)
