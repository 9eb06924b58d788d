"""What a third axis (e.g. processes per node) changes, and the same runs without it.

- `changes(dmap)`: of the (P, m) cells measured at two or more z values, how many have a
  different best method at some z, and how many change even by tie sets (no method lies in the
  tie set of every z value measured there: no single choice is statistically safe for all).
- `pooled(table, column)`: the z-oblivious view of the same runs: each (P, m, method)'s time is
  the mean over the column's values (what a user who ran at a mix of those values would see,
  one run of each). A tree built from it is the quadtree a ppn-blind tuner gives.
"""
import numpy as np


def changes(dmap):
    """{"cells": (P, m) cells measured at 2+ z values, "best_differs", "tie_sets_disjoint"}."""
    if len(dmap.axes) != 3:
        raise ValueError("changes() needs a map with a third axis")
    measured = dmap.measured                          # (P, m, z)
    several = measured.sum(axis=2) >= 2
    best = np.where(measured, dmap.best, -1)
    first = np.max(best, axis=2)                      # any measured z's best: all equal <=> same
    lowest = np.min(np.where(measured, best, np.iinfo(best.dtype).max), axis=2)
    differs = several & (first != lowest)
    # a method safe at every measured z: in the tie set wherever z was measured
    safe_everywhere = np.all(dmap.tied | ~measured[..., None], axis=2).any(axis=-1)
    disjoint = several & ~safe_everywhere
    return {"axis": dmap.axes[2].name, "cells": int(several.sum()),
            "best_differs": int(differs.sum()), "tie_sets_disjoint": int(disjoint.sum())}


def pooled(table, column):
    """`table` without `column` (and without per-row annotations): one row per (collective, P,
    m, method), its time the mean over the column's values. Rows keep the first origin."""
    keys = list(zip(table.collective.tolist(), table.comm_size.tolist(),
                    table.msg_size.tolist(), table.algorithm.tolist(), table.segsize.tolist(),
                    table.faninout.tolist()))
    index, first = {}, []
    group = np.empty(len(keys), dtype=np.int64)
    for i, key in enumerate(keys):
        k = index.setdefault(key, len(first))
        if k == len(first):
            first.append(i)
        group[i] = k
    sums = np.bincount(group, weights=table.time_us, minlength=len(first))
    counts = np.bincount(group, minlength=len(first))
    out = table.take(np.asarray(first, dtype=np.int64))
    out.extra = {}
    out.time_us = sums / counts
    return out
