"""How `collsel tune` shares what its budget has left among the collectives' refinements.

The plan (pipeline/tune/plan.py) only shows each collective's part in proportion to its coarse
cost; the real part is decided when its turn comes, from what the sweeps' journals say was
spent: the budget less the coarse sweeps' wall time and the refinements before it, shared by it
and the paired collectives after it in proportion to their undecided cells x methods (weighted
by time share under --profile). A resumed tune reads the same journals, so a refinement resumed
after a kill is shared by the counts its journal holds then.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from collsel.core.io import csvfile
from collsel.sources.sweep import journal, refine
from collsel.pipeline.tune import layout, plan as tune_plan, profile_region

# A part under this many seconds is not worth a launch.
MIN_SECONDS = 1
# The share of its part a collective's refinement leaves to densifying after it, where
# densifying can add P (pipeline/tune/densify.py): the refinement spends on ties, methods within
# a few % of each other at measured cells, while an unmeasured P between two measured P that
# decide differently can cost tens of %. Live at 10 % (docs/measurements.md, "The refinement
# within its part"), refinement took all that the coarse sweeps left and allreduce's tree on
# P = 2, 4, 8, 16 was 25 % off at P = 3 on a fresh sweep; the same table with P = 3 scored
# 2.04 % against 5.55 %; with this reserve that tune's tree scored 2.03 %. What densifying does
# not spend is not spent.
DENSIFY_RESERVE = 0.5


@dataclass(frozen=True)
class Refinement:
    """The seconds a collective's refinement gets, or None and why it gets none."""
    seconds: float | None = None
    why: str = ""


def launches(out: str, collective: str) -> list:
    """The launches ([journal.LaunchLine]) of a collective's sweep journal in tune DIR `out`."""
    return journal.read_launches(journal.journal_path(layout.table(out, collective)))


def coarse_seconds(out: str, grid: tune_plan.Grid) -> float:
    """The wall time of a collective's coarse sweep: its planned launches' (the paired
    journal's launch lines), or a per-method sweep's runs (its table's run.N.wall_s: its
    journal has no launch lines)."""
    if grid.mode == "paired":
        return refine.planned_seconds(launches(out, grid.collective), grid.launches)
    meta = csvfile.read(layout.table(out, grid.collective), "a sweep table").metadata
    return sum(float(value) for key, value in meta.items()
               if key.startswith("run.") and key.endswith(".wall_s"))


def share(out: str, plan: tune_plan.TunePlan, grids: Sequence[tune_plan.Grid],
          index: int) -> Refinement:
    """The refinement of collective `grids[index]` (tune.plan's grids, in the tune's order):
    its part of what the budget has left (less DENSIFY_RESERVE of it where densifying can add
    P), or none when it is not measured paired (no tie test), when its cells are all decided,
    or when its part is under MIN_SECONDS."""
    grid = grids[index]
    if grid.mode != "paired":
        return Refinement(why=f"measured {grid.mode}, not refined")
    used = sum(coarse_seconds(out, g) for g in grids)
    used += sum(refine.spent(launches(out, g.collective), g.launches)[1]
                for g in grids[:index] if g.mode == "paired")
    need = {g.collective: profile_region.refinement_weight(plan, g.collective)
            * g.methods * sum(map(len, refine.undecided_in_table(
                layout.table(out, g.collective)).values()))
            for g in grids[index:] if g.mode == "paired"}
    if not need[grid.collective]:
        return Refinement(why="every cell decided, nothing to refine")
    left = (plan.budget_s - used) * need[grid.collective] / sum(need.values())
    if not grid.densify_why_not():
        left *= 1 - DENSIFY_RESERVE
    if left < MIN_SECONDS:
        return Refinement(why="no budget left to refine")
    return Refinement(left)
