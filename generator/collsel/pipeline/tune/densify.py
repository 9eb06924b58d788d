"""`collsel tune`'s last measuring stage: what the budget has left after the refinement goes to
new P and new message sizes where the decisions change (issue 40's coarse-to-fine in P and m).

The coarse grid thins P and m by octaves; the tree decides an unmeasured P (or m) by the nearer
measured one. Where two neighbouring measured P make the same decision at every size, a P
between them would most likely make it too; where they differ, the P at which the decision
changes is unknown, and the tree may be wrong on every P between them. So a round measures, for
every neighbouring pair (P_lo, P_hi) of the measured P whose decisions differ, the candidate P
nearest their geometric midpoint: a bisection of the gap, one P per gap per round; and the same
along m, for every neighbouring pair of measured sizes whose decisions differ at some P. The
candidates are the values the coarse grid was thinned from (Grid.candidate_comm_sizes and
candidate_msg_sizes: the flags or the defaults live, the recorded ones in a replay). The gaps of
both axes are ranked by what is at stake there: summed over the cells along the gap where the two
decisions differ, the larger of what each side's choice costs at the other side
(core.maps.cell_cost, unmeasured choices at the cell's worst); a round takes the gaps most at
stake first, each the allowance still pays for (RoundCost). Rounds go on until no gap with a
candidate changes decision or the allowance is spent. Without recorded noise every coarse cell is
decided at once and the refinement spends nothing: without this stage such a tune left most of
its budget unspent whatever it was given.

A new P is measured at every size of the grid, a new size at every P (the sweep's grid is a
product): a round's new sizes are measured at each measured P in one more run of each of its
planned launches (the journal keeps both runs of launch K apart, sources/sweep/journal.py).

The allowance: collectives in turn (the tune's order), each given what the budget has left
before its densifying, shared equally (x its --profile time share) with the paired collectives
after it. What a collective spent here is read from its journal (`densified_s`), so a tune
resumed after a kill gives each collective the same allowance and, a round's P and sizes
recorded in the table's grid before they are measured, completes the same rounds.
"""
from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from collsel.core.io import csvfile
from collsel.core.maps import cell_cost, decision_map, table as table_io
from collsel.pipeline.tune import layout, profile_region, refinement
from collsel.pipeline.tune import plan as tune_plan
from collsel.sources.sweep import estimate
from collsel.sources.sweep.resume import parse_options

P, M = 0, 1         # the axes a gap lies along


@dataclass(frozen=True)
class Gap:
    """Two neighbouring measured values of an axis (P or m) whose decisions differ, and what is
    at stake between them (percentage points summed over the cells along the gap where they
    differ)."""
    low: int
    high: int
    stake: float
    axis: int = P


def changing_gaps(table, axis: int = P) -> list[Gap]:
    """The neighbouring measured values of `axis` (a PerfTable's P or m) whose decisions differ
    at some cell along it, most at stake first (on equal stakes the smaller first)."""
    dm = decision_map.build_map(table)
    if len(dm.axes[axis].values) < 2:
        return []
    costs = cell_cost.method_costs(dm.times, dm.defer_index, cell_cost.WORST)
    best, measured = dm.best, dm.measured
    if axis == M:           # the m axis first: the same passes along it
        costs, best, measured = costs.swapaxes(0, 1), best.T, measured.T
    low, high = best[:-1], best[1:]                     # (gaps, cells) decisions either side
    # what the low side's choice costs at the high value, and the high side's at the low one
    up = np.take_along_axis(costs[1:], low[..., None], axis=-1)[..., 0]
    down = np.take_along_axis(costs[:-1], high[..., None], axis=-1)[..., 0]
    differ = (low != high) & measured[:-1] & measured[1:]
    stake = np.where(differ, np.fmax(np.nan_to_num(up, nan=0.0), np.nan_to_num(down, nan=0.0)),
                     0.0).sum(axis=1)
    values = dm.axes[axis].values
    gaps = [Gap(values[i], values[i + 1], float(stake[i]), axis)
            for i in np.flatnonzero(differ.any(axis=1))]
    return sorted(gaps, key=lambda g: (-g.stake, g.low))


def midpoint(gap: Gap, candidates: Sequence[int]) -> int | None:
    """The candidate strictly inside the gap nearest its geometric midpoint (0 counts as 1; the
    smaller on equal distance), or None when there is none."""
    inside = [x for x in candidates if gap.low < x < gap.high]
    centre = (math.log2(max(gap.low, 1)) + math.log2(max(gap.high, 1))) / 2
    return min(inside, key=lambda x: (abs(math.log2(max(x, 1)) - centre), x), default=None)


@dataclass(frozen=True)
class RoundCost:
    """What a round's new values are estimated to cost: `per_p`, the seconds each measured P's
    planned launches took (the journal's, every run of them); `cell_s`, the seconds one launch
    spent measuring each (P, m) cell, all its methods (`cell_seconds`); `launches` per P;
    `startup_s` a launch's start-up (sources/sweep/estimate.py). A new P costs what the dearer
    of its gap's two P cost (a collective's cost grows with P); a new size, at every measured
    P, what the dearer of its gap's two sizes cost there in each planned launch, and the
    round's first new size one more start-up per planned launch of every measured P."""
    per_p: dict[int, float]
    cell_s: dict[tuple[int, int], float]
    launches: int
    startup_s: float

    def new_p(self, gap: Gap) -> float:
        return max(self.per_p.get(gap.low, 0.0), self.per_p.get(gap.high, 0.0))

    def new_size(self, gap: Gap, first: bool) -> float:
        ps = {p for p, _ in self.cell_s}
        measuring = sum(max(self.cell_s.get((p, gap.low), 0.0), self.cell_s.get((p, gap.high),
                                                                                0.0)) for p in ps)
        return self.launches * (measuring + (len(ps) * self.startup_s if first else 0.0))

    def alone(self, gap: Gap) -> float:
        """What the gap's value costs in a round of its own."""
        return self.new_p(gap) if gap.axis == P else self.new_size(gap, True)


def cell_seconds(table) -> dict[tuple[int, int], float]:
    """{(P, m): seconds one launch spent measuring the cell, all methods} of a sweep's table:
    its rows' repetitions (n, over all their launches) x mean time, per launch."""
    n = np.asarray(table.column("n"), dtype=float)
    mean = np.asarray(table.column("mean_us"), dtype=float)
    launches = np.asarray(table.column("launches"), dtype=float)
    seconds = n * mean * 1e-6 / np.maximum(launches, 1.0)
    out: dict[tuple[int, int], float] = {}
    for p, m, s in zip(table.comm_size.tolist(), table.msg_size.tolist(), seconds.tolist()):
        out[(p, m)] = out.get((p, m), 0.0) + s
    return out


def next_round(table, candidates: tuple[Sequence[int], Sequence[int]], cost: RoundCost,
               left_s: float) -> tuple[list[int], list[int]]:
    """(the P, the sizes) of the next round, ascending: the midpoint of each changing gap of
    either axis that has a candidate (`candidates`: the P, the sizes), the P gaps first, each
    axis's most at stake first, each if `left_s` still pays for it (`cost`)."""
    chosen: tuple[list[int], list[int]] = ([], [])
    gaps = changing_gaps(table, P) + changing_gaps(table, M)
    for gap in gaps:
        value = midpoint(gap, candidates[gap.axis])
        price = cost.new_p(gap) if gap.axis == P else cost.new_size(gap, not chosen[M])
        if value is not None and price <= left_s:
            chosen[gap.axis].append(value)
            left_s -= price
    return sorted(chosen[P]), sorted(chosen[M])


def _asked(metadata: dict) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(the P, the sizes) a sweep table's metadata asks for (its last `# options=` line)."""
    options = parse_options(metadata.get("options", ""))
    return tuple(tuple(sorted({int(x) for x in options.get(flag, "").split(",") if x}))
                 for flag in ("--comm-sizes", "--msg-sizes"))


def table_grid(out: str, collective: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(the P, the sizes) the collective's sweep table asks for: the plan's grid and every value
    a densifying round added; ((), ()) when the table does not exist yet."""
    path = layout.table(out, collective)
    if not os.path.exists(path):
        return (), ()
    return _asked(csvfile.read(path, "a sweep table").metadata)


def with_values(grid: tune_plan.Grid, asked: tuple[Sequence[int], Sequence[int]]
                ) -> tune_plan.Grid:
    """`grid` grown by the P and sizes `asked` (those a table asks for, or a round's)."""
    ps = tuple(sorted({*grid.comm_sizes, *asked[P]}))
    ms = tuple(sorted({*grid.msg_sizes, *asked[M]}))
    return (grid if (ps, ms) == (grid.comm_sizes, grid.msg_sizes)
            else replace(grid, comm_sizes=ps, msg_sizes=ms))


def grown(out: str, grid: tune_plan.Grid) -> tune_plan.Grid:
    """`grid` with the P and sizes its table already asks for beyond the plan's (a sweep resumed
    after densifying must ask for every recorded P and size)."""
    return with_values(grid, table_grid(out, grid.collective)) if grid.comm_sizes else grid


def p_costs(launches: Sequence, planned: int) -> dict[int, float]:
    """{P: seconds its planned launches (K <= `planned`, every run of them) took} of every P
    of a journal's launches ([journal.LaunchLine])."""
    costs: dict[int, float] = {}
    for x in launches:
        if x.k <= planned and x.mark.isdigit():
            costs[int(x.mark)] = costs.get(int(x.mark), 0.0) + x.wall_s
    return costs


def densified_s(launches: Sequence, grid: tune_plan.Grid) -> float:
    """Seconds densifying spent, of a journal's launches: the planned launches at P beyond the
    plan's grid, and the runs of a planned launch again (over new sizes)."""
    spent, seen = 0.0, set()
    for x in launches:
        if x.k <= grid.launches and x.mark.isdigit() and (
                int(x.mark) not in grid.comm_sizes or (x.mark, x.k) in seen):
            spent += x.wall_s
        seen.add((x.mark, x.k))
    return spent


def round_of(out: str, plan: tune_plan.TunePlan, grid: tune_plan.Grid, allowance_s: float
             ) -> tuple[tune_plan.Grid, list[int], list[int]]:
    """(the grid the collective's table asks for now, the P and the sizes of its next round
    within `allowance_s` less what its densifying spent): its table and journal read once."""
    table = table_io.read_table(layout.table(out, grid.collective))
    current = with_values(grid, _asked(table.sources[0].metadata))
    launches = refinement.launches(out, grid.collective)
    cost = RoundCost(p_costs(launches, grid.launches), cell_seconds(table), grid.launches,
                     estimate.startup(plan.launcher))
    candidates = ([p for p in grid.candidate_comm_sizes if p not in current.comm_sizes],
                  [m for m in grid.candidate_msg_sizes if m not in current.msg_sizes])
    return (current, *next_round(table, candidates, cost,
                                 allowance_s - densified_s(launches, grid)))


@dataclass(frozen=True)
class Allowance:
    """What a collective's densifying may spend, or why it gets nothing."""
    seconds: float = 0.0
    why: str = ""


def allowance(out: str, plan: tune_plan.TunePlan, grids: Sequence[tune_plan.Grid],
              index: int) -> Allowance:
    """The allowance of `grids[index]` (module docstring): the budget less every collective's
    coarse sweep and refinement and the densifying of those before it, shared by weight with
    the paired collectives from it on."""
    grid = grids[index]
    if grid.mode != "paired":
        return Allowance(why=f"measured {grid.mode}, not densified")
    if not grid.comm_sizes or not grid.candidate_comm_sizes:
        return Allowance(why="P given as --nodes/--ppn shapes or by the profile, not densified")
    if not (set(grid.candidate_comm_sizes) - set(grid.comm_sizes)
            or set(grid.candidate_msg_sizes) - set(grid.msg_sizes)):
        return Allowance(why="every P and size measured, nothing to densify")
    used = sum(refinement.coarse_seconds(out, g) for g in grids if g.mode != "paired")
    for i, g in enumerate(grids):
        if g.mode == "paired":
            launches = refinement.launches(out, g.collective)
            used += (sum(x.wall_s for x in launches)        # planned, refining, densifying
                     - (densified_s(launches, g) if i >= index else 0.0))
    weights = [profile_region.refinement_weight(plan, g.collective)
               for g in grids[index:] if g.mode == "paired"]
    share = weights[0] / sum(weights) if sum(weights) else 0.0
    seconds = (plan.budget_s - used) * share
    if seconds < refinement.MIN_SECONDS:
        return Allowance(why="no budget left to densify")
    return Allowance(seconds)
