"""Tie sets: per cell, the measured methods not distinguishable from the cell's best.

For method j and the cell's best (fastest measured) method b, j is tied with b when

- the table's `tied` column holds 0 or 1 for j's row: that value (the paired sweep's verdict,
  its rule in the table's `# tie_rule=` metadata); else
- both rows carry `ci_halfwidth_us`: the confidence intervals overlap,
  time_j - ci_j <= time_b + ci_b; else
- not tied;

or (union with the above) a user tolerance PCT is given and time_j <= (1 + PCT/100) * time_b.
The best itself is always in its cell's tie set; unmeasured (cell, method) pairs and cells with
nothing measured never are. Without any of these sources the tie set is just the best, so a
tie-aware rule decides as the plain fastest-method rule does.

The cell's decision confidence is the largest `p_best` of its rows (NaN without `p_best`).
"""
import numpy as np


def tie_sets(times, best, tied_column=None, ci=None, tolerance=None):
    """Bool grid + (n_methods,). `times` NaN where unmeasured; `best` the int grid of fastest
    methods; `tied_column` and `ci` float arrays shaped like `times`, NaN where unknown."""
    measured = np.isfinite(times)
    best_time = np.take_along_axis(times, best[..., None], axis=-1)
    tied = np.zeros(times.shape, dtype=bool)
    known = np.zeros(times.shape, dtype=bool)
    if tied_column is not None:
        known = np.isfinite(tied_column)
        tied = known & (tied_column == 1)
    if ci is not None:
        best_ci = np.take_along_axis(ci, best[..., None], axis=-1)
        with np.errstate(invalid="ignore"):
            overlap = times - ci <= best_time + best_ci
        tied |= ~known & np.isfinite(ci) & np.isfinite(best_ci) & overlap
    if tolerance is not None:
        with np.errstate(invalid="ignore"):
            tied |= times <= (1.0 + tolerance / 100.0) * best_time
    tied |= np.arange(times.shape[-1]) == best[..., None]
    return tied & measured


def confidence(p_best):
    """Largest p_best per cell; NaN where no row of the cell has one."""
    if p_best is None:
        return None
    has = np.isfinite(p_best).any(axis=-1)
    return np.where(has, np.nanmax(np.where(np.isfinite(p_best), p_best, -np.inf), axis=-1),
                    np.nan)
