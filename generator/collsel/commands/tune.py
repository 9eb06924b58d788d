"""`collsel tune`: every collective of the benchmark on this machine or allocation, in one
directory, within a time budget: paired sweep (coarse grid, then --refine), build --recommend,
emit and report per collective, one Open MPI rules file. This module holds the flags and prints;
collsel.pipeline.run_tune plans and runs the tune (pipeline/tune: its request and plan, its
stages and directory), printing each step's result through the commands' own printers."""
import argparse
import sys

from collsel import pipeline
from collsel.commands import build, emit, evaluate, options, report, sweep
from collsel.pipeline.tune import curve, layout, plan as tune_plan, planning
from collsel.sources.measure import launchers, mpi_home
from collsel.sources.sweep import racing, replay
from collsel.commands import add_command

COARSE, SEED = tune_plan.COARSE_LAUNCHES, racing.SEED_LAUNCHES
STRATEGY = tune_plan.DEFAULT_STRATEGY
SHARE = f"{tune_plan.COARSE_SHARE:.0%}"
TUNE_HELP = f"""\
Tune the collectives of this machine (or cluster allocation) in one go, within --budget:

  1. a coarse paired sweep of every collective (all methods; {SEED} launch per P under the
     default --strategy {STRATEGY}, {COARSE} under coarse-refine), all on one grid: message
     sizes thinned first (2, 4, 8, ... times apart, {tune_plan.MIN_SIZES} at least), then P (2,
     4, ... times apart; the smallest, the largest and one interior P at least) until the
     sweep's own estimate of all of them fits {SHARE} of the budget, so each collective costs
     what its methods cost; barrier has no message size (m = 0); Open MPI's allgatherv is
     measured per method (MPI_T cannot force it per communicator; {COARSE} launches) and not
     refined; Intel MPI by size (every preset of a P in one launch, one launch per P unless
     --launches), not refined, its trees without defer;
  2. refinement (`collsel sweep --refine`): more launches where cells are still undecided
     (adaptive: of the methods still in the race there, racing), until they are decided or
     the collective's part of what the budget has left is spent (the budget less the wall
     time so far, shared by undecided cells x methods; half of it where densifying can add
     P; a launch estimated not to fit what is left is cut to the sizes that fit);
  3. densifying: what the refinement left goes to new P where the decisions change, in
     rounds: between each two measured neighbouring P whose fastest methods differ at some size,
     the P of the full list (--comm-sizes, the defaults, or the replayed table's) nearest their
     geometric midpoint, the gaps most at stake first (paired collectives on --comm-sizes only);
  4. per collective the recommended tree (`collsel build --recommend`), its blob (not Intel
     MPI's) and the report;
  5. one Open MPI rules file for every collective (MPICH: the selection JSON of those it maps;
     Intel MPI: its JSON tuning file, intel_tuning.json).

The budget is measuring time (the estimate's); building and the reports come after it (tens of
seconds per collective). Progress with an ETA goes to stderr, the summary table to stdout.
Everything is in --out DIR:
{layout.__doc__.split(chr(10) + chr(10), 1)[1].rstrip()}

Replay (--replay TABLE): the same plan and sweeps run against a recorded table instead of an
MPI (docs/guide/replay.md): each launch returns the recorded times (its recorded launches, or
resampled from its CI) and costs what measuring them took on the real machine (recorded time x
repetitions + {replay.START_S:g} s per launch) on a simulated clock; --budget 10% is a tenth of
the full table's cost. No report or deploy file; instead DIR/<collective>/{curve.CURVE},
the anytime curve: the cost spent against the penalty of the tree built from what was measured
by then, on the full table (its exact map; evaluate's leave-one-P-out and leave-one-m-out),
and curve.svg, that curve drawn.

A killed tune (even kill -9) continues with `collsel tune --resume --out DIR`: the plan is read
back from DIR/tune.json, the stages done are skipped, a sweep in flight resumes from its
journal; the result is the one an uninterrupted run gives. --dry-run prints the plan (grid and
estimated time per collective) and measures nothing.

A launch that fails (a node lost, a launch silent for --timeout) costs that launch, not the
tune: it is recorded in its table (a `# failed.K=` line, said on stderr), the tune goes on with
the others, builds from what was measured, ends the summary with what was lost and exits 1;
`collsel tune --resume --out DIR` measures the failed launches again once the cause is fixed.

Where to run: as `collsel sweep` (its --launcher, --hostfile, --srun-mpi, ... are passed
through). Inside an allocation: salloc -N 4 collsel tune --launcher srun --nodes 1,2,4 --ppn 1
--out DIR, or the same line in an sbatch script; a new job with `collsel tune --resume --out
DIR` continues one that ran out of time.

examples:
  collsel tune --out tune-here --dry-run
  collsel tune --out tune-here --budget 30m
  collsel tune --out tune-here --resume
  collsel tune --out t2 --collectives bcast,allreduce --budget 10m --comm-sizes 2,4,8
  collsel tune --out t3 --launcher hostfile --hostfile hosts --comm-sizes 4,8,16
  collsel tune --out r1 --replay bench-data/paired/bcast-openmpi.csv --budget 10%
"""

# The help of the sweep's options tune passes through as given (planning.PASSED): metavar, help.
PASSED_HELP = {
    "--comm-sizes": ("LIST", "P values the coarse grid thins (default 2,3,4,6,8,12,16)"),
    "--msg-sizes": ("LIST", "message sizes the coarse grid thins (default 1 B..4 MiB, powers "
                            "of two and midpoints)"),
    "--nodes": ("LIST", "with --ppn: node counts (replaces --comm-sizes)"),
    "--ppn": ("LIST", "with --nodes: ranks per node"),
    "--time-cap": ("S", "seconds of repetitions per point and launch (default 0.03)"),
    "--seed": ("N", "the seed of the launches' orders (default 1)"),
    "--confidence": ("P", "p_best a decided cell reaches (default 0.95)"),
    "--equivalence": ("PCT", "methods within +-PCT%% count as equal (default 5)"),
    "--srun-mpi": ("PLUGIN", "--launcher srun: srun --mpi=PLUGIN"),
    "--cluster": ("DIR", "run on the emulated cluster of `collsel cluster up` (state DIR)"),
    "--hostfile": ("FILE", "hostfile for --launcher hostfile"),
    "--map-by": ("X", "mpirun --map-by for --launcher hostfile (default core)"),
    "--mpirun": ("PROGRAM", "launcher program"),
    "--launcher-args": ("ARGS", "extra launcher arguments, one string"),
    "--bench": ("PROGRAM", "benchmark program (default: collsel_bench.c, built)"),
    "--mpicc": ("PROGRAM", "compiler wrapper of the benchmark"),
    "--mpi-home": ("DIR", "the --mpi installation's prefix (e.g. build/mpis/openmpi5)"),
    "--timeout": ("S", "kill a launch silent this many seconds (default 120)"),
}


def register(subparsers):
    p = add_command(subparsers, "tune",
                    usage="collsel tune --out DIR [--budget 30m] [options]",
                    description=TUNE_HELP, formatter_class=options.HelpFormatter)
    p.add_argument("--out", required=True, metavar="DIR", help="the output directory (above)")
    p.add_argument("--collectives", metavar="all|LIST",
                   help="all (default: every collective the benchmark measures under --mpi) "
                        "or a comma list")
    p.add_argument("--budget", metavar="DURATION",
                   help=f"measuring time: 90s, 30m, 2h, 1h30m, or a percentage (10%%) of the "
                        f"full sweep's estimate (--replay: of the full table's cost) (default "
                        f"{planning.DEFAULT_BUDGET}; --replay: {planning.REPLAY_BUDGET}%)")
    p.add_argument("--mpi", choices=mpi_home.MPI_NAMES, help="the MPI (default openmpi)")
    p.add_argument("--launches", metavar="N", help="launches of the coarse grid per P "
                   f"(default {SEED} under adaptive, {COARSE} under coarse-refine; Open MPI's "
                   f"allgatherv {COARSE}, Intel MPI {tune_plan.BY_SIZE_LAUNCHES}; refinement "
                   "adds more)")
    p.add_argument("--launcher", choices=launchers.LAUNCHERS,
                   help="local mpirun (default), mpirun --hostfile (default with --hostfile "
                        "or --cluster), or srun in an allocation")
    for flag in planning.PASSED:
        metavar, text = PASSED_HELP[flag]
        p.add_argument(flag, metavar=metavar, help=text)
    p.add_argument("--strategy", choices=racing.STRATEGIES,
                   help="how the budget is measured: coarse-refine (every method at every cell "
                        f"of the coarse grid, {COARSE} launches, then again where undecided) or "
                        f"adaptive ({SEED} launch of a denser grid, then only the methods "
                        "still in the race where cells are open: racing) "
                        f"(default {STRATEGY})")
    p.add_argument("--replay", metavar="TABLE",
                   help="measure nothing: replay TABLE, a recorded table (above)")
    p.add_argument("--score", metavar="FLAGS",
                   help="--replay: the `collsel build` flags of the trees the curve scores "
                        f"(default '{planning.REPLAY_SCORE}', the tune's own)")
    p.add_argument("--checkpoints", metavar="N",
                   help=f"--replay: points of the curve (default {planning.CHECKPOINTS})")
    p.add_argument("--progress-interval", metavar="S", help="seconds between the sweeps' "
                   "progress lines when stderr is not a terminal (default 30)")
    p.add_argument("--profile", metavar="FILE", help="tune for one application: only the "
                   "collectives, P and m of its `collsel profile` FILE, refinement by time share")
    p.add_argument("--resume", action="store_true",
                   help="continue the tune in --out (its options come from DIR/tune.json)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the plan: grid and estimated time per collective; measure "
                        "nothing, write nothing")
    p.set_defaults(run=run_tune)


def request(args) -> pipeline.TuneRequest:
    """The TuneRequest of tune's parsed flags."""
    return options.request_of(pipeline.TuneRequest, args)


def score_config(text):
    """The core.evaluate.build_config.Config of --score's `collsel build` flags (evaluate's
    --candidate)."""
    parser = argparse.ArgumentParser(add_help=False)
    options.add_table_options(parser)
    return evaluate.parse_candidate(text, parser.parse_args(["-"]))


# How the tune prints each step's result: as the commands print it.
PRINTERS = pipeline.Printers(sweep=sweep.print_result, built=build.print_built,
                             emitted=emit.print_emitted, report=report.print_result,
                             score_config=score_config)


def run_tune(args):
    result = pipeline.run_tune(request(args), PRINTERS)
    if result.lines is not None:
        print("\n".join(result.warnings), file=sys.stderr, end="\n" if result.warnings else "",
              flush=True)
        print("\n".join(result.lines))
    else:
        print(result.summary, end="", flush=True)
        for line in result.lost:        # also the summary's last lines: said where errors go
            print(f"collsel tune: {line}", file=sys.stderr)
    return result.status
