"""The recommended tree: one implementation for `collsel build --recommend` and the report.

The candidates (core.evaluate.candidates: pruned, depth- and threshold-limited trees of every split
mode, leaf rule, tie-aware or not, "defer" on and off, plus deferring to the MPI everywhere and the
best single fixed method) are scored by cross-validation under a criterion (across launches,
leave-P-out, leave-m-out, or their mean), and the smallest within one standard error of the
best, never worse than the MPI's default nor the best fixed method, is recommended; its figure
is nested cross-validation's (core.evaluate.model_selection). Deterministic: the same inputs give
the same tree.
"""
import dataclasses
import shlex
from collections.abc import Callable
from typing import Optional

from collsel.core.evaluate import candidates, out_of_sample, recommendation
from collsel.core.trees import tree
from collsel.core.evaluate.recommendation_figures import Recommendation

DEFAULT_BUDGET = 1.0      # kept for `collsel report --budget` (its trade-off plot's line)


def fold_builder(dmap, options, figures: Optional[Recommendation]) -> Callable:
    """How a training fold makes the recommended tree again (for its out-of-sample figures):
    the chosen candidate built on the fold's training map; the tree of `options` when nothing
    was chosen (`figures` None: no --recommend)."""
    if figures is None or figures.selection is None:
        return lambda m: tree.build_tree(m, options)
    chosen = figures.selection.choice
    return lambda train: candidates.build(chosen, train)     # (tree, its map)


def nested_builders(figures: Optional[Recommendation]) -> dict:
    """{kind: [per outer fold, how its training map makes the tree the recommendation's nested
    procedure picked there]} (stats.json's `recommendation`; core.evaluate.model_selection), so the
    printed out-of-sample figures are the procedure's, as `collsel evaluate
    --candidate=--recommend` measures it directly. Where the recommendation is the MPI's
    default or the best fixed method (chosen, or fallen back to in an older stats.json), that
    one on every fold: what is deployed then is that trivial choice, and a tree that defers
    everywhere scores as the default, never "worse than doing nothing". {} without nested
    picks."""
    selected = None if figures is None else figures.selection
    if selected is None:
        return {}
    fallback, limit = selected.fallback, selected.choice.limit
    trivial = ("defer" if fallback.to == "default" else "fixed") if fallback else (
        limit if limit in ("defer", "fixed") else None)
    out = {}
    for kind, block in selected.nested.items():
        if kind == "combined" or block is None or block.picked_fields is None:
            continue
        picks = list(block.picked_fields)
        if trivial:
            picks = [candidates.Candidate(trivial)] * len(picks)
        out[kind] = [lambda train, c=c: candidates.build(c, train) for c in picks]
    return out


def build_command(tables, collective, options, settings=out_of_sample.DEFAULT_SETTINGS,
                  launches=None, out="DIR", criterion="combined", beyond=None) -> str:
    """The `collsel build` command line that writes this recommendation (`beyond`: the
    --beyond given, if any)."""
    words = ["collsel", "build", *map(str, tables), "--collective", collective, "--recommend",
             "--criterion", criterion]
    words += settings.flags()
    words += ["--beyond", beyond] if beyond else []
    words += ["--launches", str(launches)] if launches else []
    return shlex.join(words + ["--out", str(out)])


def chosen_options(options: tree.BuildOptions,
                   figures: Optional[Recommendation]) -> tree.BuildOptions:
    """The BuildOptions of the recommended tree's variant (`options` when nothing was chosen)."""
    if figures is None or figures.selection is None:
        return options
    return figures.selection.choice.options()


def recorded_options(options: tree.BuildOptions, t: tree.TreeArrays) -> tree.BuildOptions:
    """The options tree.json records for a recommended tree: the given ones, limited to the
    depth the chosen tree reaches."""
    return dataclasses.replace(options, max_depth=int(t.depth.max()), threshold=None)


def recommend(dmap, options, launch_tables=None, settings=out_of_sample.DEFAULT_SETTINGS,
              criterion="combined", workers=None,
              nested=True) -> tuple[tree.TreeArrays, object, Recommendation]:
    """(TreeArrays, map, figures) of the recommended tree of `dmap` (built with `settings`,
    core.maps.decision_map.MapSettings): the candidate core.evaluate.model_selection chooses by
    cross-validation under `criterion`, with its nested out-of-sample figure, and the map its
    cuts are cells of (`dmap`, or for an interpolated candidate the selection's interpolated
    map, not made again). Without any fold the exact tree of `options`. `workers`
    (core.evaluate.parallel.pool()) share the folds' work when given; without `nested`, the
    same tree with no nested figures (faster: for a caller that scores the tree itself)."""
    t, on, figures = recommendation.by_cross_validation(dmap, launch_tables, settings,
                                                        criterion, workers, nested)
    if t is None:
        return tree.build_tree(dmap, dataclasses.replace(options, max_depth=None,
                                                         threshold=None)), dmap, figures
    return t, on, figures
