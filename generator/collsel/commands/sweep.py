"""`collsel sweep`: measure every forced MPI algorithm into a performance table. This module
holds the flags and prints; collsel.pipeline.sweep runs the sweep."""
import argparse
import sys

from collsel import pipeline
from collsel.pipeline.sweeping import PROBE_DEFAULT, check_collective, collectives
from collsel.sources.measure import launchers, mpi_home
from collsel.sources.sweep import load, racing
from collsel.commands import add_command, options

__all__ = ["check_collective", "collectives", "register", "request", "print_result",
           "run_sweep"]

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
--mode per-method: one launch per (P, method), Open MPI and Intel MPI (its presets forced
through I_MPI_ADJUST_<COLL> in each launch's environment).
--mode by-size (--mpi intel's default): one launch per (P, launch number) measures every preset,
each at its own size a few bytes above m (m + 0..K-1 B, reversed in even launches), forced by an
I_MPI_TUNING file kept in TABLE.forcing/; Intel's own selection (algorithm 0) gets a launch of
its own.

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
                    description=SWEEP_HELP, formatter_class=options.HelpFormatter)
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
    what.add_argument("--mode", choices=("paired", "per-method", "by-size"),
                      help="paired (default), per-method, or by-size (Intel MPI's default; see "
                           "above)")
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
                            "decided or BUDGET ('600s' or a launch count) is spent (in "
                            "seconds: a launch estimated not to fit what is left is cut to "
                            "the sizes that fit, or not started)")
    stats.add_argument("--strategy", choices=racing.STRATEGIES, default=racing.DEFAULT,
                       help="paired: what --refine launches: every method where a cell is "
                            "undecided (coarse-refine, the default), or only the methods "
                            "still in the race there (adaptive: sources/sweep/racing.py)")
    stats.add_argument("--confidence", default=0.95, metavar="P",
                       help="paired: p_best a decided cell's best reaches (default 0.95)")
    stats.add_argument("--equivalence", default=5.0, metavar="PCT",
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


def request(args) -> pipeline.SweepRequest:
    """The sweep of the parsed flags: every flag is a field of the request, as given."""
    return options.request_of(pipeline.SweepRequest, args)


def print_result(result: pipeline.SweepResult) -> int:
    """What `collsel sweep` prints of a sweep: a dry run's warnings on stderr and its plan on
    stdout, the batch script written; returns the exit status."""
    if result.sbatch is not None:
        print(f"wrote {result.sbatch}; submit it with: sbatch {result.sbatch}")
    if result.plan is not None:
        print("\n".join(result.warnings), file=sys.stderr, end="\n" if result.warnings else "",
              flush=True)
        for line in result.plan:
            print(line)
    return result.status


def run_sweep(args):
    return print_result(pipeline.sweep(request(args)))
