"""`collsel tune`'s last measuring stage: what the budget has left after the refinement goes to
new P where the decisions change (issue 40's coarse-to-fine in P).

The coarse grid thins P by octaves; the tree decides an unmeasured P by the nearer measured one.
Where two neighbouring measured P make the same decision at every size, a P between them would
most likely make it too; where they differ, the P at which the decision changes is unknown, and
the tree may be wrong on every P between them. So a round measures, for every neighbouring pair
(P_lo, P_hi) of the measured P whose decisions differ, the candidate P nearest their geometric
midpoint: a bisection of the gap, one P per gap per round. Candidates are the P the coarse grid
was thinned from (Grid.candidate_comm_sizes: --comm-sizes or the defaults live, the recorded P in
a replay). The gaps are ranked by what is at stake there: summed over the sizes where the two
decisions differ, the larger of what each side's choice costs at the other side
(core.maps.cell_cost, unmeasured choices at the cell's worst); a round takes the gaps most at
stake first, each the allowance still pays for, a new P estimated at what the dearer of its
gap's two P cost to measure (the journal's launches). Rounds go on
until no gap with a candidate changes decision or the allowance is spent. Without recorded noise
every coarse cell is decided at once and the refinement spends nothing: without this stage
such a tune left most of its budget unspent whatever it was given.

The allowance: collectives in turn (the tune's order), each given what the budget has left
before its densifying, shared equally (x its --profile time share) with the paired collectives
after it. What a collective spent here is read from its journal (the launches at P beyond its
plan's grid), so a tune resumed after a kill gives each collective the same allowance and, a
round's P recorded in the table's grid before it is measured, completes the same rounds.
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
from collsel.sources.sweep.resume import parse_options


@dataclass(frozen=True)
class Gap:
    """Two neighbouring measured P whose decisions differ, and what is at stake between them
    (percentage points summed over the sizes where they differ)."""
    low: int
    high: int
    stake: float


def changing_gaps(table) -> list[Gap]:
    """The neighbouring measured P (a PerfTable's) whose decisions differ at some size, most at
    stake first (on equal stakes the smaller P first)."""
    dm = decision_map.build_map(table)
    if len(dm.axes[0].values) < 2:
        return []
    costs = cell_cost.method_costs(dm.times, dm.defer_index, cell_cost.WORST)
    best = dm.best
    low, high = best[:-1], best[1:]                     # (gaps, sizes) decisions either side
    # what the low side's choice costs at the high P, and the high side's at the low P
    up = np.take_along_axis(costs[1:], low[..., None], axis=-1)[..., 0]
    down = np.take_along_axis(costs[:-1], high[..., None], axis=-1)[..., 0]
    differ = (low != high) & dm.measured[:-1] & dm.measured[1:]
    stake = np.where(differ, np.fmax(np.nan_to_num(up, nan=0.0), np.nan_to_num(down, nan=0.0)),
                     0.0).sum(axis=1)
    ps = dm.axes[0].values
    gaps = [Gap(ps[i], ps[i + 1], float(stake[i])) for i in np.flatnonzero(differ.any(axis=1))]
    return sorted(gaps, key=lambda g: (-g.stake, g.low))


def midpoint(gap: Gap, candidates: Sequence[int]) -> int | None:
    """The candidate P strictly inside the gap nearest its geometric midpoint (the smaller on
    equal distance), or None when there is none."""
    inside = [p for p in candidates if gap.low < p < gap.high]
    centre = math.log2(gap.low * gap.high) / 2
    return min(inside, key=lambda p: (abs(math.log2(p) - centre), p), default=None)


def next_round(table, candidates: Sequence[int], p_costs: dict[int, float],
               left_s: float) -> list[int]:
    """The P of the next round (ascending): the midpoint of each changing gap that has a
    candidate, most at stake first, each if `left_s` still pays for it, estimated at what the
    dearer of its gap's two P cost (`p_costs`: seconds per measured P; a collective's cost
    grows with P)."""
    chosen = []
    for gap in changing_gaps(table):
        p = midpoint(gap, candidates)
        cost = max(p_costs.get(gap.low, 0.0), p_costs.get(gap.high, 0.0))
        if p is not None and cost <= left_s:
            chosen.append(p)
            left_s -= cost
    return sorted(chosen)


def _asked(metadata: dict) -> tuple[int, ...]:
    """The P a sweep table's metadata asks for (its last `# options=` line)."""
    text = parse_options(metadata.get("options", "")).get("--comm-sizes", "")
    return tuple(sorted({int(x) for x in text.split(",") if x}))


def table_comm_sizes(out: str, collective: str) -> tuple[int, ...]:
    """The P the collective's sweep table asks for: the plan's grid and every P a densifying
    round added; () when the table does not exist yet."""
    path = layout.table(out, collective)
    if not os.path.exists(path):
        return ()
    return _asked(csvfile.read(path, "a sweep table").metadata)


def _with(grid: tune_plan.Grid, asked: Sequence[int]) -> tune_plan.Grid:
    ps = tuple(sorted(set(grid.comm_sizes) | set(asked)))
    return grid if ps == grid.comm_sizes else replace(grid, comm_sizes=ps)


def grown(out: str, grid: tune_plan.Grid) -> tune_plan.Grid:
    """`grid` with the P its table already asks for beyond the plan's (a sweep resumed after
    densifying must ask for every recorded P)."""
    return _with(grid, table_comm_sizes(out, grid.collective)) if grid.comm_sizes else grid


def p_costs(launches: Sequence, planned: int) -> dict[int, float]:
    """{P: seconds its planned launches (K <= `planned`) took} of every P of a journal's
    launches ([journal.LaunchLine])."""
    costs: dict[int, float] = {}
    for x in launches:
        if x.k <= planned and x.mark.isdigit():
            costs[int(x.mark)] = costs.get(int(x.mark), 0.0) + x.wall_s
    return costs


def _added(costs: dict[int, float], grid: tune_plan.Grid) -> float:
    """Seconds of the P beyond the plan's grid (what its densifying spent), of `p_costs`."""
    return sum(wall for p, wall in costs.items() if p not in grid.comm_sizes)


def round_of(out: str, grid: tune_plan.Grid, allowance_s: float
             ) -> tuple[tune_plan.Grid, list[int]]:
    """(the grid the collective's table asks for now, the P of its next round within
    `allowance_s` less what its densifying spent): its table and journal read once."""
    table = table_io.read_table(layout.table(out, grid.collective))
    current = _with(grid, _asked(table.sources[0].metadata))
    costs = p_costs(refinement.launches(out, grid.collective), grid.launches)
    candidates = [p for p in grid.candidate_comm_sizes if p not in current.comm_sizes]
    return current, next_round(table, candidates, costs, allowance_s - _added(costs, grid))


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
    why_not = grid.densify_why_not()
    if why_not:
        return Allowance(why=why_not)
    used = sum(refinement.coarse_seconds(out, g) for g in grids if g.mode != "paired")
    for i, g in enumerate(grids):
        if g.mode == "paired":
            launches = refinement.launches(out, g.collective)
            used += sum(x.wall_s for x in launches)     # planned (added P too) and refining
            if i >= index:
                used -= _added(p_costs(launches, g.launches), g)
    weights = [profile_region.refinement_weight(plan, g.collective)
               for g in grids[index:] if g.mode == "paired"]
    share = weights[0] / sum(weights) if sum(weights) else 0.0
    seconds = (plan.budget_s - used) * share
    if seconds < refinement.MIN_SECONDS:
        return Allowance(why="no budget left to densify")
    return Allowance(seconds)
