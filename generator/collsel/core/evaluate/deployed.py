"""A deployed tree scored on fresh runs, beside the MPI's default and other selections (peers).

Each fresh table is mapped on its own; on its measured cells the tree decides by value
(core.evaluate.out_of_sample.deployed_times: its cuts, `beyond`, "defer" at the fresh algorithm-0
time), and every choice is scored by core.trees.penalty against the fresh cell's best measured
method. A peer is another selection measured on the same grid as algorithm-0 rows only (e.g. a sweep
of algorithm 0 under Intel MPI's tuning file): its time at each fresh cell it has is scored against
the same best, so a peer can be negative where it beat every method the fresh sweep forced.
"""
import numpy as np

from collsel.core.evaluate import out_of_sample
from collsel.core.maps import decision_map
from collsel.core.mpi import algorithms
from collsel.core.trees import penalty
from collsel.errors import InputError

FIGURES = ("cells", "mean", "median", "max")


def check_tree_fits(loaded, tree_path, table):
    """Refuse scoring a tree on a table of another collective or algorithm family: its method
    ids would name other algorithms."""
    collective = table.collective[0] if len(table) else None
    if (loaded.collective, loaded.family) != (collective, table.family):
        files = ", ".join(s.path for s in table.sources)
        raise InputError(f"{tree_path}: the tree decides {loaded.family} {loaded.collective}, but "
                         f"{files} holds {table.family} {collective}: score a tree on fresh "
                         "tables of its own MPI family and collective")


def check_axes_fit(loaded, tree_path, test):
    """Refuse a fresh map whose axes are not the tree's (a third axis given or missing)."""
    have, want = [a.name for a in test.axes], [a.name for a in loaded.axes]
    if have != want:
        fix = f"give --z {want[2]}" if len(want) == 3 else "drop --z"
        raise InputError(f"{tree_path}: the tree decides on {', '.join(want)}, the fresh tables "
                         f"are mapped on {', '.join(have)}: {fix}")


def baseline_rows(table, collective, path):
    """The algorithm-0 rows of a peer table's collective; refused when there are none."""
    rows = table.take((table.collective == collective)
                      & (table.algorithm == algorithms.BASELINE_ALGORITHM))
    if not len(rows):
        raise InputError(f"{path}: no algorithm-0 rows of {collective}: a peer table holds the "
                         "other selection's times as algorithm 0 (e.g. a sweep with --algorithms "
                         "0 run under that selection's file)")
    return rows


def peer_times(rows, test, z_column=None):
    """The least peer time (algorithm-0 rows) on each cell of map `test`'s grid, NaN where the
    peer has none."""
    z_raw = rows.column(z_column).tolist() if z_column else None
    coords = decision_map.cells_of_rows(rows, test.axes, z_raw)
    on_grid = np.flatnonzero(np.all([c >= 0 for c in coords], axis=0))
    grid = np.full(test.shape, np.inf)
    np.minimum.at(grid, tuple(c[on_grid] for c in coords), rows.time_us[on_grid])
    return np.where(np.isinf(grid), np.nan, grid)


def score_deployed(loaded, tree_path, fresh_tables, settings, peers=None):
    """{"tree", "default", "peers": {name: figures}}: penalty figures (cells, mean, median,
    max) pooled over the measured cells of every fresh table; `peers` {name: algorithm-0
    rows}. The tree's figures also count `unscored_choices` (a method its fresh cell lacks)."""
    peers = peers or {}
    parts = {"tree": [], "default": [], "best": [], **{("peer", n): [] for n in peers}}
    for table in fresh_tables:
        test = settings.build(table)
        check_axes_fit(loaded, tree_path, test)
        chosen, best, base, flat = out_of_sample.deployed_times(loaded, test)
        parts["tree"].append(chosen)
        parts["best"].append(best)
        parts["default"].append(base)
        for name, rows in peers.items():
            parts[("peer", name)].append(peer_times(rows, test, settings.z).reshape(-1)[flat])
    times = {k: np.concatenate(v) for k, v in parts.items()}
    best = times["best"]
    figures = lambda t: {k: penalty.score(t, best)[k] for k in FIGURES}  # noqa: E731
    tree = figures(times["tree"])
    tree["unscored_choices"] = int((np.isfinite(best) & ~np.isfinite(times["tree"])).sum())
    return {"tree": tree, "default": figures(times["default"]),
            "peers": {name: figures(times[("peer", name)]) for name in peers}}
