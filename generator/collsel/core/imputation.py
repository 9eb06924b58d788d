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


def axis_position(axis):
    """Interpolation coordinate of an axis' values: log2 of comm_size and msg_size (m = 0 at -1),
    the index for any third axis (only stage 3 crosses it)."""
    if axis.name in ("comm_size", "msg_size"):
        return np.log2(np.maximum(np.asarray(axis.values, dtype=float), 0.5))
    return np.arange(len(axis.values), dtype=float)


def _along(log_times, known, x, axis):
    """Stage 1/2: interpolate every line along `axis` that holds a measurement; NaN elsewhere."""
    lt = np.moveaxis(log_times, axis, -1)
    kn = np.moveaxis(known, axis, -1)
    out = np.full(lt.shape, np.nan)
    flat_lt, flat_kn = lt.reshape(-1, lt.shape[-1]), kn.reshape(-1, kn.shape[-1])
    flat_out = out.reshape(-1, out.shape[-1])
    for line in np.flatnonzero(flat_kn.any(axis=1)):
        k = flat_kn[line]
        flat_out[line] = np.interp(x, x[k], flat_lt[line, k])
    return np.moveaxis(out, -1, axis)


def impute(times, axes, skip=()):
    """(filled times, imputed flags): `times` (grid + (n_methods,), NaN = unmeasured) with every
    NaN of a method measured somewhere replaced by the module's rule."""
    filled = np.array(times, dtype=float)
    n_axes = len(axes)
    positions = [axis_position(a) for a in axes]
    for j in range(filled.shape[-1]):
        known = np.isfinite(times[..., j])
        if j in skip or not known.any() or known.all():
            continue
        log_t = np.log(np.where(known, times[..., j], 1.0))
        estimate = np.full(known.shape, np.nan)
        for axis in (1, 0) if n_axes >= 2 else (0,):
            stage = _along(log_t, known, positions[axis], axis)
            estimate = np.where(np.isnan(estimate), stage, estimate)
        est = np.where(known, times[..., j], np.exp(estimate))
        if np.isnan(est).any():
            from scipy import ndimage   # imported here: SciPy costs every command ~1 s to load
            nearest = ndimage.distance_transform_edt(~known, return_distances=False,
                                                     return_indices=True)
            est = np.where(np.isnan(est), times[..., j][tuple(nearest)], est)
        filled[..., j] = est
    return filled, np.isfinite(filled) & ~np.isfinite(times)
