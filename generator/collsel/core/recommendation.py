"""The recommended tree and the figures stats.json and the report show for it
(core.model_selection chooses; core.recommend is the public entry point)."""
from collsel.core import candidates as cands, fold_maps, model_selection as ms
from collsel.core.method_text import default_name, leaves_text, mpi_name

COMPARED = {"default": {"limit": "defer"}, "best_fixed": {"limit": "fixed"},
            "exact": {"limit": "exact", "split": "balanced", "leaf": "majority", "ties": False,
                      "defer": True},
            "depth_3_penalty": {"limit": "depth", "value": 3, "split": "balanced",
                                "leaf": "penalty", "ties": False, "defer": True}}


def _row(sel, i):
    """One candidate's figures: leaves, the criterion's figure and per kind mean/max/capped."""
    return {"candidate": sel.candidates[i].label(), "leaves": int(sel.leaves[i]),
            "criterion_capped": float(sel.score[i]),
            "kinds": {ms.KIND_KEYS[k]: {"capped": float(f["capped"][i]),
                                        "mean": float(f["mean"][i]), "max": float(f["max"][i]),
                                        "cells": int(f["cells"])}
                      for k, f in sel.per_kind.items()}}


# What the `nested` figure is (core.model_selection): each outer fold chooses as a
# recommendation made on its training set would, on the folds of every kind that set has.
STATISTIC = "mean penalty over the held-out cells (no cell capped)"
NESTING = "each outer fold chooses on its own training set's folds of every kind"


def choose(dmap, launch_tables, settings, criterion="combined", workers=None):
    """(TreeArrays, figures) of the recommended tree, or (None, figures) without any fold; the
    folds computed by `workers` (core.parallel.pool()) when given."""
    grid = fold_maps.FoldGrid(dmap, launch_tables, settings)
    sel = ms.select(grid, criterion, workers)
    if sel is None:
        return None, {"criterion": criterion, "kinds": [], "deferred": False,
                      "deferral_advised": False}
    chosen = sel.candidates[sel.chosen]
    label = ms.LABELS[criterion] + ("" if criterion != "combined" else " (" + ", ".join(
        ms.LABELS[k] for k in sel.kinds) + ")")
    compared = {name: _row(sel, i) for name, match in COMPARED.items()
                if (i := ms.index_of(sel, **match)) is not None}
    nested = sel.nested.get("combined" if criterion == "combined" else criterion)
    figures = {
        "criterion": criterion, "kinds": [ms.KIND_KEYS[k] for k in sel.kinds],
        "scored_by": label, "kind": criterion,
        "statistic": STATISTIC,
        "se_over": "cells (paired per-cell differences with the best candidate)",
        "rule": "one standard error", "candidates": len(sel.candidates),
        "chosen": {**_row(sel, sel.chosen), "se": float(sel.se[sel.chosen]),
                   "fields": cands.as_dict(chosen)},
        "best": {**_row(sel, sel.best), "se": float(sel.se[sel.best])},
        "compared": compared,
        "nested": {("combined" if k == "combined" else ms.KIND_KEYS[k]):
                   _with_pick_fields(sel, v) for k, v in sel.nested.items()},
        "nested_best": {("combined" if k == "combined" else ms.KIND_KEYS[k]):
                        v and {n: x for n, x in v.items() if n != "picks"}
                        for k, v in sel.nested_best.items()},
        "edge": sel.edge, "deferred": chosen.limit == "defer", "deferral_advised": False,
        "fallback": sel.fallback,
        "nesting": NESTING,
    }
    figures["why"] = _why(sel, chosen, label, nested, compared, dmap.family)
    t = sel.trained.tree(sel.chosen)
    return t, figures


def _with_pick_fields(sel, figures):
    """A kind's nested figures with its picks as candidate fields (core.recommend rebuilds
    them fold by fold for the printed figures); the combined entry as it is."""
    if figures is None or "picks" not in figures:
        return figures
    return {**{k: v for k, v in figures.items() if k != "picks"},
            "picked_fields": [cands.as_dict(sel.candidates[i]) for i in figures["picks"]]}


def baseline_on_nested_folds(figures, name="default"):
    """A compared baseline's capped figure on the folds the recommendation's nested figure was
    scored on (stats.json's `recommendation`), or None. The nested combined figure averages
    only the fold kinds that can be nested (no leave-one-P-out with 3 P, for instance), while
    the baseline's criterion figure averages every kind: side by side, they must share kinds."""
    row = (figures.get("compared") or {}).get(name)
    nested = (figures.get("nested") or {}).get(figures.get("criterion", "combined"))
    if not row or not nested:
        return None
    kinds = nested.get("kinds") or [figures.get("criterion")]
    values = [((row.get("kinds") or {}).get(k) or {}).get("capped") for k in kinds]
    if not values or any(v is None for v in values):
        return None
    return sum(values) / len(values)


def recommended_on_nested_folds(figures):
    """The capped figure, on the folds of the nested figure, of what stats.json's
    `recommendation` recommends: the nested figure of the procedure, or, when it gave way to
    the MPI's default or the best fixed method (`fallback`), that one's figure there; None
    without a nested figure."""
    if figures.get("fallback"):
        return figures["fallback"]["capped"]
    nested = (figures.get("nested") or {}).get(figures.get("criterion", "combined"))
    return None if not nested else nested["capped"]


def _why(sel, chosen, label, nested, compared, family):
    best = sel.candidates[sel.best]
    the_default = default_name(family)
    honest = ("" if nested is None else
              f"nested out-of-sample ({NESTING}) {nested['mean']:.2f}% mean, "
              f"{nested['max']:.2f}% max; ")
    lead = {"defer": f"defer to {mpi_name(family)} everywhere: no tree beats {the_default} "
                     "out of sample by more than noise",
            "fixed": "the best single fixed method: no tree beats it out of sample by more "
                     "than noise"}.get(chosen.limit, f"{chosen.label()}, "
                                                     f"{leaves_text(int(sel.leaves[sel.chosen]))}")
    fall = sel.fallback
    if fall is not None:       # the nested figure is the tree's, not this recommendation's
        lead += (f" (nested, on the same held-out cells: {fall['capped']:.2f}% mean against "
                 f"{fall['tree_capped']:.2f}% +- {fall['se']:.2f} for the tree "
                 f"cross-validation chose, {fall['instead_of']})")
        honest = ""
    parts = [f"{lead} ({honest}criterion {label}: {sel.score[sel.chosen]:.2f}% mean "
             f"(one-SE rule over {len(sel.candidates)} candidates; best {best.label()} "
             f"{sel.score[sel.best]:.2f}% +- {sel.se[sel.chosen]:.2f}))"]
    for name, text in (("default", the_default), ("best_fixed", "best fixed method")):
        if name in compared:
            parts.append(f"{text} {compared[name]['criterion_capped']:.2f}%")
    edge = sel.edge
    if edge is not None and edge["default_capped"] is not None:
        parts.append(f"largest P={edge['comm_size']} held out: this tree "
                     f"{edge['tree_capped']:.2f}%, {the_default} {edge['default_capped']:.2f}% "
                     f"mean: {edge['beyond']}")
    return "; ".join(parts)


def beyond_decision(given, figures):
    """"defer" or "keep" beyond the largest measured P: `given` (--beyond) when set, else the
    recommendation's edge decision (`figures`: stats.json's `recommendation`, its
    `edge.beyond`), else keep. build and report both write tree.json by it."""
    if given is not None:
        return given
    edge = (figures or {}).get("edge") or {}
    return "defer" if edge.get("beyond") == ms.EDGE_DEFER else "keep"
