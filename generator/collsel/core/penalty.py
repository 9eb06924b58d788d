"""Statistics and performance penalty of a tree against the exact decision map (paper tables 1-2).

Penalty of a cell = time(chosen method) / time(best method) - 1, in percent, over measured cells
only. A cell whose chosen method was never measured there has no penalty; such cells are counted
in `unmeasured_choices` instead of being scored as 0. Mean depth weights every grid cell equally
(a uniform distribution over the measured grid).
"""
import numpy as np

from collsel.core.tree import LEAF


def cell_choices(dmap, tree):
    """Method and leaf depth deciding each grid cell (evaluated at the cell's measured point)."""
    cells = np.indices(dmap.shape).reshape(len(dmap.shape), -1)
    leaf = tree.leaf_of_cells(cells).reshape(dmap.shape)
    return tree.method[leaf], tree.depth[leaf]


def penalties(dmap, choice):
    """Penalty (fraction) per measured cell where the chosen method was measured; and the count
    of measured cells whose chosen method was not."""
    chosen = np.take_along_axis(dmap.times, choice[..., None], axis=-1)[..., 0]
    scored = dmap.measured & np.isfinite(chosen)
    return chosen[scored] / dmap.best_time[scored] - 1.0, int((dmap.measured & ~scored).sum())


def summary(values_pct, prefix):
    if values_pct.size == 0:
        return {f"{prefix}_{k}": None for k in ("min", "max", "mean", "median")}
    return {f"{prefix}_min": float(values_pct.min()), f"{prefix}_max": float(values_pct.max()),
            f"{prefix}_mean": float(values_pct.mean()),
            f"{prefix}_median": float(np.median(values_pct))}


def tree_stats(dmap, tree):
    choice, depth = cell_choices(dmap, tree)
    pen, unmeasured = penalties(dmap, choice)
    leaves = tree.first_child == LEAF
    stats = {
        "max_depth": int(tree.depth[leaves].max()),
        "min_depth": int(tree.depth[leaves].min()),
        "mean_depth": float(depth.mean()),
        **summary(100.0 * pen, "penalty"),
        "leaves": int(leaves.sum()),
        "nodes": int(tree.node_count),
        "unmeasured_choices": unmeasured,
        "measured_cells": int(dmap.measured.sum()),
        "filled_cells": int((~dmap.measured).sum()),
    }
    stats.update(baseline_stats(dmap))
    return stats


def baseline_stats(dmap):
    """Penalty of Open MPI's own decision (algorithm-0 rows) on the measured cells that have one."""
    has = dmap.measured & np.isfinite(dmap.baseline_time)
    pen = 100.0 * (dmap.baseline_time[has] / dmap.best_time[has] - 1.0)
    return {"baseline_cells": int(has.sum()), **summary(pen, "baseline_penalty")}
