"""Values inserted between the measured P and m, timed by each method's interpolated time
(`collsel build --interpolate`; core.maps.decision_map.interpolated_map makes the map).

Between two measured values of an axis a plain map has nothing: a tree cuts the gap at its
midpoint, so the lower half takes the lower value's decision and the upper half the upper one's,
wherever the methods' times actually cross. With the inserted values (VIRTUAL_PER_GAP per gap,
evenly spaced in log2 of the value; every integer of a smaller gap) decided by the method whose
time interpolated from its own measurements is least (core.maps.imputation: log time linear in
log2 m along m, then in log2 P along P), a switch between two methods falls where their
interpolated times cross, to a fraction of the gap.

The inserted cells are unmeasured (times NaN): penalties, the leaf rules' sums and tie sets still
count the measured cells alone; only the decision grid, which a tree's splits and majority
leaves read, is denser.
"""
import numpy as np

from collsel.core.maps import imputation

VIRTUAL_PER_GAP = 3


def virtual_values(values, per_gap=VIRTUAL_PER_GAP) -> list[int]:
    """Integers strictly inside each gap of the sorted `values`: every one where a gap holds no
    more than `per_gap`, else `per_gap` of them evenly spaced in log2 (rounded)."""
    out: list[int] = []
    for a, b in zip(values[:-1], values[1:]):
        if b - a - 1 <= per_gap:
            out += range(a + 1, b)
            continue
        la, lb = imputation.log2_position([a, b]).tolist()      # the imputation's coordinate
        picks = {int(round(2 ** (la + (lb - la) * j / (per_gap + 1))))
                 for j in range(1, per_gap + 1)}
        out += sorted(v for v in picks if a < v < b)
    return out


def _spread(array, axis, where, size, fill):
    """`array` placed at positions `where` of a longer `axis` of `size` (the rest `fill`)."""
    shape = list(array.shape)
    shape[axis] = size
    out = np.full(shape, fill, dtype=array.dtype)
    index = [slice(None)] * array.ndim
    index[axis] = where
    out[tuple(index)] = array
    return out


def with_gaps(axes, times, base, tied, make_axis):
    """(axes, times, base, tied, guess) with the virtual values inserted on P and m (axes 0
    and 1; `make_axis(name, kind, values)` makes an axis): the measured arrays spread onto the
    longer axes (NaN, False at the inserted values), and `guess`, every cell's method with the
    least interpolated time (-1 where no method has one). None when no gap holds an integer."""
    axes = list(axes)
    estimate = times
    # m first, then P: an inserted P row is interpolated along P from the measured rows, whose
    # inserted m cells the first pass filled, so no inserted cell is left to the nearest fill
    complete = False
    for axis in (1, 0):
        old = axes[axis]
        extra = virtual_values(old.values)
        if not extra:
            continue
        values = sorted(set(old.values) | set(extra))
        where = np.searchsorted(values, old.values)
        times, estimate, base = (_spread(a, axis, where, len(values), np.nan)
                                 for a in (times, estimate, base))
        tied = _spread(tied, axis, where, len(values), False)
        axes[axis] = make_axis(old.name, old.kind, values)
        # after a first pass every method measured anywhere has a time in every measured row,
        # so the inserted rows need only the interpolation along this axis (impute's result)
        estimate = (imputation.interpolate_along(estimate, axes, axis) if complete
                    else imputation.impute(estimate, axes)[0])
        complete = True
    if not complete:
        return None
    known = np.isfinite(estimate)
    guess = np.where(known.any(axis=-1),
                     np.argmin(np.where(known, estimate, np.inf), axis=-1), -1)
    return axes, times, base, tied, guess
