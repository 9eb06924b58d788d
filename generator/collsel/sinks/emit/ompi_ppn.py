"""The third axis `ppn` (processes per node) in the Open MPI targets.

Every Open MPI target takes a 2-axis tree (P, m), or a 3-axis tree whose third axis is a
numeric column named `ppn` (`collsel build TABLE --z ppn`); any other third axis is refused in
one line, since Open MPI has nothing to compare it with. What each target makes of ppn:

- `ompi-dec-fixed` computes ppn at run time from the communicator's locality, once per
  communicator (templates/ompi_dec_fixed.c.j2 says how), and decides exactly as the tree.
- `ompi-json` (Open MPI 6 / main) has `comm_rank_distribution`: "single-node" rules (every rank
  on one node: ppn = P) and "one-per-node" rules (ppn = 1) decide as the tree; other
  communicators (several nodes with several ranks on some node: 2 <= ppn <= P/2 when the mapping
  is even, and every uneven mapping) cannot be told apart by ppn and take the projection below
  over the tree's ppn values in that range.
- `ompi-rules` (classic, Open MPI 4.1 / 5.0) has no way to express ppn at all: the projection
  over every feasible ppn value.

The projection (one method per (P, m) cell of the tree): over the tree's ppn values that are
feasible at the cell's P (1 <= ppn <= P: a node holds at least one rank) and inside the target's
region, the method the tree picks at the most of them, so that the file decides as the tree on
as many (P, m, ppn) grid points as one method per (P, m) can; ties go to the method the tree
picks at the largest of those ppn values (jobs usually fill their nodes, so the largest measured
ppn is the nearest to how a rules file is used). Without times this is all a tree can say; what
the lost points cost in time needs the measurements: `collsel check-rules RULES --table TABLE
--z ppn` scores a rules file on a table, (P, m, ppn) cell by cell.

Emitters take trees only (no table): the loss they report is counted in grid points, over the
tree's (P, m, ppn) grid points with ppn <= P.
"""
import numpy as np

from collsel.core.maps.decision_map import CATEGORY
from collsel.errors import InputError
from collsel.sinks.emit import text

PPN = "ppn"


def ppn_axis(loaded, target, name=""):
    """The tree's ppn axis, None for a 2-axis tree; any other third axis is refused."""
    if len(loaded.axes) == 2:
        return None
    where = f"{name}: " if name else ""
    z = loaded.axes[2]
    if len(loaded.axes) != 3 or z.name != PPN or z.kind == CATEGORY:
        what = (f"{len(loaded.axes)} axes" if len(loaded.axes) != 3 else
                f"a category third axis '{PPN}'" if z.name == PPN else "a third axis")
        raise InputError(f"{where}--target {target}: {what} "
                         f"({_axis_name(loaded)}); Open MPI can only be given a numeric "
                         f"'{PPN}' (processes per node) as third axis: build with --z {PPN} "
                         "or a 2-D tree")
    return z


def _axis_name(loaded):
    """The third axis' name for a message: printable and bounded (free text from a table)."""
    return "'" + text.line_comment(loaded.axes[-1].name)[:40] + "'"


def grid(loaded):
    """Method index per (P cell, m cell[, ppn cell]) of the tree."""
    return loaded.tree.method_grid(tuple(len(a.values) for a in loaded.axes))


def feasible(loaded):
    """bool (P cells, ppn cells): the grid's ppn value is a possible one at the grid's P."""
    p = np.asarray(loaded.axes[0].values, dtype=np.int64)[:, None]
    z = np.asarray(loaded.axes[2].values, dtype=np.int64)[None, :]
    return (z >= 1) & (z <= p)


def several_nodes_several_ranks(loaded):
    """bool (P cells, ppn cells): 2 <= ppn <= P / 2 (what a JSON file's "any" rules get)."""
    p = np.asarray(loaded.axes[0].values, dtype=np.int64)[:, None]
    z = np.asarray(loaded.axes[2].values, dtype=np.int64)[None, :]
    return (z >= 2) & (z <= p // 2)          # not 2 * z: a ppn near 2^63 overflows


def project(loaded, region=None):
    """Method index per (P cell, m cell): the projection (module docstring) over the ppn cells
    `region` (bool (P cells, ppn cells), default every feasible one) allows; a P cell the region
    leaves empty uses every feasible ppn value, or every one when none is feasible."""
    methods = grid(loaded)                                   # (P, m, z)
    allowed = feasible(loaded) if region is None else region & feasible(loaded)
    for fallback in (feasible(loaded), np.ones_like(allowed)):
        empty = ~allowed.any(axis=1)
        allowed[empty] = fallback[empty]
    n = len(loaded.methods)
    mask = np.broadcast_to(allowed[:, None, :], methods.shape)
    counts = np.zeros(methods.shape[:2] + (n,), dtype=np.int64)
    p_idx, m_idx, _ = np.nonzero(mask)
    np.add.at(counts, (p_idx, m_idx, methods[mask]), 1)
    most = counts.max(axis=-1)
    # among the ppn cells whose method has the most votes, the largest ppn
    votes = np.take_along_axis(counts, methods, axis=-1)     # (P, m, z): votes of that z's method
    top = mask & (votes == most[..., None])
    last = methods.shape[2] - 1 - np.argmax(top[..., ::-1], axis=-1)
    return np.take_along_axis(methods, last[..., None], axis=-1)[..., 0]


def varying_cells(loaded):
    """(P, m) cells where the tree's method changes with ppn over the feasible ppn values."""
    methods = grid(loaded)
    mask = np.broadcast_to(feasible(loaded)[:, None, :], methods.shape)
    hi = np.where(mask, methods, -1).max(axis=-1)
    lo = np.where(mask, methods, np.iinfo(methods.dtype).max).min(axis=-1)
    return int(((hi != lo) & mask.any(axis=-1)).sum())


def grid_points(loaded):
    """Every (P, m[, ppn]) of the tree's grid as Python ints (m may exceed an int64); a 3-axis
    tree's points only where ppn <= P (and >= 1)."""
    axes = loaded.axes
    idx = np.indices(tuple(len(a.values) for a in axes)).reshape(len(axes), -1)
    if len(axes) == 3:
        keep = feasible(loaded)[idx[0], idx[2]]
        idx = idx[:, keep]
    return [[axes[d].values[i] for i in idx[d].tolist()] for d in range(len(axes))]


def single_node_ranges(loaded):
    """[(first P, P cell, ppn cell)] of the P ranges, from P = 1 up, on each of which a
    single-node communicator (ppn = P) stays in one P cell and one ppn cell of the tree."""
    p_axis, z_axis = loaded.axes[0], loaded.axes[2]
    starts = sorted({1} | {int(c) for c in p_axis.cuts} |
                    {int(c) for c in z_axis.cuts if 1 < c <= 2**31 - 1})
    return [(start, p_axis.cell_of(start), z_axis.cell_of(start)) for start in starts]
