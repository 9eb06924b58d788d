"""Statistics of a choice of methods, scored by core.maps.cell_cost (the one rule: penalty against
the fastest forced method measured at the cell, "defer" at the default's time).

Every chooser is scored by `score`: a tree (through its cell grid), the MPI's own decision (the
algorithm-0 rows), a model's choice, or the best of another launch.

For trees on their own map (in sample; paper tables 1-2) every measured cell with a reference
is scored, a choice not measured there at its imputed time (core.maps.cell_cost.IMPUTED) and counted
in `imputed_choices` (and `unmeasured_choices`); `partial_cells` counts the measured cells with
fewer than all methods measured, and `unscored_cells` the measured cells no time exists for
("defer" where the default is missing, or a cell where only the default was measured). Cells
where nothing was measured never count. Mean depth weights every grid cell equally (a uniform
distribution over the measured grid).
"""
import numpy as np

from collsel.core.maps.cell_cost import penalty_pct
from collsel.core.trees.tree import LEAF

WITHIN = 5.0     # percent: "close enough to the best" for the within-5 % counts


def score(chosen_time, reference):
    """Statistics of the penalties of a choice against the reference times
    (core.maps.cell_cost.reference_time), over the cells where both times are finite:
    cells, min, max, mean, median (percent; None without cells), picks_best, within_5pct."""
    chosen_time, reference = np.asarray(chosen_time, float), np.asarray(reference, float)
    scored = np.isfinite(chosen_time) & np.isfinite(reference)
    pen = penalty_pct(chosen_time[scored], reference[scored])
    picks_best = int((chosen_time[scored] <= reference[scored]).sum())
    out = {"cells": int(pen.size), "picks_best": picks_best,
           "within_5pct": int((pen <= WITHIN).sum())}
    if pen.size == 0:
        return {**out, "min": None, "max": None, "mean": None, "median": None}
    return {**out, "min": float(pen.min()), "max": float(pen.max()), "mean": float(pen.mean()),
            "median": float(np.median(pen))}


def prefixed(stats, prefix, keys=("min", "max", "mean", "median")):
    """`score` results under the names stats.json uses, e.g. penalty_mean."""
    return {f"{prefix}_{k}": stats[k] for k in keys}


def chosen_time(dmap, choice):
    """The measured time of the chosen method (an index grid) in every cell; NaN if unmeasured."""
    return np.take_along_axis(dmap.times, np.asarray(choice)[..., None], axis=-1)[..., 0]


def scored_time(dmap, choice):
    """The time the chosen method (an index grid) is scored at: measured, else imputed."""
    return np.take_along_axis(dmap.scored_times(), np.asarray(choice)[..., None], axis=-1)[..., 0]


def cell_choices(dmap, tree):
    """Method and leaf depth deciding each grid cell (evaluated at the cell's measured point)."""
    leaf = tree.leaf_grid(dmap.shape)
    return tree.method[leaf], tree.depth[leaf]


def tree_stats(dmap, tree, max_penalty=None):
    """Statistics of a tree on its map; with `max_penalty` (percent, the robust leaves' cap) also
    how many measured cells and leaves pay more than the cap."""
    choice, depth = cell_choices(dmap, tree)
    times = chosen_time(dmap, choice)
    scored = scored_time(dmap, choice)
    measured = dmap.measured
    leaves = tree.first_child == LEAF
    reference = dmap.reference_time
    overall = score(scored, reference)
    stats = {
        "max_depth": int(tree.depth[leaves].max()),
        "min_depth": int(tree.depth[leaves].min()),
        "mean_depth": float(depth.mean()),
        **prefixed(overall, "penalty"),
        "scored_cells": overall["cells"],
        "leaves": int(leaves.sum()),
        "nodes": int(tree.node_count),
        "unmeasured_choices": int((measured & ~np.isfinite(times)).sum()),
        "imputed_choices": int((measured & ~np.isfinite(times) & np.isfinite(scored)).sum()),
        "unscored_cells": int((measured & ~(np.isfinite(scored)
                                                  & np.isfinite(reference))).sum()),
        "partial_cells": int((measured & (dmap.candidates < len(dmap.methods))).sum()),
        "measured_cells": int(measured.sum()),
        "filled_cells": int((~measured).sum()),
    }
    if max_penalty is not None:
        over = measured & (np.nan_to_num(penalty_pct(scored, reference)) > max_penalty)
        stats["cells_over_cap"] = int(over.sum())
        stats["leaves_over_cap"] = int(np.unique(tree.leaf_grid(dmap.shape)[over]).size)
    stats.update(baseline_stats(dmap))
    return stats


def baseline_stats(dmap):
    """Penalty of the MPI's own decision (algorithm-0 rows) on the measured cells that have one;
    `baseline_missing_cells` counts the measured cells without one."""
    base = np.where(dmap.measured, dmap.baseline_time, np.nan)
    s = score(base, dmap.reference_time)
    return {"baseline_cells": s["cells"], **prefixed(s, "baseline_penalty"),
            "baseline_missing_cells": int((dmap.measured & ~np.isfinite(base)).sum())}
