"""collsel tune's summary table: per collective what was measured (the sweep's table), what is
still undecided (the sweep's own rule, sources/sweep/refine.undecided_in_table; '-' for a
per-method sweep, which has no tie test) and what the recommended tree gives
(build --recommend's stats.json: leaves, nested out-of-sample penalty beside the MPI's
default's on the same folds: core.recommendation.baseline_on_nested_folds)."""
import json
import os

from collsel.core import csvfile, method_text, recommendation
from collsel.sources.sweep import refine
from collsel.sources.tune import layout


def table(out, plan):
    """The summary as text: a header line and one row per collective."""
    default = method_text.default_name(plan["mpi"])
    head = (f"{'collective':<22} {'methods':>7} {'cells':>6} {'undecided':>9} {'leaves':>6} "
            f"{'tree (oos)':>10} {default + ' (oos)':>24}")
    rows = [head]
    for grid in plan["grids"]:
        c = grid["collective"]
        cells, undecided = _measured(layout.table(out, c), grid.get("mode", "paired"))
        leaves, tree_pct, default_pct = _recommended(layout.stats_json(out, c))
        rows.append(f"{c:<22} {grid['methods']:>7} {cells:>6} {undecided:>9} {leaves:>6} "
                    f"{tree_pct:>10} {default_pct:>24}")
    deployed = [name for name in (layout.RULES, layout.MPICH)
                if os.path.exists(os.path.join(out, name))]
    note = ("out-of-sample (oos): mean penalty vs the best method, capped, nested cross-"
            "validation on the recommendation's criterion, the default on the same folds "
            "(build --recommend's stats.json)")
    return "\n".join(rows + [note, "deploy: " + (", ".join(os.path.join(out, d)
                                                          for d in deployed) or "none")]) + "\n"


def _measured(path, mode):
    """(cells in the table, its undecided cells or '-' when measured per method). A cell is a
    (P, m) pair, or a (nodes, ppn, m) triple when the table has shapes, as the sweep counts
    undecided ones (so both columns count the same thing)."""
    doc = csvfile.read(path, "a sweep table")
    keys = [k for k in ("comm_size", "nodes", "ppn", "msg_size") if k in doc.header]
    at = [doc.header.index(k) for k in keys]
    cells = {tuple(fields[i] for i in at) for _, fields in doc.rows}
    if mode != "paired":
        return len(cells), "-"
    return len(cells), sum(map(len, refine.undecided_in_table(path).values()))


def _recommended(path):
    with open(path, encoding="utf-8") as f:
        stats = json.load(f)
    figures = stats.get("recommendation", {})
    tree = recommendation.recommended_on_nested_folds(figures)
    default = recommendation.baseline_on_nested_folds(figures)
    return stats["leaves"], _percent(tree), _percent(default)


def _percent(value):
    return "n/a" if value is None else f"{value:.2f}%"
