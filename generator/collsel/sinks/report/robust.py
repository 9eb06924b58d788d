"""The report's robust-decision sections: per-cell tie-set sizes, decision confidence and
candidate counts (from the DecisionMap, core.maps.ties and core.maps.imputation), and the
out-of-sample table beside the in-sample figures.

The out-of-sample figures themselves are computed by the command through core.evaluate.recommend and
core.evaluate.out_of_sample (they need the table, which sinks never read); here they are only
arranged.
"""
import numpy as np

from collsel.core.evaluate import verdict
from collsel.core.trees import penalty, pruning

CHOOSERS = (("recommended", "recommended tree (collsel build --recommend)"),
            ("default", "the MPI's own decision (algorithm 0 rows)"),
            ("best_fixed", "best single fixed method"),
            ("exact", "exact map (per-cell best of the training data)"))


def _figures(s):
    return {k: s[k] for k in ("cells", "mean", "median", "max", "se_vs") if k in s}


def _grid(array, fn):
    if array.ndim == 1:
        return [fn(v) for v in array.tolist()]
    return [_grid(a, fn) for a in array]


def cell_maps(dmap):
    """Per cell: how many methods were measured, the tie-set size and the decision confidence
    (None where unknown), with the figures the page's captions need."""
    measured = dmap.measured
    candidates = np.where(measured, dmap.candidates, 0)
    tie = np.where(measured, dmap.tied.sum(axis=-1), 0)
    conf = np.where(measured, dmap.confidence, np.nan)
    has_conf = bool(np.isfinite(conf).any())
    n = len(dmap.methods)
    return {
        "methods": n,
        "candidates": _grid(candidates, int),
        "partial_cells": int((measured & (candidates < n)).sum()),
        "fewest_candidates": int(candidates[measured].min()) if measured.any() else 0,
        "tie_size": _grid(tie, int),
        "tie_max": int(tie.max()) if tie.size else 0,
        "tied_cells": int((tie > 1).sum()),
        "has_ties": bool((tie > 1).any()),
        "confidence": _grid(conf, lambda v: None if not np.isfinite(v) else float(v))
        if has_conf else None,
        "confidence_min": float(np.nanmin(conf)) if has_conf else None,
        "defer_candidate": dmap.defer_index is not None,
    }


def in_sample(dmap, rec_choice):
    """The four choosers scored on the map they were chosen on (core.maps.cell_cost's reference)."""
    best = dmap.reference_time
    measured = dmap.measured

    def scored(choice):
        t = penalty.chosen_time(dmap, choice)
        return _figures(penalty.score(np.where(measured, t, np.nan), best))

    fixed = pruning.best_fixed(dmap)
    return {"recommended": scored(rec_choice),
            "default": _figures(penalty.score(np.where(measured, dmap.baseline_time, np.nan),
                                              best)),
            "best_fixed": {**scored(np.full(dmap.shape, fixed)),
                           "method": "defer to the MPI" if dmap.methods[fixed].algorithm == 0
                           else dmap.method_names()[fixed]},
            "exact": scored(dmap.best)}


def out_of_sample_table(dmap, rec_choice, kinds):
    """Rows (one per chooser) x columns (in sample, then each out-of-sample kind). `kinds` is
    {kind: None (no data) or {label, folds, recommended, exact, default, best_fixed}}."""
    columns = [{"kind": "in_sample", "label": "in sample", "folds": None, "available": True}]
    for kind, block in kinds.items():
        columns.append({"kind": kind, "label": block["label"] if block else kind,
                        "folds": block["folds"] if block else 0, "available": bool(block),
                        "absent": None if block else block_absent(kind)})
    inside = in_sample(dmap, rec_choice)
    rows = []
    for key, name in CHOOSERS:
        cells = [inside[key]] + [_figures(b[key]) if b and b.get(key) else None
                                 for b in kinds.values()]
        rows.append({"key": key, "name": name, "cells": cells,
                     **({"method": inside[key]["method"]} if key == "best_fixed" else {})})
    return {"columns": columns, "rows": rows}


def block_absent(kind):
    """Why a kind of out-of-sample figure is missing, in the page's words."""
    return {"launches": "no per-launch data (the sweep's TABLE.launches journal, or --launches)",
            "leave_one_P_out": "fewer than two communicator sizes with candidates",
            "leave_one_m_out": "fewer than two message sizes with candidates"}.get(
                kind, "no data")


TREES = (("recommended", "the recommended tree"), ("exact", "the exact tree"))
BASELINES = ("default", "best_fixed")


def warnings(table):
    """Each column of the out-of-sample table (in sample too) where a tree (the recommended,
    the exact) has a higher mean penalty than the MPI's own decision or the best single fixed
    method (core.evaluate.verdict), with both figures: the page's plain warnings."""
    rows = {r["key"]: r for r in table["rows"]}
    out = []
    for k, column in enumerate(table["columns"]):
        for key, name in TREES:
            mine = rows[key]["cells"][k]
            theirs = {b: rows[b]["cells"][k] for b in BASELINES}
            found = verdict.worse_than(mine and mine["mean"], {
                b: cell["mean"] if cell else None for b, cell in theirs.items()},
                (mine or {}).get("se_vs"))
            out += [{"tree": key, "tree_name": name, "against": b, "against_name":
                     dict(CHOOSERS)[b], "column": column["label"], "tree_mean": mine["mean"],
                     "tree_cells": mine["cells"], "other_mean": mean,
                     "other_cells": theirs[b]["cells"]} for b, mean in found]
    return out
