"""The adaptive measuring strategy of a paired sweep (`--strategy adaptive`): racing, as F-Race
and successive halving do, on a grid measured once first.

coarse-refine (`collsel sweep`'s default strategy) measures every method of every cell in each of
its --launches planned launches, then --refine relaunches every method where a cell is undecided.
adaptive (`collsel tune`'s default, pipeline/tune/plan.py) plans one launch per P (tune: one
coarse launch of each paired grid, so its grid for the same budget share is about three times
denser), which gives a complete cell, hence a tree, after the first round;
then its refinement launches only the methods still in the race at the cells still open:

- a method is out of the race at a cell (dominated) when it is distinguishably slower than the
  cell's best: over 2+ launches shared with the best, the lower end of the paired 95 %
  interval of ln(t_method / t_best) is above 0 (sweep/ties.py's `tied` = 0); over a single
  shared launch, its median is DROP_RATIO times the best's or more and their within-launch CIs
  do not overlap (one launch has no across-launch spread to test, hence the margin);
- a cell is open while 2+ candidates (the baseline aside, as PairedPlan.decided) are in the
  race and they are not decided among themselves (ties.decided on the launches measuring all
  of them, 2 at least: one launch decides nothing but what DROP_RATIO drops);
- a refinement launch goes to the P with the most open cells (refine.next_target) and measures
  at those sizes the union of their methods still in the race (the baseline with them where it
  is still in the race: the tree's "defer" is scored at its time).

A dropped method keeps the rows of the launches that measured it: the tree sees it slower.
"""
import numpy as np

from collsel.core.mpi import algorithms
from collsel.sources.sweep import ties

STRATEGIES = ("coarse-refine", "adaptive")
DEFAULT = "coarse-refine"    # the sweep's (and an older tune.json's, which records none)
SEED_LAUNCHES = 1           # adaptive's planned launches per P (collsel tune's default for it)
# One launch drops a method this many times slower than the best. 1.25: in this machine's
# paired sweeps (bench-data/paired) the launch-to-launch change of a method's ratio to the best
# is within 10 % at most cells (the paired launch effect cancels), so 25 % leaves a margin.
DROP_RATIO = 1.25


def in_race(plan, shape, m):
    """The usable methods of a complete cell still in the race (module docstring), in the
    plan's method order."""
    methods, racing, _, _ = _race(plan, shape, m)
    return [x for x, keep in zip(methods, racing) if keep]


def _race(plan, shape, m):
    """(usable methods, (methods,) bool still in the race, medians, cis) of a complete cell:
    in_race and settled from one reading of its launches (PairedPlan.arrays)."""
    methods = plan.usable(shape, m)
    _, medians, cis = plan.arrays(shape, m)
    if len(methods) < 2:
        return methods, np.ones(len(methods), dtype=bool), medians, cis
    return methods, ~_dominated(medians, cis, plan.cell_seed(shape, m)), medians, cis


def _dominated(medians, cis, seed):
    """(methods,) bool: distinguishably slower than the best (module docstring)."""
    best, tied, _ = ties.verdict(medians, cis, seed)
    present = ~np.isnan(medians)
    pairs = (present & present[:, [best]]).sum(axis=0)
    with np.errstate(invalid="ignore"):
        ratio = np.nanmean(medians / medians[:, [best]], axis=0)
        apart = np.nanmin(medians - cis, axis=0) > np.nanmax((medians + cis)[:, [best]])
    dominated = np.where(pairs >= 2, tied == 0, (ratio >= DROP_RATIO) & apart)
    dominated[best] = False
    return dominated


def settled(plan, shape, m):
    """Whether a complete cell's race is over: one candidate left, or the candidates still in
    it decided among themselves (ties.decided) on the launches measuring them all."""
    methods, racing, medians, cis = _race(plan, shape, m)
    columns = [j for j, x in enumerate(methods)
               if racing[j] and x.algorithm != algorithms.BASELINE_ALGORITHM]
    if len(columns) < 2:
        return True
    medians, cis = medians[:, columns], cis[:, columns]
    shared = ~np.isnan(medians).any(axis=1)
    if shared.sum() < 2:
        return False
    return ties.decided(medians[shared], cis[shared], plan.cell_seed(shape, m),
                        plan.cfg.confidence, plan.cfg.equivalence)


def launch_methods(plan, shape, sizes):
    """The methods a refinement launch of `shape` at `sizes` measures: those still in the race
    at any of them, in the plan's method order."""
    wanted = {x for m in sizes for x in in_race(plan, shape, m)}
    return [x for x in plan.cfg.methods if x in wanted]
