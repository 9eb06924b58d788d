"""When a difference between two choices is below what the data can resolve.

A difference in one cell is below the data's resolution when it is under RESOLUTION_US, or when
both choices are in the cell's tie set (DecisionMap.tied: the methods the paired sweep, the
confidence intervals or a --tolerance could not tell from the best; core.maps.ties). The page then
shows the absolute time first ("0.3 µs (12 %)"), since the percentage alone overstates it.
"""
import numpy as np

RESOLUTION_US = 1.0    # microseconds: below this a timer-bound difference says little


def _in_tie_set(dmap, choice):
    return np.take_along_axis(dmap.tied, np.asarray(choice)[..., None], axis=-1)[..., 0]


def below(dmap, a_time, b_time, a_choice, b_choice=None):
    """Bool grid: |a - b| < RESOLUTION_US, or both choices in the tie set (b_choice None: the
    other choice's tie membership is unknown, only the absolute rule applies)."""
    with np.errstate(invalid="ignore"):
        small = np.abs(np.asarray(a_time, float) - np.asarray(b_time, float)) < RESOLUTION_US
    if b_choice is None:
        return small
    return small | (_in_tie_set(dmap, a_choice) & _in_tie_set(dmap, b_choice))


def excess(dmap, choice):
    """Absolute cost of a choice against the best on the measured cells where both are
    measured: mean excess in µs, and how many of the cells that pay a penalty pay one below the
    data's resolution."""
    chosen = np.take_along_axis(dmap.times, np.asarray(choice)[..., None], axis=-1)[..., 0]
    scored = dmap.measured & np.isfinite(chosen)
    extra = (chosen - dmap.best_time)[scored]
    paying = scored & (chosen > dmap.best_time)
    unresolved = paying & below(dmap, chosen, dmap.best_time, choice, dmap.best)
    return {"excess_us_mean": float(extra.mean()) if extra.size else None,
            "penalised_cells": int(paying.sum()),
            "penalised_below_resolution": int(unresolved.sum())}
