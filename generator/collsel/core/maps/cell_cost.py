"""What a choice costs at a cell: the one rule behind every penalty collsel prints or selects by.

Penalty of a choice at a cell = its time / the reference time - 1, in percent. The reference is
the fastest *forced* method measured at that cell; "defer to the MPI" is scored at the MPI's
default's measured time, so the penalty is negative where the default beats every forced
method. This is the held-out protocol collsel is judged by (`collsel evaluate`,
docs/guide/evaluate.md), and the tree selection, the pruning path, the printed out-of-sample
figures and the in-sample statistics use it too, so what is chosen is what is reported.

A choice not measured at its cell has no time. Every caller names what it costs (`unmeasured`):
- UNSCORABLE: not scored, and counted (held-out figures: `collsel evaluate`, the out-of-sample
  lines of `build` and stats.json). The protocol's rule: dropping it silently would flatter a
  tree that picks methods nobody measured, charging it would invent a time.
- WORST: the cell's worst measured penalty (selecting and pruning trees: a candidate must never
  gain by choosing what was not measured, and every candidate must be scored on the same cells
  so their figures can be compared cell by cell).
- IMPUTED: the method's imputed time (core.maps.imputation) but never below the reference (in-sample
  statistics of a tree on its own map, where every measured cell is described).

Which cells count (`scored_cells`): where the table has a default at all, only the cells where
the default was measured, so a tree and the default are compared on the same cells; a table
without any default is scored on every cell with a reference.
"""
import numpy as np

UNSCORABLE, WORST, IMPUTED = "unscorable", "worst", "imputed"
POLICIES = (UNSCORABLE, WORST, IMPUTED)


def penalty_pct(chosen_time, reference_time):
    """Penalty in percent per cell; NaN where either time is missing."""
    chosen_time = np.asarray(chosen_time, float)
    reference_time = np.asarray(reference_time, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return 100.0 * (chosen_time / reference_time - 1.0)


def forced_only(times, defer_index):
    """`times` (grid + (methods,)) without the "defer" column (None: no such column)."""
    return times if defer_index is None else np.delete(times, defer_index, axis=-1)


def reference_time(times, defer_index):
    """Per cell, the fastest forced method measured there; NaN where none was."""
    forced = forced_only(times, defer_index)
    if forced.shape[-1] == 0:
        return np.full(times.shape[:-1], np.nan)
    best = np.min(np.where(np.isfinite(forced), forced, np.inf), axis=-1)
    return np.where(np.isfinite(best), best, np.nan)


def scored_cells(measured, default_time, table_has_default):
    """Bool grid: the cells a figure counts (module docstring)."""
    ok = np.asarray(measured, bool)
    return ok & np.isfinite(default_time) if table_has_default else ok


def method_costs(times, defer_index, unmeasured, estimated=None):
    """Penalty (%) of every method at every cell, shape times.shape; the "defer" column (which
    holds the default's times) included. An unmeasured method costs by the `unmeasured` policy
    (module docstring); IMPUTED needs the `estimated` times (same shape). Cells without a
    reference are NaN throughout."""
    if unmeasured not in POLICIES:
        raise ValueError(f"unmeasured policy {unmeasured!r} is not one of {POLICIES}")
    ref = reference_time(times, defer_index)[..., None]
    pen = penalty_pct(times, ref)
    missing = ~np.isfinite(pen) & np.isfinite(ref)
    if unmeasured == WORST:
        worst = np.max(np.where(np.isfinite(pen), pen, -np.inf), axis=-1, keepdims=True)
        pen = np.where(missing, worst, pen)
    elif unmeasured == IMPUTED:
        guess = penalty_pct(np.fmax(estimated, ref), ref)
        pen = np.where(missing, guess, pen)
    return pen
