"""Times of unmeasured (cell, method) pairs, estimated from the same method's measurements.

The rule, per method, using only that method's measured times (never an earlier estimate):

1. along msg_size, within the same comm_size (and the same z): linear interpolation of log(time)
   against log2(m) (m = 0 placed at log2 m = -1) between the nearest measured sizes below and
   above; beyond the measured ends, the nearest end's time (no extrapolation of the slope);
2. where the method has no measurement in that comm_size row: the same along comm_size, within
   the same msg_size (and z), against log2(P);
3. where neither line holds a measurement: the time of the nearest measured cell of the method
   in grid-index space (Euclidean distance over all axes; SciPy's distance transform breaks ties
   deterministically).

A method measured nowhere on the grid, and any method in `skip`, stays NaN. The result never
replaces a measured time; `imputed` marks exactly the pairs this module filled.
"""
import numpy as np


def log2_position(values):
    """Interpolation coordinate of P or m values: log2 (m = 0 at -1)."""
    return np.log2(np.maximum(np.asarray(values, dtype=float), 0.5))


def axis_position(axis):
    """Interpolation coordinate of an axis' values: log2 of comm_size and msg_size
    (log2_position), the index for any third axis (only stage 3 crosses it)."""
    if axis.name in ("comm_size", "msg_size"):
        return log2_position(axis.values)
    return np.arange(len(axis.values), dtype=float)


def _along(log_times, known, x, axis):
    """Stage 1/2: interpolate every line along `axis` that holds a measurement; NaN elsewhere.
    Every line at once (any other axes, the methods too), with np.interp's arithmetic, so its
    results to the bit: between the nearest known points below and above, slope x (x - x
    below) + value below; at a known point or beyond the ends, that point's or the end's."""
    lt = np.moveaxis(log_times, axis, -1)
    kn = np.moveaxis(known, axis, -1)
    n = lt.shape[-1]
    index = np.broadcast_to(np.arange(n), kn.shape)
    below = np.maximum.accumulate(np.where(kn, index, -1), axis=-1)
    above = np.flip(np.minimum.accumulate(np.flip(np.where(kn, index, n), -1), axis=-1), -1)
    first, last = above[..., :1], below[..., -1:]
    lo = np.where(below < 0, first, below)
    hi = np.where(above >= n, last, above)
    lo, hi = np.where(lo >= n, 0, lo), np.where(hi < 0, 0, hi)       # lines with no point
    y_lo, y_hi = (np.take_along_axis(lt, k, -1) for k in (lo, hi))
    x_lo, x_hi = x[lo], x[hi]
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = (y_hi - y_lo) / (x_hi - x_lo)
        out = np.where(lo == hi, y_lo, slope * (x - x_lo) + y_lo)
    out = np.where(kn.any(axis=-1, keepdims=True), out, np.nan)
    return np.moveaxis(out, -1, axis)


def interpolate_along(times, axes, axis):
    """`times` with every NaN on a line along `axis` that holds a time replaced by stage 1/2's
    interpolation along that axis alone (what impute gives where every other line is already
    complete: core.maps.interpolated's second pass)."""
    known = np.isfinite(times)
    stage = _along(np.log(np.where(known, times, 1.0)), known, axis_position(axes[axis]), axis)
    return np.where(known, times, np.exp(stage))


def impute(times, axes, skip=()):
    """(filled times, imputed flags): `times` (grid + (n_methods,), NaN = unmeasured) with every
    NaN of a method measured somewhere replaced by the module's rule. Stages 1 and 2 run for
    every method at once (the methods are one more axis no line crosses)."""
    filled = np.array(times, dtype=float)
    n_axes = len(axes)
    positions = [axis_position(a) for a in axes]
    known = np.isfinite(times)
    some = known.reshape(-1, known.shape[-1]).any(axis=0)
    every = known.reshape(-1, known.shape[-1]).all(axis=0)
    todo = [j for j in range(filled.shape[-1]) if j not in skip and some[j] and not every[j]]
    if not todo:
        return filled, np.isfinite(filled) & ~np.isfinite(times)
    kn, raw = known[..., todo], times[..., todo]
    log_t = np.log(np.where(kn, raw, 1.0))
    estimate = np.full(kn.shape, np.nan)
    for axis in (1, 0) if n_axes >= 2 else (0,):
        stage = _along(log_t, kn, positions[axis], axis)
        estimate = np.where(np.isnan(estimate), stage, estimate)
        if not np.isnan(estimate).any():    # every line held a measurement: nothing for stage 2
            break
    est = np.where(kn, raw, np.exp(estimate))
    for k in np.flatnonzero(np.isnan(est).reshape(-1, len(todo)).any(axis=0)):
        from scipy import ndimage   # imported here: SciPy costs every command ~1 s to load
        nearest = ndimage.distance_transform_edt(~kn[..., k], return_distances=False,
                                                 return_indices=True)
        est[..., k] = np.where(np.isnan(est[..., k]), raw[..., k][tuple(nearest)], est[..., k])
    filled[..., todo] = est
    return filled, np.isfinite(filled) & ~np.isfinite(times)
