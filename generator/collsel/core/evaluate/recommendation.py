"""The recommended tree and the figures stats.json and the report show for it
(core.evaluate.model_selection chooses; core.evaluate.recommend is the public entry point; the
figures are the records of core.evaluate.recommendation_figures)."""
from dataclasses import replace
from typing import Any, Optional

from collsel.core.evaluate import candidates as cands, fold_maps, model_selection as ms
from collsel.core.mpi.method_text import default_name, leaves_text, mpi_name
from collsel.core.evaluate.recommendation_figures import (CandidateRow, KindFigures,
                                                          Recommendation, Selected)
from collsel.core.trees.tree import TreeArrays

# the candidates stats.json compares the chosen one with, by their fields
COMPARED: dict[str, dict[str, Any]] = {
    "default": {"limit": "defer"}, "best_fixed": {"limit": "fixed"},
    "exact": {"limit": "exact", "split": "balanced", "leaf": "majority", "ties": False,
              "defer": True},
    "depth_3_penalty": {"limit": "depth", "value": 3, "split": "balanced", "leaf": "penalty",
                        "ties": False, "defer": True}}


def _row(sel, i, se=False):
    """One candidate's figures: leaves, the criterion's figure and per kind mean/max/capped
    (with its standard error when `se`)."""
    return CandidateRow(sel.candidates[i].label(), int(sel.leaves[i]), float(sel.score[i]),
                        {ms.KIND_KEYS[k]: KindFigures(float(f["capped"][i]), float(f["mean"][i]),
                                                      float(f["max"][i]), int(f["cells"]))
                         for k, f in sel.per_kind.items()},
                        float(sel.se[i]) if se else None)


# What the `nested` figure is (core.evaluate.model_selection): each outer fold chooses as a
# recommendation made on its training set would, on the folds of every kind that set has.
STATISTIC = "mean penalty over the held-out cells (no cell capped)"
NESTING = "each outer fold chooses on its own training set's folds of every kind"
SE_OVER = "cells (paired per-cell differences with the best candidate)"
RULE = ("the interpolated exact tree where better than the default and the best fixed method, "
        "else one standard error")
NO_FOLDS = ("no out-of-sample data (fewer than 3 communicator sizes and 3 message sizes with "
            "candidates, and no journal of 2+ launches): the exact tree")


def _json_kind(kind):
    """stats.json's name of a kind of fold (and of "combined")."""
    return "combined" if kind == "combined" else ms.KIND_KEYS[kind]


def by_cross_validation(dmap, launch_tables, settings, criterion="combined",
           workers=None, nested=True) -> tuple[Optional[TreeArrays], Any, Recommendation]:
    """(TreeArrays, map, figures) of the recommended tree and the map its cuts are cells of
    (`dmap`, or the selection's interpolated one), or (None, dmap, figures) without any fold; the
    folds computed by `workers` (core.evaluate.parallel.pool()) when given; without `nested`,
    figures with no nested ones (core.evaluate.model_selection.select)."""
    grid = fold_maps.FoldGrid(dmap, launch_tables, settings)
    sel = ms.select(grid, criterion, workers, nested)
    if sel is None:
        return None, dmap, Recommendation(criterion, (), NO_FOLDS)
    chosen = sel.candidates[sel.chosen]
    label = ms.LABELS[criterion] + ("" if criterion != "combined" else " (" + ", ".join(
        ms.LABELS[k] for k in sel.kinds) + ")")
    compared = {name: _row(sel, i) for name, match in COMPARED.items()
                if (i := ms.index_of(sel, **match)) is not None}
    nested = sel.nested.get(criterion)
    selected = Selected(
        label, STATISTIC, SE_OVER, RULE, len(sel.candidates), _row(sel, sel.chosen, se=True),
        chosen, _row(sel, sel.best, se=True), compared,
        {_json_kind(k): v for k, v in sel.nested.items()},
        # the best candidate's picks are not rebuilt: its figures alone
        {_json_kind(k): v and replace(v, picked_fields=None)
         for k, v in sel.nested_best.items()},
        sel.edge, nesting=NESTING)
    why = _why(sel, chosen, label, nested, compared, dmap.family)
    t = sel.trained.tree(sel.chosen)
    on = sel.trained.map_of(sel.chosen) if chosen.interp else dmap
    return t, on, Recommendation(criterion, tuple(ms.KIND_KEYS[k] for k in sel.kinds), why,
                                 deferred=chosen.limit == "defer", selection=selected)


def baseline_on_nested_folds(figures: Recommendation, name="default") -> Optional[float]:
    """A compared baseline's capped figure on the folds the recommendation's nested figure was
    scored on (stats.json's `recommendation`), or None. The nested combined figure averages
    only the fold kinds that can be nested (no leave-one-P-out with 3 P, for instance), while
    the baseline's criterion figure averages every kind: side by side, they must share kinds."""
    nested = figures.nested_figure()
    row = None if figures.selection is None else figures.selection.compared.get(name)
    if row is None or nested is None:
        return None
    kinds = nested.kinds or (figures.criterion,)
    if any(k not in row.kinds for k in kinds):
        return None
    return sum(row.kinds[k].capped for k in kinds) / len(kinds)


def recommended_on_nested_folds(figures: Recommendation) -> Optional[float]:
    """The capped figure, on the folds of the nested figure, of what stats.json's
    `recommendation` recommends: the nested figure of the procedure, or, in a stats.json of
    before 2026-11-30 whose recommendation gave way to the MPI's default or the best fixed
    method (`fallback`, core.evaluate.model_selection), that one's figure there; None without a
    nested figure."""
    if figures.selection is not None and figures.selection.fallback is not None:
        return figures.selection.fallback.capped
    nested = figures.nested_figure()
    return None if nested is None else nested.capped


def _why(sel, chosen, label, nested, compared, family):
    best = sel.candidates[sel.best]
    the_default = default_name(family)
    honest = ("" if nested is None else
              f"nested out-of-sample ({NESTING}) {nested.mean:.2f}% mean, "
              f"{nested.max:.2f}% max; ")
    lead = {"defer": f"defer to {mpi_name(family)} everywhere: no tree beats {the_default} "
                     "out of sample by more than noise",
            "fixed": "the best single fixed method: no tree beats it out of sample by more "
                     "than noise"}.get(chosen.limit, f"{chosen.label()}, "
                                                     f"{leaves_text(int(sel.leaves[sel.chosen]))}")
    rule = ("preferred: better than the trivial ones" if chosen == cands.INTERPOLATED_EXACT
            else "one-SE rule")
    parts = [f"{lead} ({honest}criterion {label}: {sel.score[sel.chosen]:.2f}% mean "
             f"({rule} over {len(sel.candidates)} candidates; best {best.label()} "
             f"{sel.score[sel.best]:.2f}% +- {sel.se[sel.chosen]:.2f}))"]
    for name, text in (("default", the_default), ("best_fixed", "best fixed method")):
        if name in compared:
            parts.append(f"{text} {compared[name].criterion_capped:.2f}%")
    edge = sel.edge
    if edge is not None and edge.default_capped is not None:
        parts.append(f"largest P={edge.comm_size} held out: this tree "
                     f"{edge.tree_capped:.2f}%, {the_default} {edge.default_capped:.2f}% "
                     f"mean: {edge.beyond}")
    return "; ".join(parts)


def beyond_decision(given: Optional[str], figures: Optional[Recommendation]) -> str:
    """"defer" or "keep" beyond the largest measured P: `given` (--beyond) when set, else the
    recommendation's edge decision (`figures`: stats.json's `recommendation`, its
    `edge.beyond`; None without --recommend), else keep. build and report both write
    tree.json by it."""
    if given is not None:
        return given
    edge = None if figures is None else figures.edge
    return "defer" if edge is not None and edge.beyond == ms.EDGE_DEFER else "keep"
