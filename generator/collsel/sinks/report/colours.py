"""The colour of each method in a report's decision maps and legends.

One hue per algorithm, taken from the algorithm's id (so an algorithm keeps its hue in every
report of one MPI family and collective), and one shade per variant of it: the algorithm's
methods present in the report, ordered by segment size then fan-in/out, from dark to light.
"Defer to the MPI" (algorithm 0) is a neutral grey, no algorithm's hue.
"""
import colorsys

from collsel.core.mpi.algorithms import BASELINE_ALGORITHM, hier_parts

# matplotlib's tab10 without its grey (kept for "defer"): nine hues a reader tells apart, then
# three more for collectives or hierarchical methods beyond nine algorithms.
HUES = ("#1F77B4", "#FF7F0E", "#2CA02C", "#D62728", "#9467BD", "#8C564B", "#E377C2",
        "#BCBD22", "#17BECF", "#006D6F", "#6B3FA0", "#9C6B00")
DEFER_COLOUR = "#A6A6A6"
# Shades of one hue, darkest to lightest (HLS lightness); one variant alone takes MID.
DARK, LIGHT, MID = 0.30, 0.80, 0.47


def _hue_index(algorithm, algorithms):
    """Flat algorithms by id (1 -> the first hue); hierarchical ones after every flat id, in
    the order of their ids among the report's."""
    if hier_parts(algorithm) is None:
        return algorithm - 1
    flat = max([a for a in algorithms if hier_parts(a) is None], default=0)
    hier = sorted(a for a in set(algorithms) if hier_parts(a) is not None)
    return flat + hier.index(algorithm)


def method_colour(method, methods):
    """'#RRGGBB' of `method` (a core.mpi.algorithms.Method) in a report whose methods are `methods`.
    Deterministic: the same method list gives the same colours, in every panel of the report."""
    if method.algorithm == BASELINE_ALGORITHM:
        return DEFER_COLOUR
    hue = HUES[_hue_index(method.algorithm, [m.algorithm for m in methods]) % len(HUES)]
    variants = sorted(m for m in set(methods) if m.algorithm == method.algorithm)
    k, n = variants.index(method), len(variants)
    light = MID if n == 1 else DARK + (LIGHT - DARK) * k / (n - 1)
    r, g, b = (int(hue[i:i + 2], 16) / 255 for i in (1, 3, 5))
    h, _, s = colorsys.rgb_to_hls(r, g, b)
    r, g, b = colorsys.hls_to_rgb(h, light, s)
    return "#%02X%02X%02X" % tuple(round(255 * c) for c in (r, g, b))


def variant_label(method):
    """What tells a method from the other variants of its algorithm, for the legend."""
    parts = []
    if method.segsize:
        seg = method.segsize
        parts.append(f"seg {seg // 1024}K" if seg % 1024 == 0 else f"seg {seg} B")
    if method.faninout:
        parts.append(f"fan-in/out {method.faninout}")
    return ", ".join(parts) or "unsegmented"
