"""`collsel tune`'s request and its plan: TuneRequest holds every tune flag, typed, and plan()
checks it and makes the TunePlan (plan.py) the tune records and runs: the collectives, the
budget in seconds, each collective's grid and the sweep options every sweep of the tune gets.
Every value is checked, each named by its flag, before anything is written."""
from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from typing import Any, Callable

from collsel.cluster import state as cluster_state
from collsel.core.io import sizes, values
from collsel.core.mpi import algorithms, method_text
from collsel.errors import InputError
from collsel.pipeline.sweeping import check_collective, collectives as measurable
from collsel.pipeline.tune import layout, plan as tune_plan, profile_region
from collsel.sources.measure import benchmark_program as bench, launchers, mpi_home
from collsel.sources.sweep import (estimate, launch_stats, plan as sweep_plan, replay,
                                   shapes)

DEFAULT_BUDGET = "30m"
REPLAY_BUDGET = "10%"
REPLAY_SCORE = "--recommend"
CHECKPOINTS = 8         # points of a replay's anytime curve (curve.py)
# the full sweep a live --budget N% is a share of: the sweep's paired default
FULL_LAUNCHES = 5
# the sweep's defaults of --min-reps, --max-reps and --warmup (the replay's repetitions rule)
REPS_WARMUP = (5, 300, 2)
POST_S = 20     # a rough guess of build + emit + report per collective, for the ETA only

# The sweep's options tune passes through as given, in the order the plan records them.
PASSED = ("--comm-sizes", "--msg-sizes", "--nodes", "--ppn", "--time-cap", "--seed",
          "--confidence", "--equivalence", "--srun-mpi", "--cluster", "--hostfile", "--map-by",
          "--mpirun", "--launcher-args", "--bench", "--mpicc", "--mpi-home", "--timeout")
FILES = ("--hostfile", "--bench", "--cluster", "--mpi-home")
GRIDDED = ("--comm-sizes", "--msg-sizes")       # given per collective, thinned (the grids)


@dataclass
class TuneRequest:
    """One tune: every `collsel tune` flag (its dest name), with the command line's defaults
    (tests/unit/pipeline/tune/test_tune_planning.py holds them equal). None is "not given": a
    number may be given as the text of its flag, a LIST as its text; plan() checks them."""
    out: str
    collectives: str | None = None          # 'all' or a comma list
    budget: str | None = None               # 30m, 90s, 1h30m or N%
    mpi: str | None = None                  # None: openmpi, or the replay's
    launches: int | str | None = None
    launcher: str | None = None
    # the sweep's options, passed through (PASSED)
    comm_sizes: str | None = None
    msg_sizes: str | None = None
    nodes: str | None = None
    ppn: str | None = None
    time_cap: float | str | None = None
    seed: int | str | None = None
    confidence: float | str | None = None
    equivalence: float | str | None = None
    srun_mpi: str | None = None
    cluster: str | None = None
    hostfile: str | None = None
    map_by: str | None = None
    mpirun: str | None = None
    launcher_args: str | None = None
    bench: str | None = None
    mpicc: str | None = None
    mpi_home: str | None = None
    timeout: float | str | None = None
    strategy: str | None = None
    replay: str | None = None               # a recorded table
    score: str | None = None                # --replay: build flags (REPLAY_SCORE)
    checkpoints: int | str | None = None    # --replay: points of the curve (CHECKPOINTS)
    progress_interval: float | str | None = None
    profile: str | None = None              # a `collsel profile` FILE
    resume: bool = False
    dry_run: bool = False


def _dest(flag):
    return flag[2:].replace("-", "_")


# What a resumed tune takes from DIR/tune.json, never from its request (the first given is
# named).
RECORDED = ("collectives", "budget", "mpi", "launches", "launcher", "strategy", "replay",
            "profile", "score", "checkpoints", *map(_dest, PASSED), "progress_interval")


def check_resume(request: TuneRequest) -> None:
    """A --resume request names its DIR only: a recorded option given again is refused."""
    given = [name for name in RECORDED if getattr(request, name) is not None]
    if given:
        raise InputError(f"--resume takes the options recorded in {request.out}/{layout.PLAN}: "
                         f"drop --{given[0].replace('_', '-')}")


def plan(request: TuneRequest, score_config: Callable[[str], Any]) -> tune_plan.TunePlan:
    """The whole plan, checked: collectives, budget, each collective's grid and budgets, and
    the sweep options every sweep of the tune gets. `score_config` reads --score's build flags
    (the commands' parser of them), so a bad --score is refused now, not after the sweeps."""
    args = request
    recording = replay.load(args.replay) if args.replay else None
    family = recording.family if recording else args.mpi or "openmpi"
    if recording and args.mpi and args.mpi != family:
        raise InputError(f"--mpi {args.mpi}: --replay {args.replay} records {family}")
    launcher_name = args.launcher or ("hostfile" if args.cluster is not None or args.hostfile
                                      else "local")
    placed = args.nodes is not None or args.ppn is not None or args.cluster is not None
    if recording:
        _check_replayed(args, recording)
        score_config(REPLAY_SCORE if args.score is None else args.score)
        launcher_name, collectives, left_out = "replay", [recording.collective], []
    else:
        collectives, left_out = _collectives(args.collectives, family, placed)
    region = (profile_region.read(args.profile, family, args.replay, comm_sizes=args.comm_sizes,
                                  msg_sizes=args.msg_sizes, nodes=args.nodes, ppn=args.ppn)
              if args.profile else None)
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
        comm_sizes = _within_slots(sorted(comm_sizes), args)
        count = len(comm_sizes)
    msg_sizes = (sizes.parse_size_list(args.msg_sizes, "--msg-sizes", *bench.MSG_SIZE)
                 if args.msg_sizes else recording.msg_sizes if recording
                 else sizes.default_msg_sizes())
    if region:          # the profile's own P and m (it refuses --comm-sizes, --msg-sizes)
        comm_sizes, msg_sizes = profile_region.all_axes(region, collectives)
        count = len(comm_sizes)
    strategy = args.strategy or tune_plan.DEFAULT_STRATEGY
    launches = tune_plan.coarse_launches(strategy, None if args.launches is None else (
        values.integer(args.launches, "--launches", tune_plan.least_launches(strategy, family),
                       launch_stats.LAUNCHES[1])))
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
    for flag in PASSED:
        value = getattr(args, _dest(flag))
        if value is not None and flag not in GRIDDED:
            # files as absolute paths: a resumed tune may start in another directory
            options.append(f"{flag}={os.path.abspath(value) if flag in FILES else value}")
    if args.progress_interval is not None:
        options.append(f"--progress-interval={args.progress_interval}")
    replayed = tune_plan.Replayed(
        os.path.abspath(args.replay), round(recording.full_cost(time_cap, *REPS_WARMUP), 3),
        REPLAY_SCORE if args.score is None else args.score,
        (CHECKPOINTS if args.checkpoints is None else
         values.integer(args.checkpoints, "--checkpoints", 1, 1000))) if recording else None
    return tune_plan.TunePlan(
        layout.machine(launcher_name, replayed and replayed.replay),
        shlex.join(["collsel", *sys.argv[1:]]), family, launcher_name, budget_text, budget_s,
        tuple(collectives), strategy, tuple(map(tuple, left_out)), tuple(options), tuple(grids),
        region, replayed)


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


def _within_slots(comm_sizes, args):
    """The P the hosts can start (launchers.within_slots): an emulated cluster's slots, or those
    of a --hostfile whose lines all give slots=."""
    cluster = cluster_state.load(args.cluster) if args.cluster is not None else None
    return launchers.within_slots(comm_sizes, *launchers.host_slots(cluster, args.hostfile),
                                  bool(args.comm_sizes))


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
        every = measurable(family)
        return ([c for c in every if c not in apart],
                [[c, f"{c}: its {tune_plan.MEASURED_APART}"] for c in every if c in apart])
    chosen = [c.strip() for c in text.split(",") if c.strip()]
    if not chosen:
        raise InputError(f"--collectives {text!r}: empty; 'all' or a comma list")
    for i, c in enumerate(chosen):
        try:
            chosen[i] = c = check_collective(c, family)
        except InputError as e:
            raise InputError(str(e).replace("--collective", "--collectives", 1)) from None
        if c in apart:
            raise InputError(f"--collectives {c}: its {tune_plan.MEASURED_APART}; tune it "
                             "in a separate run with --comm-sizes")
    return list(dict.fromkeys(chosen)), []


def plan_lines(plan: tune_plan.TunePlan, done: frozenset[str] | set[str] = frozenset()
               ) -> list[str]:
    """The plan as `--dry-run` prints it: what each sweep runs (stages.sweep_request), and
    the stages `done` so far."""
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
    refined = (f"refinement at most {estimate.duration(plan.budget_s - coarse)} (shared at "
               "run time by undecided cells x methods; what it leaves adds P where decisions "
               "change)"
               if any(g.mode == "paired" for g in grids)
               else "no refinement (no collective is measured paired)")
    lines.append(f"estimated: coarse sweeps {estimate.duration(coarse)} + {refined}, then "
                 f"build, emit and report (about {estimate.duration(POST_S * len(grids))})")
    return lines
