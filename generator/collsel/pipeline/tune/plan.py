"""collsel tune's plan: the time budget, each collective's coarse grid and how it is measured,
fitted with the sweep's own estimate (sources/sweep/estimate.py).

The coarse grid. Every collective gets the same grid density, the finest step of LADDER whose
coarse sweeps together fit COARSE_SHARE of --budget by the estimate. So the budget is split by
need, not equally: a collective costs what its methods cost (launches x start-up + points x the
time of a point), bcast with 34 methods about eight times scan with 3 (the start-up per launch
is the same for both). Each step thins one axis further, every given value kept at step 0:
  - message sizes first (the axis the trees cut most): at least 2, 4, 8, ... times apart
    (`thinned`), the smallest and the largest always kept, never fewer than MIN_SIZES;
  - P one step behind: at least 2, 4, ... times apart, the smallest and the largest kept, never
    fewer than MIN_COMM_SIZES = 3, so an interior P remains for build's leave-one-P-out (it
    never holds out the end P: that would be extrapolation). The launches' start-up is per P, so
    thinning P saves more than its share of points. --nodes/--ppn shapes are kept as given.
  e.g. the defaults at 30m (14 collectives, local launcher): under adaptive (1 launch per P),
  all 7 P and 23 of the 44 sizes; under coarse-refine (3), P 2,4,8,16 and 12 of the sizes;
  about 13 min of coarse sweeps and 17 min for refinement.
barrier has no message size: its one m is 0. The coarse launches per P (`coarse_launches`)
depend on the strategy and the mode. tune's default strategy, adaptive (sweep/racing.py), races
from SEED_LAUNCHES = 1 launch of a paired grid: the grid for the same budget share is denser, and
its refinement relaunches only the methods still in the race. coarse-refine keeps COARSE_LAUNCHES
= 3 (commands/sweep: paired, 3 at least): with 2, the paired tie test's Student-t interval of the
log-ratios has one degree of freedom (t = 12.7), so nearly every method stays tied with the best
and refinement would relaunch almost every cell. The per-method mode is never refined, so it
keeps COARSE_LAUNCHES under either strategy (its across-launch penalty needs launches of its own);
Intel MPI's by-size mode BY_SIZE_LAUNCHES.

How a collective is measured: paired (the sweep's default), but for PER_METHOD: Open MPI 4.1 and
5.0 expose coll_tuned_allgatherv_algorithm read-only through MPI_T, so the benchmark cannot force
it per communicator (it exits 6, "forcing did not take"); allgatherv is measured with --mode
per-method (one launch per method, forced by --mca), which has no tie test: it is not refined.
The per-method mode runs --comm-sizes only: with --nodes/--ppn or --cluster it is left out, with
the reason printed (MEASURED_APART). Nor does it know "unusable at this cell" (a refused call
kills the launch, a lost launch per size): a method Open MPI refuses at some (P, m) of the grid
(core.mpi.fallbacks, the call fails: allgatherv's two_proc at P != 2) is left out of the per-method
sweep, with the reason printed (`refused`).

Refinement: the rest of the budget. The plan shows each collective's part in proportion to its
coarse cost; at run time refinement.py gives each collective in turn a part of what the budget
has really left (its wall time so far, read from the journals) in proportion to its undecided
cells x methods (sources/sweep/refine.undecided_in_table), nothing to one whose cells are all
decided (a refinement resumed after a kill is shared by the counts its journal holds then).
What the refinement leaves goes to new P where the decisions change (densify.py), among the P
the grid was thinned from (Grid.candidate_comm_sizes). The plan is made once and recorded
(tune.json, TunePlan), so a resumed tune runs the same grids.
"""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, replace
from typing import Any, Optional

from collsel.core.mpi.method_text import count_text
from collsel.errors import InputError
from collsel.sources.measure import benchmark_program as bench
from collsel.sources.sweep import by_size, estimate, plan as sweep_plan, racing

COARSE_SHARE = 0.6
# tune's default strategy: adaptive reached the full table's tree (0.5 points) on 26 of the 28
# corpus target tables at a median 29.1 % of the full cost, coarse-refine on 17 at 61.9 %; live
# here its trees were as good or better at 5, 10 and 20 % of a full sweep (docs/measurements.md,
# "Every budget under this charge" and "Live at 5, 10 and 20 %").
DEFAULT_STRATEGY = "adaptive"
COARSE_LAUNCHES = 3
BY_SIZE_LAUNCHES = 1    # Intel MPI (by-size): not refined, so no tie test to feed
MIN_SIZES = 4           # a coarser m axis than this has too little to decide on
MIN_COMM_SIZES = 3      # the smallest and largest P and one interior P (leave-one-P-out)
MAX_OCTAVES = 8
# (P octaves, m octaves) of each step, finest first: m thinned first, P one step behind.
LADDER = tuple(((step // 2), (step + 1) // 2) for step in range(2 * MAX_OCTAVES))
PER_METHOD = sweep_plan.PER_METHOD
MEASURED_APART = ("per-method mode (Open MPI cannot force allgatherv per communicator through "
                  "MPI_T) runs --comm-sizes only, not --nodes/--ppn or --cluster")
MAX_BUDGET_S = 7 * 86400
_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?:in)?)?(?:(\d+(?:\.\d+)?)s)?")


def parse_budget(text) -> float:
    """--budget '30m', '90s', '2h', '1h30m' -> seconds; one line naming the flag otherwise."""
    match = _DURATION.fullmatch(str(text).strip().lower())
    if not match or not any(match.groups()):
        raise InputError(f"--budget {text!r}: expected a duration such as 30m, 90s, 2h or 1h30m")
    hours, minutes, seconds = (float(g or 0) for g in match.groups())
    total = 3600 * hours + 60 * minutes + seconds
    if not 0 < total <= MAX_BUDGET_S:
        raise InputError(f"--budget {text!r}: out of range (more than 0, a week at most)")
    return total


@dataclass(frozen=True)
class Grid:
    """One collective's plan: its coarse grid, its mode and budgets (seconds)."""
    collective: str
    comm_sizes: tuple           # the P values; () with --nodes/--ppn (the shapes as given)
    msg_sizes: tuple
    methods: int
    shapes: int                 # communicator sizes (nodes x ppn pairs) per round
    launches: int
    mode: str                   # paired, or per-method (PER_METHOD: never refined)
    coarse_s: float             # the sweep's estimate of the coarse grid
    refine_s: float             # planned refinement: the rest, shared by coarse cost
    algorithms: str = ""        # the sweep's --algorithms ("": all; `refused` left out)
    # the P `comm_sizes` was thinned from: where densifying (densify.py) may add P
    candidate_comm_sizes: tuple = ()

    def densify_why_not(self) -> str:
        """Why densifying (densify.py) cannot add P to this grid, "" when it can."""
        if self.mode != "paired":
            return f"measured {self.mode}, not densified"
        if not self.comm_sizes or not self.candidate_comm_sizes:
            return "P given as --nodes/--ppn shapes or by the profile, not densified"
        if not set(self.candidate_comm_sizes) - set(self.comm_sizes):
            return "every P measured, nothing to densify"
        return ""

    def to_json(self) -> dict:
        out = {**asdict(self), "comm_sizes": list(self.comm_sizes),
               "msg_sizes": list(self.msg_sizes),
               "candidate_comm_sizes": list(self.candidate_comm_sizes)}
        if not self.candidate_comm_sizes:   # (a plan of an older collsel has none)
            del out["candidate_comm_sizes"]
        return out

    @classmethod
    def from_json(cls, data: dict) -> Grid:
        """ValueError where a list of P or sizes holds anything but non-negative integers."""
        return cls(**{**data, "comm_sizes": _sizes(data["comm_sizes"]),
                      "msg_sizes": _sizes(data["msg_sizes"]),
                      "candidate_comm_sizes": _sizes(data.get("candidate_comm_sizes", ()))})


def _sizes(items) -> tuple:
    if not isinstance(items, (list, tuple)) or not all(
            type(x) is int and x >= 0 for x in items):
        raise ValueError(f"not a list of non-negative integers: {items!r}")
    return tuple(items)


@dataclass(frozen=True)
class Replayed:
    """A replayed tune's own settings (--replay; pipeline/tune/curve.py)."""
    replay: str                 # the recorded table, absolute
    full_cost_s: float          # what measuring all of it took (simulated)
    score: str                  # the build flags the curve's trees are scored with
    checkpoints: int            # points of the anytime curve


@dataclass(frozen=True)
class TunePlan:
    """The whole tune, as recorded in DIR/tune.json (pipeline/tune/layout.py) and read back by
    --resume: collectives, budget, each collective's Grid and the sweep options every sweep
    of the tune gets."""
    machine: str                # what is measured (layout.machine): a resume must match it
    command: str                # the `collsel tune` command line
    mpi: str
    launcher: str
    budget: str                 # --budget as given
    budget_s: float
    collectives: tuple[str, ...]
    strategy: Optional[str]     # the sweep's --strategy (None: a tune.json of an older collsel)
    left_out: tuple[tuple[str, str], ...]   # (collective, why) of those not tuned
    sweep_options: tuple[str, ...]
    grids: tuple[Grid, ...]
    profile: Optional[dict] = None      # --profile's region (pipeline/tune/profile_region.py)
    replayed: Optional[Replayed] = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self.replayed is None else asdict(self.replayed)
        out.update(machine=self.machine, command=self.command, mpi=self.mpi,
                   launcher=self.launcher, budget=self.budget, budget_s=self.budget_s,
                   collectives=list(self.collectives))
        if self.strategy is not None:
            out["strategy"] = self.strategy
        out.update(left_out=[list(x) for x in self.left_out],
                   sweep_options=list(self.sweep_options),
                   grids=[g.to_json() for g in self.grids])
        if self.profile is not None:
            out["profile"] = self.profile
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TunePlan:
        replayed = (Replayed(data["replay"], data["full_cost_s"], data["score"],
                             data["checkpoints"]) if "replay" in data else None)
        return cls(data["machine"], data["command"], data["mpi"], data["launcher"],
                   data["budget"], data["budget_s"], tuple(data["collectives"]),
                   data.get("strategy"), tuple((c, why) for c, why in data["left_out"]),
                   tuple(data["sweep_options"]), tuple(Grid.from_json(g) for g in data["grids"]),
                   data.get("profile"), replayed)


def thinned(values, octaves) -> tuple:
    """The ascending `values` with at least 2^octaves between kept ones, from the smallest (0
    counts as 1), and the largest."""
    kept = [values[0]]
    for m in values[1:]:
        if math.log2(max(m, 1)) - math.log2(max(kept[-1], 1)) >= octaves:
            kept.append(m)
    return tuple(kept if kept[-1] == values[-1] else kept + [values[-1]])


def _thinned_at_least(values, octaves, least):
    """`thinned`, but never below `least` values (or below what was given)."""
    for o in range(octaves, -1, -1):
        kept = thinned(values, o)
        if len(kept) >= min(least, len(values)):
            return kept
    return tuple(values)


# How a collective is measured, and the methods the per-method mode leaves out: the sweep's
# own rules (sources/sweep/plan.py), which `collsel sweep` applies too.
mode_of = sweep_plan.mode_of
refused = sweep_plan.refused


def coarse_launches(strategy: str, given: int | None = None) -> dict[str, int]:
    """{mode: coarse launches per P} (module docstring): `given` (--launches) for every mode
    where given."""
    if given is not None:
        return dict.fromkeys(("paired", "per-method", "by-size"), given)
    paired = racing.SEED_LAUNCHES if strategy == "adaptive" else COARSE_LAUNCHES
    return {"paired": paired, "per-method": COARSE_LAUNCHES, "by-size": BY_SIZE_LAUNCHES}


def least_launches(strategy: str, family: str) -> int:
    """The fewest --launches a tune takes: adaptive races from one; coarse-refine's tie test
    needs COARSE_LAUNCHES; Intel MPI is by size (not refined)."""
    return (racing.SEED_LAUNCHES if strategy == "adaptive" else BY_SIZE_LAUNCHES
            if family == "intel" else COARSE_LAUNCHES)


def coarse_estimate(shapes, sizes, methods, launches, launcher_name, time_cap,
                    mode="paired") -> float:
    """The estimated wall time of a coarse sweep: paired, one launch per shape and launch
    measuring every method; by-size, the same in as many launches as sizes closer than its
    offsets need (sweep/by_size.py), and the baseline in a launch of its own (methods counts
    it); per-method, one per shape, method and launch."""
    if mode == "paired":
        planned = [("", len(sizes) * methods)] * (shapes * launches)
    elif mode == "by-size":
        forced = methods - 1
        parts = by_size.parts_per_round(sizes, forced)
        planned = ([("", len(sizes) * forced / parts)] * parts
                   + [("", len(sizes))]) * (shapes * launches)
    else:
        planned = [("", len(sizes))] * (shapes * methods * launches)
    return estimate.wall_seconds(planned, launcher_name, time_cap)


def grids_at(step, collectives, methods_of, comm_sizes, shape_count, msg_sizes, launches,
             launcher_name, time_cap, family, algorithms_of) -> list[Grid]:
    """[Grid] of every collective at LADDER[step] (refine_s 0: `plan` shares it); `launches`:
    {mode: coarse launches per P} (`coarse_launches`)."""
    p_octaves, m_octaves = LADDER[step]
    ps = _thinned_at_least(comm_sizes, p_octaves, MIN_COMM_SIZES) if comm_sizes else ()
    ms = _thinned_at_least(msg_sizes, m_octaves, MIN_SIZES)
    grids = []
    for c in collectives:
        sizes = (0,) if c in bench.capabilities().sizeless else ms
        count = len(ps) if ps else shape_count
        mode = mode_of(c, family)
        seconds = coarse_estimate(count, sizes, methods_of[c], launches[mode], launcher_name,
                                  time_cap, mode)
        grids.append(Grid(c, ps, sizes, methods_of[c], count, launches[mode], mode,
                          round(seconds, 1), 0.0, algorithms_of.get(c, ""), comm_sizes))
    return grids


class BudgetTooSmall(InputError):
    """--budget below what the coarsest grids need (`need_s`: the least budget plan() takes)."""

    def __init__(self, need_s: float, message: str):
        super().__init__(message)
        self.need_s = need_s


def plan(collectives, methods_of, comm_sizes, shape_count, msg_sizes, budget_s, launches,
         launcher_name, time_cap, budget_text, family="openmpi",
         algorithms_of=None) -> list[Grid]:
    """[Grid] of every collective (in the given order): the finest LADDER step whose coarse
    sweeps fit COARSE_SHARE of the budget, the rest shared as planned refinement by coarse
    cost among the paired ones; one line naming what the budget needs when even the coarsest
    step does not fit.
    `comm_sizes`: the ascending P values, or () with --nodes/--ppn (`shape_count` shapes);
    `launches`: {mode: coarse launches per P} (`coarse_launches`);
    `algorithms_of`: {collective: the sweep's --algorithms} where not all are measured."""
    allowed = COARSE_SHARE * budget_s
    seen, grids = set(), None
    for step in range(len(LADDER)):
        grids = grids_at(step, collectives, methods_of, tuple(comm_sizes), shape_count,
                         tuple(msg_sizes), launches, launcher_name, time_cap, family,
                         algorithms_of or {})
        key = tuple((g.comm_sizes, g.msg_sizes) for g in grids)
        if key in seen:
            continue
        seen.add(key)
        coarse = sum(g.coarse_s for g in grids)
        if coarse <= allowed:
            paired = sum(g.coarse_s for g in grids if g.mode == "paired") or 1
            rest = budget_s - coarse
            return [replace(g, refine_s=round(rest * g.coarse_s / paired, 1))
                    if g.mode == "paired" else g for g in grids]
    need = sum(g.coarse_s for g in grids) / COARSE_SHARE
    worst = max(grids, key=lambda g: g.coarse_s)
    raise BudgetTooSmall(need,
        f"--budget {budget_text}: too small for {count_text(len(collectives), 'collective')}: "
        f"their coarsest grids ({worst.shapes} communicator sizes x {len(worst.msg_sizes)} sizes x "
        f"{worst.launches} launches) take about "
        f"{estimate.duration(sum(g.coarse_s for g in grids))} "
        f"(the most: {worst.collective}, {worst.methods} methods {worst.mode}, "
        f"{estimate.duration(worst.coarse_s)}), {COARSE_SHARE:.0%} of "
        f"{estimate.duration(need)}; give --budget {_minutes(need)} or more, fewer "
        "--collectives, --comm-sizes or --msg-sizes, or a smaller --time-cap")


def _minutes(seconds):
    """A --budget at least `seconds` long, in whole seconds below 2 minutes, else minutes."""
    return f"{math.ceil(seconds)}s" if seconds < 120 else f"{math.ceil(seconds / 60)}m"
