"""`collsel sweep`: measure every forced Open MPI algorithm into a performance table."""
import argparse
import os
import shlex
import sys

from collsel.core import algorithms, sizes
from collsel.core.files import write_file
from collsel.errors import InputError
from collsel.sources.measure import benchmark_program as bench, launchers
from collsel.sources.sweep import plan, run
from collsel.sources.sweep.sbatch import sbatch_script

SWEEP_HELP = """\
Measure every Open MPI coll/tuned algorithm (and segment size) of one collective for each
communicator size P and message size m, plus algorithm 0 (Open MPI's own decision) as the
baseline, and write the canonical performance table. Rows are appended as points finish, so
a killed sweep loses at most the point in flight; --resume continues it.

Defaults: all algorithms; segment sizes 0,1K,8K,32K,128K for the algorithms that segment;
P = 2,3,4,6,8,12,16; m = powers of two and the midpoints 3*2^k, 1 B .. 4 MiB.

examples:
  collsel sweep --collective bcast --out bcast.csv
  collsel sweep --collective reduce --comm-sizes 2-8 --algorithms binomial,pipeline:8K --out r.csv
  collsel sweep --collective bcast --out bcast.csv --resume
  collsel sweep --collective bcast --out bcast.csv --dry-run
  collsel sweep --collective bcast --out bcast.csv --emit-sbatch sweep.sbatch
"""


def register(subparsers):
    p = subparsers.add_parser("sweep", help="measure Open MPI algorithms into a table",
                              description=SWEEP_HELP,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--collective", required=True, help="bcast or reduce")
    p.add_argument("--out", required=True, help="table to write (CSV)")
    p.add_argument("--algorithms", help="comma list of ids or names, ALG:SEG pins a segment "
                   "size (default: all but 0)")
    p.add_argument("--segsizes", help="segment sizes for segmenting algorithms "
                   "(default 0,1K,8K,32K,128K)")
    p.add_argument("--comm-sizes", help="P values: list and ranges, e.g. 2-16 or 2,4,8 "
                   "(default 2,3,4,6,8,12,16)")
    p.add_argument("--msg-sizes", help="message sizes in bytes, K/M suffixes allowed "
                   "(default 1 B..4 MiB, powers of two and midpoints)")
    p.add_argument("--no-baseline", action="store_true",
                   help="do not measure algorithm 0 (Open MPI's own decision)")
    p.add_argument("--resume", action="store_true", help="continue the sweep in --out")
    p.add_argument("--force", action="store_true", help="overwrite an existing --out")
    p.add_argument("--dry-run", action="store_true", help="print the launch commands only")
    p.add_argument("--launcher", default="local", choices=launchers.LAUNCHERS,
                   help="local mpirun (default), mpirun --hostfile, or srun")
    p.add_argument("--hostfile", help="hostfile for --launcher hostfile")
    p.add_argument("--map-by", default="core", help="mpirun --map-by for --launcher hostfile")
    p.add_argument("--mpirun", help="launcher program (default mpirun, or srun)")
    p.add_argument("--launcher-args", default="", help="extra launcher arguments (one string)")
    p.add_argument("--bench", help="benchmark binary (default: build the shipped collsel_bench.c with mpicc)")
    p.add_argument("--mpicc", default="mpicc", help="MPI compiler wrapper for the benchmark")
    p.add_argument("--launches", type=int, default=3,
                   help="separate launches per point (default 3): launches differ by more than "
                        "one launch's own CI, so time_us is the mean of the launch medians and "
                        "its CI is taken across launches; they run in rounds over all methods "
                        "of a P, spreading each point over the sweep's time")
    p.add_argument("--time-cap", type=float, default=0.03,
                   help="seconds of timed repetitions per point and launch at most "
                        "(default 0.03)")
    p.add_argument("--rel-ci", type=float, default=0.025,
                   help="target 95%% CI half-width relative to the mean, for each launch's "
                        "stopping rule and for ci_met across launches (default 0.025)")
    p.add_argument("--min-reps", type=int, default=5, help="repetitions before the CI "
                   "test (default 5; fewer only when one call exceeds the time cap)")
    p.add_argument("--max-reps", type=int, default=300,
                   help="repetition cap per launch (default 300; the CI is across launches, so "
                        "one launch needs only a stable median)")
    p.add_argument("--warmup", type=int, default=2, help="warm-up calls per point (default 2)")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="kill a launch that prints nothing for this many seconds (default 120)")
    p.add_argument("--fault", help=argparse.SUPPRESS)   # test hook, passed to the benchmark
    p.add_argument("--progress-interval", type=float, default=30.0,
                   help="seconds between progress lines when stderr is not a terminal")
    p.add_argument("--emit-sbatch", metavar="FILE",
                   help="write a Slurm batch script running this sweep with srun, then stop")
    p.add_argument("--sbatch-time", default="04:00:00", help="--time of the batch script")
    p.add_argument("--sbatch-nodes", help="--nodes of the batch script")
    p.add_argument("--sbatch-args", default="", help="more #SBATCH options, one string")
    p.set_defaults(run=run_sweep)


def _check_numbers(args):
    if not args.time_cap > 0:
        raise InputError("--time-cap must be positive")
    if not 1 <= args.launches <= 100:
        raise InputError("--launches must be in 1..100")
    if not 0 < args.rel_ci <= 10:
        raise InputError("--rel-ci must be in (0, 10]")
    if args.min_reps < 2 or args.max_reps < args.min_reps:
        raise InputError("need 2 <= --min-reps <= --max-reps")
    if args.warmup < 0:
        raise InputError("--warmup must be >= 0")
    if not args.timeout > 0:
        raise InputError("--timeout must be positive")


def _canonical(args, cfg, launcher_name):
    """The sweep as explicit options, so a batch script or a log reproduces it exactly."""
    parts = ["collsel", "sweep", "--collective", cfg.collective, "--out", os.path.abspath(cfg.out),
             "--comm-sizes", ",".join(map(str, cfg.comm_sizes)),
             "--msg-sizes", ",".join(map(str, cfg.msg_sizes)),
             "--algorithms", ",".join(f"{m.algorithm}:{m.segsize}" for m in cfg.methods
                                      if m.algorithm != algorithms.BASELINE_ALGORITHM),
             "--launches", str(args.launches),
             "--time-cap", str(args.time_cap), "--rel-ci", str(args.rel_ci),
             "--min-reps", str(args.min_reps), "--max-reps", str(args.max_reps),
             "--warmup", str(args.warmup), "--timeout", str(args.timeout),
             "--launcher", launcher_name]
    if args.no_baseline:
        parts.append("--no-baseline")
    if args.launcher_args:
        parts += ["--launcher-args", args.launcher_args]
    if args.bench:
        parts += ["--bench", os.path.abspath(args.bench)]
    return shlex.join(parts)


def run_sweep(args):
    collective = algorithms.check_collective(args.collective)
    _check_numbers(args)
    methods = plan.plan_methods(collective, args.algorithms, args.segsizes,
                                baseline=not args.no_baseline)
    comm_sizes = (sizes.parse_comm_sizes(args.comm_sizes) if args.comm_sizes
                  else list(plan.DEFAULT_COMM_SIZES))
    msg_sizes = (sizes.parse_size_list(args.msg_sizes, "--msg-sizes") if args.msg_sizes
                 else sizes.default_msg_sizes())
    if max(msg_sizes) > 2**31 - 1:
        raise InputError("--msg-sizes: the benchmark passes m as an int count; at most 2^31-1")
    if args.resume and args.force:
        raise InputError("--resume and --force contradict each other")

    sbatch = args.emit_sbatch is not None
    launcher = launchers.make("srun" if sbatch else args.launcher, args.mpirun,
                              args.launcher_args, args.hostfile, args.map_by, for_script=sbatch)
    if not sbatch:
        launcher.check()
    bench_args = ["--time-cap", str(args.time_cap), "--rel-ci", str(args.rel_ci),
                  "--min-reps", str(args.min_reps), "--max-reps", str(args.max_reps),
                  "--warmup", str(args.warmup)]
    if args.fault:
        bench_args += ["--fault", args.fault]
    if args.dry_run or sbatch:
        bench_path = bench.locate(args.bench, args.mpicc, build=False)
    else:
        bench_path = bench.locate(args.bench, args.mpicc)
    argv0 = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "collsel"
    cfg = plan.Config(
        collective=collective, out=args.out, comm_sizes=comm_sizes, msg_sizes=msg_sizes,
        methods=methods, launcher=launcher, bench_path=bench_path, bench_args=bench_args,
        silence_timeout=args.timeout, resume=args.resume, force=args.force,
        dry_run=args.dry_run,
        command=shlex.join(["collsel" if argv0 in ("collsel", "__main__.py") else argv0]
                           + sys.argv[1:]),
        progress_interval=args.progress_interval, launches=args.launches, rel_ci=args.rel_ci)
    cfg.options = _canonical(args, cfg, launcher.name)

    if sbatch:
        inner = _canonical(args, cfg, "srun") + " --resume"
        text = sbatch_script(cfg, inner, max(comm_sizes), args.sbatch_time,
                             args.sbatch_nodes, args.sbatch_args)
        write_file(args.emit_sbatch, text)
        os.chmod(args.emit_sbatch, 0o755)
        print(f"wrote {args.emit_sbatch}; submit it with: sbatch {args.emit_sbatch}")
        return 0
    if args.dry_run:
        for line in run.dry_run(cfg):
            print(line)
        return 0
    return run.run(cfg, sys.stderr)
