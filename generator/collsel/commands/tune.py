"""`collsel tune`: every collective of the benchmark on this machine or allocation, in one
directory, within a time budget: paired sweep (coarse grid, then --refine), build --recommend,
emit and report per collective, one Open MPI rules file. It sweeps, builds, emits and reports
through collsel.pipeline, as the commands do, and prints what they print; the plan, the
directory and the refinement's budget are pipeline/tune's."""
import argparse
import contextlib
import io
import os
import shlex
import sys
import tempfile
import time

from collsel import pipeline
from collsel.commands import build, emit, report, sweep, tune_replay, tune_summary
from collsel.core.io import sizes, values
from collsel.core.mpi import algorithms, method_text
from collsel.core.trees import extrapolation
from collsel.core.io.files import write_file
from collsel.errors import CollselError, InputError
from collsel.sinks.emit import mpich_json
from collsel.sinks.emit.ompi_rules_reader import COLLECTIVE_IDS
from collsel.sources.measure import benchmark_program as bench, launchers, mpi_home
from collsel.sources.sweep import (estimate, launch_stats, plan as sweep_plan, racing, replay,
                                   shapes)
from collsel.pipeline.tune import layout, plan as tune_plan, profile_region, refinement
from collsel.commands import add_command

COARSE, SHARE = tune_plan.COARSE_LAUNCHES, f"{tune_plan.COARSE_SHARE:.0%}"
TUNE_HELP = f"""\
Tune the collectives of this machine (or cluster allocation) in one go, within --budget:

  1. a coarse paired sweep of every collective (all methods, {COARSE} launches), all on one grid:
     message sizes thinned first (2, 4, 8, ... times apart, {tune_plan.MIN_SIZES} at least), then
     P (2, 4, ... times apart; the smallest, the largest and one interior P at least) until
     the sweep's own estimate of all of them fits {SHARE} of the budget, so each collective
     costs what its methods cost; barrier has no message size (m = 0); Open MPI's allgatherv
     is measured per method (MPI_T cannot force it per communicator) and not refined;
  2. refinement (`collsel sweep --refine`): more launches where cells are still undecided,
     until they are decided or the collective's part of what the budget has left is spent
     (the budget less the wall time so far, shared by undecided cells x methods);
  3. per collective the recommended tree (`collsel build --recommend`), its blob and the report;
  4. one Open MPI rules file for every collective (MPICH: the selection JSON of those it maps).

The budget is measuring time (the estimate's); building and the reports come after it (tens of
seconds per collective). Progress with an ETA goes to stderr, the summary table to stdout.
Everything is in --out DIR:
{layout.__doc__.split(chr(10) + chr(10), 1)[1].rstrip()}

Replay (--replay TABLE): the same plan and sweeps run against a recorded table instead of an
MPI (docs/guide/replay.md): each launch returns the recorded times (its recorded launches, or
resampled from its CI) and costs what measuring them took on the real machine (recorded time x
repetitions + {replay.START_S:g} s per launch) on a simulated clock; --budget 10% is a tenth of
the full table's cost. No report or deploy file; instead DIR/<collective>/{tune_replay.CURVE},
the anytime curve: the cost spent against the penalty of the tree built from what was measured
by then, on the full table (its exact map; evaluate's leave-one-P-out and leave-one-m-out).

A killed tune (even kill -9) continues with `collsel tune --resume --out DIR`: the plan is read
back from DIR/tune.json, the stages done are skipped, a sweep in flight resumes from its
journal; the result is the one an uninterrupted run gives. --dry-run prints the plan (grid and
estimated time per collective) and measures nothing.

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

DEFAULT_BUDGET = "30m"
REPLAY_BUDGET = "10%"
REPLAY_SCORE = "--recommend"
# the full sweep a live --budget N% is a share of: the sweep's paired default
FULL_LAUNCHES = 5
POST_S = 20     # a rough guess of build + emit + report per collective, for the ETA only

# The sweep's options tune passes through as given: (flag, metavar, help).
PASSED = (
    ("--comm-sizes", "LIST", "P values the coarse grid thins (default 2,3,4,6,8,12,16)"),
    ("--msg-sizes", "LIST", "message sizes the coarse grid thins (default 1 B..4 MiB, powers "
                            "of two and midpoints)"),
    ("--nodes", "LIST", "with --ppn: node counts (replaces --comm-sizes)"),
    ("--ppn", "LIST", "with --nodes: ranks per node"),
    ("--time-cap", "S", "seconds of repetitions per point and launch (default 0.03)"),
    ("--seed", "N", "the seed of the launches' orders (default 1)"),
    ("--confidence", "P", "p_best a decided cell reaches (default 0.95)"),
    ("--equivalence", "PCT", "methods within +-PCT%% count as equal (default 5)"),
    ("--srun-mpi", "PLUGIN", "--launcher srun: srun --mpi=PLUGIN"),
    ("--cluster", "DIR", "run on the emulated cluster of `collsel cluster up` (state DIR)"),
    ("--hostfile", "FILE", "hostfile for --launcher hostfile"),
    ("--map-by", "X", "mpirun --map-by for --launcher hostfile (default core)"),
    ("--mpirun", "PROGRAM", "launcher program"),
    ("--launcher-args", "ARGS", "extra launcher arguments, one string"),
    ("--bench", "PROGRAM", "benchmark program (default: collsel_bench.c, built)"),
    ("--mpicc", "PROGRAM", "compiler wrapper of the benchmark"),
    ("--mpi-home", "DIR", "the --mpi installation's prefix (e.g. build/mpis/openmpi5)"),
    ("--timeout", "S", "kill a launch silent this many seconds (default 120)"),
)

FILES = ("--hostfile", "--bench", "--cluster", "--mpi-home")
GRIDDED = ("--comm-sizes", "--msg-sizes")       # given per collective, thinned (the grids)


def register(subparsers):
    p = add_command(subparsers, "tune",
                    usage="collsel tune --out DIR [--budget 30m] [options]",
                    description=TUNE_HELP, formatter_class=_HelpFormatter)
    p.add_argument("--out", required=True, metavar="DIR", help="the output directory (above)")
    p.add_argument("--collectives", metavar="all|LIST",
                   help="all (default: every collective the benchmark measures under --mpi) "
                        "or a comma list")
    p.add_argument("--budget", metavar="DURATION",
                   help=f"measuring time: 90s, 30m, 2h, 1h30m, or a percentage (10%%) of the "
                        f"full sweep's estimate (--replay: of the full table's cost) (default "
                        f"{DEFAULT_BUDGET}; --replay: {REPLAY_BUDGET}%)")
    p.add_argument("--mpi", choices=mpi_home.MPI_NAMES, help="the MPI (default openmpi)")
    p.add_argument("--launches", metavar="N", help="launches of the coarse grid per P "
                   f"(default {tune_plan.COARSE_LAUNCHES}; refinement adds more)")
    p.add_argument("--launcher", choices=launchers.LAUNCHERS,
                   help="local mpirun (default), mpirun --hostfile (default with --hostfile "
                        "or --cluster), or srun in an allocation")
    for flag, metavar, text in PASSED:
        p.add_argument(flag, metavar=metavar, help=text)
    p.add_argument("--strategy", choices=racing.STRATEGIES,
                   help="how the budget is measured: coarse-refine (every method at every cell "
                        f"of the coarse grid, {COARSE} launches, then again where undecided) or "
                        f"adaptive ({racing.SEED_LAUNCHES} launch of a denser grid, then only "
                        "the methods still in the race where cells are open: racing) "
                        f"(default {racing.DEFAULT})")
    p.add_argument("--replay", metavar="TABLE",
                   help="measure nothing: replay TABLE, a recorded table (above)")
    p.add_argument("--score", metavar="FLAGS",
                   help="--replay: the `collsel build` flags of the trees the curve scores "
                        f"(default '{REPLAY_SCORE}', the tune's own)")
    p.add_argument("--checkpoints", metavar="N",
                   help=f"--replay: points of the curve (default {tune_replay.CHECKPOINTS})")
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


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog):
        super().__init__(prog, width=100, max_help_position=28)


class _Inner(argparse.ArgumentParser):
    """The sweep's parser inside tune: a bad value is one line, like every bad input."""

    def error(self, message):
        raise InputError(f"{self.prog}: {message}")


def run_sweep(request, stdout=None):
    """The sweep `request` (a pipeline.SweepRequest) in this process, printed as `collsel
    sweep` prints it (to `stdout` when given); returns its exit status."""
    with contextlib.redirect_stdout(stdout or sys.stdout):
        return sweep.print_result(pipeline.sweep(request))


def run_tune(args):
    if args.resume:
        return _resume(args)
    layout.check_new(args.out)
    plan = _plan(args)
    warnings = _preflight(plan)
    if args.dry_run:
        # the sweeps' own warnings (oversubscription: commands/sweep's one check), as
        # `collsel sweep --dry-run` prints them, each once
        print("\n".join(warnings), file=sys.stderr, end="\n" if warnings else "", flush=True)
        print("\n".join(_plan_lines(plan)))
        return 0
    layout.create(args.out, plan)
    for collective, why in plan.left_out:
        print(f"collsel tune: left out: {why}", file=sys.stderr)
    return _Stages(args.out, plan).run()


def _resume(args):
    given = [flag for flag in ("collectives", "budget", "mpi", "launches", "launcher",
                               "strategy", "replay", "profile",
                               "score", "checkpoints",
                               *(f[2:].replace("-", "_") for f, _, _ in PASSED),
                               "progress_interval")
             if getattr(args, flag) is not None]
    if given:
        raise InputError(f"--resume takes the options recorded in {args.out}/{layout.PLAN}: "
                         f"drop --{given[0].replace('_', '-')}")
    plan = layout.load(args.out)
    if args.dry_run:
        print("\n".join(_plan_lines(plan, layout.done(args.out))))
        return 0
    return _Stages(args.out, plan).run()


def _plan(args):
    """The whole plan, checked: collectives, budget, each collective's grid and budgets, and
    the sweep options every sweep of the tune gets."""
    recording = replay.load(args.replay) if args.replay else None
    family = recording.family if recording else args.mpi or "openmpi"
    if recording and args.mpi and args.mpi != family:
        raise InputError(f"--mpi {args.mpi}: --replay {args.replay} records {family}")
    if family == "intel":
        raise InputError("collsel tune --mpi intel: not yet (an Intel tree has no blob family "
                         "and --target intel-env carries trees of one axis only); measure with "
                         "collsel sweep --mpi intel --mpi-home DIR, then build and emit "
                         "--target intel-env")
    launcher_name = args.launcher or ("hostfile" if args.cluster is not None or args.hostfile
                                      else "local")
    placed = args.nodes is not None or args.ppn is not None or args.cluster is not None
    if recording:
        _check_replayed(args, recording)
        # the curve's build flags, refused now rather than after the sweeps
        tune_replay.score_config(REPLAY_SCORE if args.score is None else args.score)
        launcher_name, collectives, left_out = "replay", [recording.collective], []
    else:
        collectives, left_out = _collectives(args.collectives, family, placed)
    region = profile_region.read(args.profile, family, args) if args.profile else None
    if region:
        collectives, left_out = profile_region.restrict(region, collectives)
    budget_text = args.budget or (REPLAY_BUDGET if recording else DEFAULT_BUDGET)
    if args.nodes is not None or args.ppn is not None:
        if args.nodes is None or args.ppn is None:
            raise InputError("--nodes and --ppn go together (nodes x ppn = P)")
        comm_sizes, count = (), len(shapes.explicit(args.nodes, args.ppn))
    else:
        comm_sizes = (sizes.parse_comm_sizes(args.comm_sizes) if args.comm_sizes
                      else recording.comm_sizes if recording else sweep_plan.DEFAULT_COMM_SIZES)
        comm_sizes, count = sorted(comm_sizes), len(comm_sizes)
    msg_sizes = (sizes.parse_size_list(args.msg_sizes, "--msg-sizes", *bench.MSG_SIZE)
                 if args.msg_sizes else recording.msg_sizes if recording
                 else sizes.default_msg_sizes())
    if region:          # the profile's own P and m (it refuses --comm-sizes, --msg-sizes)
        comm_sizes, msg_sizes = profile_region.all_axes(region, collectives)
        count = len(comm_sizes)
    strategy = args.strategy or racing.DEFAULT
    # adaptive races from one launch; coarse-refine's tie test needs 3 (pipeline/tune/plan.py)
    fewest = racing.SEED_LAUNCHES if strategy == "adaptive" else tune_plan.COARSE_LAUNCHES
    launches = (fewest if args.launches is None else values.integer(
        args.launches, "--launches", fewest, launch_stats.LAUNCHES[1]))
    time_cap = values.number(args.time_cap or 0.03, "--time-cap", *bench.TIME_CAP_S)
    methods, chosen = {}, {}
    # the sweeps offer the running MPICH's names (5.0 has more than 4.0): plan with the same
    version = (mpi_home.mpich_version(mpi_home.resolve(family, args.mpi_home))
               if family == "mpich" and not recording else None)
    for c in collectives:
        if recording:       # the sweep replays the recorded methods (pipeline/sweeping._replayed)
            methods[c] = len(recording.methods)
            continue
        every = sweep_plan.plan_methods(c, baseline=True, family=family, mpich_version=version)
        refused = (tune_plan.refused(c, every, comm_sizes, msg_sizes, family)
                   if tune_plan.mode_of(c, family) == "per-method" else [])
        for _, why in refused:
            left_out.append([c, f"{c}'s method {why}: the per-method mode cannot mark it "
                                "unusable per cell"])
        kept = [x for x in every if x not in {x for x, _ in refused}]
        methods[c] = len(kept)
        if refused:
            chosen[c] = ",".join(f"{x.algorithm}:{x.segsize}" for x in kept
                                 if x.algorithm != algorithms.BASELINE_ALGORITHM)
    # the estimate's time of a point: the cap live, the recorded table's own cost replayed
    point_s = (recording.mean_point_seconds(time_cap, *REPS_WARMUP) if recording
               else time_cap)
    budget_s = _budget_seconds(budget_text, recording, collectives, methods, comm_sizes, count,
                               msg_sizes, launcher_name, time_cap, family)
    grids = (profile_region.grids(region, collectives, methods, budget_s, launches, launcher_name,
                                  point_s, budget_text, family, chosen) if region else
             tune_plan.plan(collectives, methods, comm_sizes, count, sorted(msg_sizes), budget_s,
                            launches, launcher_name, point_s, budget_text, family, chosen))
    options = ([f"--mpi={family}", f"--replay={os.path.abspath(args.replay)}"] if recording
               else [f"--mpi={family}", f"--launcher={launcher_name}"])
    for flag, _, _ in PASSED:
        value = getattr(args, flag[2:].replace("-", "_"))
        if value is not None and flag not in GRIDDED:
            # files as absolute paths: a resumed tune may start in another directory
            options.append(f"{flag}={os.path.abspath(value) if flag in FILES else value}")
    if args.progress_interval is not None:
        options.append(f"--progress-interval={args.progress_interval}")
    replayed = tune_plan.Replayed(
        os.path.abspath(args.replay), round(recording.full_cost(time_cap, *REPS_WARMUP), 3),
        REPLAY_SCORE if args.score is None else args.score,
        (tune_replay.CHECKPOINTS if args.checkpoints is None else
         values.integer(args.checkpoints, "--checkpoints", 1, 1000))) if recording else None
    return tune_plan.TunePlan(
        layout.machine(launcher_name, replayed and replayed.replay),
        shlex.join(["collsel", *sys.argv[1:]]), family, launcher_name, budget_text, budget_s,
        tuple(collectives), strategy, tuple(map(tuple, left_out)), tuple(options), tuple(grids),
        region, replayed)


# the sweep's defaults of --min-reps, --max-reps and --warmup (the replay's repetitions rule)
REPS_WARMUP = (5, 300, 2)


def _check_replayed(args, recording):
    """What a replayed tune cannot take, refused in one line."""
    for flag in ("nodes", "ppn", "cluster", "hostfile", "launcher", "srun_mpi", "mpirun",
                 "launcher_args", "bench", "mpicc", "mpi_home"):
        if getattr(args, flag) is not None:
            raise InputError(f"--replay with --{flag.replace('_', '-')}: a replay launches "
                             "nothing (it answers from the recorded table)")
    if args.collectives not in (None, "all", recording.collective):
        raise InputError(f"--collectives {args.collectives}: --replay {args.replay} records "
                         f"{recording.collective} only")


def _budget_seconds(text, recording, collectives, methods, comm_sizes, count, msg_sizes,
                    launcher_name, time_cap, family):
    """--budget in seconds: a duration, or N% of the full table's cost (replay) or of the
    sweep's estimate of the full planned grid at FULL_LAUNCHES launches (live)."""
    text = str(text).strip()
    if not text.endswith("%"):
        return tune_plan.parse_budget(text)
    share = values.number(text[:-1], "--budget (percent)", 0.0, 100.0, low_open=True) / 100
    if recording:
        return share * recording.full_cost(time_cap, *REPS_WARMUP)
    full = sum(tune_plan.coarse_estimate(
        count, (0,) if c in bench.capabilities().sizeless else msg_sizes, methods[c],
        FULL_LAUNCHES, launcher_name, time_cap, tune_plan.mode_of(c, family))
        for c in collectives)
    return share * full


def _collectives(text, family, placed):
    """(the collectives to tune, [[collective, why it is left out]]): with --nodes/--ppn or
    --cluster (`placed`) those only the per-method mode measures are left out of 'all', and
    refused when listed."""
    apart = [] if not placed else tune_plan.PER_METHOD.get(family, ())
    if text is None or text.strip() == "all":
        every = sweep.collectives(family)
        return ([c for c in every if c not in apart],
                [[c, f"{c}: its {tune_plan.MEASURED_APART}"] for c in every if c in apart])
    chosen = [c.strip() for c in text.split(",") if c.strip()]
    if not chosen:
        raise InputError(f"--collectives {text!r}: empty; 'all' or a comma list")
    for i, c in enumerate(chosen):
        try:
            chosen[i] = c = sweep.check_collective(c, family)
        except InputError as e:
            raise InputError(str(e).replace("--collective", "--collectives", 1)) from None
        if c in apart:
            raise InputError(f"--collectives {c}: its {tune_plan.MEASURED_APART}; tune it "
                             "in a separate run with --comm-sizes")
    return list(dict.fromkeys(chosen)), []


def _sweep_request(out, plan, grid, refine_s=None, dry_run=False):
    """The sweep of `grid` into its table in tune DIR `out` (its --refine within `refine_s`
    seconds when given), resumed when the table exists. The plan records the sweep's options
    as flags, so the sweep's own parser reads them, and the grid's after them."""
    table = layout.table(out, grid.collective)
    strategy = plan.strategy or racing.DEFAULT     # a tune.json of an older collsel: none
    words = ["sweep", f"--collective={grid.collective}", f"--out={table}",
             *plan.sweep_options, f"--launches={grid.launches}", f"--mode={grid.mode}"]
    if grid.comm_sizes:
        words.append(f"--comm-sizes={','.join(map(str, grid.comm_sizes))}")
    if grid.algorithms:
        words.append(f"--algorithms={grid.algorithms}")
    if grid.mode == "paired" and strategy != racing.DEFAULT:
        words.append(f"--strategy={strategy}")
    if grid.msg_sizes and tuple(grid.msg_sizes) != (0,):
        words.append(f"--msg-sizes={','.join(map(str, grid.msg_sizes))}")
    if refine_s is not None:
        words.append(f"--refine={refine_s:.0f}s")
    words += (["--resume"] if os.path.exists(table) else []) + (["--dry-run"] if dry_run else [])
    parser = _Inner(prog="collsel")
    sweep.register(parser.add_subparsers())
    return sweep.request(parser.parse_args(words))


def _preflight(plan):
    """Every sweep of the plan through the sweep's own checks (its --dry-run, its plan thrown
    away), before anything is written: a bad launcher option is refused now, not after an
    hour of measuring. Returns the warnings those dry runs gave, each once, and one when the
    grid has a single P (every tree would be extrapolated to every other P). A dry run that
    fails has what it said on stderr shown, and the tune stops there, naming the collective."""
    warnings = {}
    with tempfile.TemporaryDirectory(prefix="collsel-tune-") as scratch:
        for grid in plan.grids:
            os.makedirs(os.path.join(scratch, grid.collective))
            said = io.StringIO()
            try:
                with open(os.devnull, "w") as devnull, contextlib.redirect_stderr(said):
                    status = run_sweep(_sweep_request(scratch, plan, grid, dry_run=True),
                                       devnull)
            except CollselError:
                _echo(said)
                raise
            lines = said.getvalue().splitlines()
            if status:
                _echo(said)
                failed = [line for line in lines if not line.startswith(("warning: ", "note: "))]
                raise CollselError(f"the dry run of {grid.collective}'s sweep failed (exit "
                                   f"status {status})" + (f": {failed[0]}" if failed else ""))
            warnings.update(dict.fromkeys(line for line in lines
                                          if line.startswith("warning: ")))
    ps = {p for g in plan.grids for p in g.comm_sizes}
    if len(ps) == 1:
        warnings[f"warning: {extrapolation.tree_note(sorted(ps))}"] = None
    return list(warnings)


def _echo(said):
    """What a sweep said on stderr (a StringIO), on stderr."""
    print(said.getvalue(), file=sys.stderr, end="", flush=True)


def _plan_lines(plan, done=frozenset()):
    """The plan as `--dry-run` prints it: what each sweep runs, as `_sweep_request` gives it."""
    grids = plan.grids
    coarse = sum(g.coarse_s for g in grids)
    lines = [f"collsel tune: {method_text.count_text(len(grids), 'collective')} "
             f"({', '.join(plan.collectives)}), "
             f"budget {plan.budget} (coarse grids about {estimate.duration(coarse)}, "
             f"refinement the rest), {plan.mpi}, launcher {plan.launcher}, on "
             f"{plan.machine}",
             f"sweep options: {shlex.join(plan.sweep_options)}",
             f"{'collective':<22} {'mode':<10} {'methods':>7} {'P':>3} {'sizes':>5} "
             f"{'launches':>8} {'coarse (est.)':>13} {'refine (plan)':>13}  done"]
    for g in grids:
        stages = [s.split(":")[1] for s in sorted(done) if s.startswith(g.collective + ":")]
        refine_text = estimate.duration(g.refine_s) if g.mode == "paired" else "-"
        lines.append(f"{g.collective:<22} {g.mode:<10} {g.methods:>7} {g.shapes:>3} "
                     f"{len(g.msg_sizes):>5} {g.launches:>8} {estimate.duration(g.coarse_s):>13} "
                     f"{refine_text:>13}  {','.join(stages) or '-'}")
    grid_texts = {(g.comm_sizes, g.msg_sizes) for g in grids}
    for comm_sizes, msg_sizes in sorted(grid_texts, key=lambda x: -len(x[1])):
        names = [g.collective for g in grids if (g.comm_sizes, g.msg_sizes) == (comm_sizes,
                                                                                 msg_sizes)]
        where = f"P = {','.join(map(str, comm_sizes))}; " if comm_sizes else ""
        lines.append(f"{', '.join(names)}: {where}m = {','.join(map(str, msg_sizes))}")
    for collective, why in plan.left_out:
        lines.append(f"left out: {why}")
    lines += profile_region.plan_lines(plan)
    lines.append(f"estimated: coarse sweeps {estimate.duration(coarse)} + refinement at most "
                 f"{estimate.duration(plan.budget_s - coarse)} (shared at run time by "
                 f"undecided cells x methods), then build, emit and report (about "
                 f"{estimate.duration(POST_S * len(grids))})")
    return lines


class _Stages:
    """The tune's stages in order; each is skipped when progress.json records it done."""

    def __init__(self, out, plan):
        self.out, self.plan, self.grids = out, plan, plan.grids
        self.done = layout.done(out)
        self.started = time.monotonic()

    def stages(self):
        """(name, estimated seconds, function) of every stage, in order."""
        for g in self.grids:
            yield f"{g.collective}:coarse", g.coarse_s, lambda g=g: self.sweep(g)
        for i, g in enumerate(self.grids):
            yield f"{g.collective}:refine", g.refine_s, lambda i=i: self.refine(i)
        for g in self.grids:
            yield f"{g.collective}:tree", POST_S / 2, lambda g=g: self.tree(g.collective)
        if self.plan.replayed:
            # a replay's result is its curve: no deploy file, no report (nothing ran here)
            for g in self.grids:
                yield f"{g.collective}:curve", POST_S, lambda g=g: self.curve(g.collective)
            return
        # the deploy files before the reports: each report's deploy box points at them
        yield "deploy", 1, self.deploy
        for g in self.grids:
            yield f"{g.collective}:report", POST_S / 2, lambda g=g: self.report(g.collective)

    def run(self):
        try:
            return self._run()
        except KeyboardInterrupt:
            # the tune's own hint, not the sweep's it was inside
            raise KeyboardInterrupt("continue with: " + shlex.join(
                ["collsel", "tune", "--resume", "--out", self.out])) from None

    def _run(self):
        todo = [s for s in self.stages() if s[0] not in self.done]
        total = len(list(self.stages()))
        for i, (name, seconds, work) in enumerate(todo):
            left = sum(s for _, s, _ in todo[i:])
            self.progress(f"[{total - len(todo) + i + 1}/{total}] {name.replace(':', ' ')} "
                          f"(about {estimate.duration(seconds)}); ETA {_clock(left)}")
            work()
            layout.mark_done(self.out, name)
        text = (self.replay_summary() if self.plan.replayed
                else tune_summary.table(self.out, self.plan)
                + profile_region.saving_lines(self.out, self.plan))
        write_file(os.path.join(self.out, layout.SUMMARY), text)
        self.progress(f"done in {_clock(time.monotonic() - self.started)}; summary in "
                      f"{os.path.join(self.out, layout.SUMMARY)}")
        print(text, end="")
        return 0

    def progress(self, text):
        print(f"collsel tune: {text} (elapsed {_clock(time.monotonic() - self.started)})",
              file=sys.stderr, flush=True)

    def sweep(self, grid, refine_s=None):
        run_sweep(_sweep_request(self.out, self.plan, grid, refine_s))

    def refine(self, index):
        """Refinement of collective `index`, within its part of what the budget has left
        (pipeline/tune/refinement.py)."""
        grid = self.grids[index]
        part = refinement.share(self.out, self.plan, self.grids, index)
        if part.seconds is None:
            self.progress(f"{grid.collective}: {part.why}")
        else:
            self.sweep(grid, part.seconds)

    def tree(self, collective):
        """The recommended tree and its blob, as `collsel build --recommend` and `collsel emit
        --target blob` write them and say it (into the collective's log)."""
        os.makedirs(layout.blobs(self.out), exist_ok=True)    # a tune begun by an older collsel
        with open(layout.log(self.out, collective), "a") as log, contextlib.redirect_stdout(log):
            build.print_built(pipeline.build_recommended(
                layout.table(self.out, collective), collective=collective,
                out=layout.tree_dir(self.out, collective)))
            trees = [layout.tree_json(self.out, collective)]
            emit.emit_files("blob", trees, layout.blob(self.out, collective),
                            pipeline.emit_options("blob", trees))

    def curve(self, collective):
        """The anytime curve of a replayed collective (commands/tune_replay.py), saved."""
        replayed = self.plan.replayed
        rows = tune_replay.curve(collective, layout.table(self.out, collective),
                                 replayed.replay, tune_replay.score_config(replayed.score),
                                 replayed.full_cost_s, replayed.checkpoints, self.progress)
        write_file(layout.curve(self.out, collective), tune_replay.text(rows))

    def replay_summary(self):
        """What a replayed tune prints: the budget against the full table's cost, and each
        collective's curve (its last point is the tune's tree)."""
        plan, replayed = self.plan, self.plan.replayed
        lines = [f"replay of {replayed.replay}: budget {plan.budget} = "
                 f"{plan.budget_s:.1f} s of its full cost {replayed.full_cost_s:.1f} s "
                 f"(simulated); trees scored with '{replayed.score}' on the full table; "
                 "penalties in % against the fastest forced method"]
        for g in self.grids:
            with open(layout.curve(self.out, g.collective)) as f:
                lines += [f"{g.collective}: {layout.curve(self.out, g.collective)}", f.read()]
        return "\n".join(lines)

    def report(self, collective):
        """The report, its deploy box pointing at the tune's own files: the tree, the MPI's
        file when it holds this collective, the blob directory."""
        deployed = [f"blob={layout.blobs(self.out)}"]
        target, name, known = self.deploy_file()
        if target and collective in known and os.path.exists(os.path.join(self.out, name)):
            deployed.append(f"{target}={os.path.join(self.out, name)}")
        with open(layout.log(self.out, collective), "a") as log, contextlib.redirect_stdout(log):
            report.print_result(pipeline.report(pipeline.ReportRequest(
                tables=[layout.table(self.out, collective)], collective=collective, quiet=True,
                tree_dir=layout.tree_dir(self.out, collective), deployed=deployed,
                out=layout.report_dir(self.out, collective))))

    def deploy_file(self):
        """(emit target, file name in DIR, the collectives it can hold) of the MPI's own
        deployment file, or (None, None, ()) when the MPI has none."""
        if self.plan.mpi == "openmpi":
            return "ompi-rules", layout.RULES, COLLECTIVE_IDS
        if self.plan.mpi == "mpich":
            return "mpich-json", layout.MPICH, mpich_json.MPICH_NAMES
        return None, None, ()

    def deploy(self):
        """Open MPI: one rules file for every collective; MPICH: the selection file of the
        collectives it maps."""
        target, name, known = self.deploy_file()
        if target is None:
            self.progress(f"no deployment file for --mpi {self.plan.mpi}: its trees, blobs "
                          f"and reports are in {self.out}")
            return
        trees = [layout.tree_json(self.out, c) for c in self.plan.collectives if c in known]
        outside = [c for c in self.plan.collectives if c not in known]
        if outside:
            self.progress(f"{name} holds {len(trees)} of the collectives; left out (emit "
                          f"--target {target} maps none of their algorithms): "
                          f"{', '.join(outside)}; their trees, blobs and reports are in {self.out}")
        if not trees:
            return
        with open(os.path.join(self.out, layout.DEPLOY_LOG), "w") as log, \
                contextlib.redirect_stdout(log):
            emit.emit_files(target, trees, os.path.join(self.out, name),
                            pipeline.emit_options(target, trees))


def _clock(seconds):
    seconds = int(max(seconds, 0))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"
