"""The recommended tree: one implementation for `collsel build --recommend` and the report.

The candidates (core.candidates: pruned, depth- and threshold-limited trees of every split mode,
leaf rule, tie-aware or not, "defer" on and off, plus deferring to the MPI everywhere and the
best single fixed method) are scored by cross-validation under a criterion (across launches,
leave-P-out, leave-m-out, or their mean), and the smallest within one standard error of the
best, never worse than the MPI's default nor the best fixed method, is recommended; its figure
is nested cross-validation's (core.model_selection). Deterministic: the same inputs give the
same tree.
"""
import dataclasses
import shlex

from collsel.core import candidates, out_of_sample, recommendation, tree

DEFAULT_BUDGET = 1.0      # kept for `collsel report --budget` (its trade-off plot's line)


def fold_builder(dmap, options, figures):
    """How a training fold makes the recommended tree again (for its out-of-sample figures):
    the chosen candidate built on the fold's training map."""
    if "chosen" not in figures:
        return lambda m: tree.build_tree(m, options)
    chosen = candidates.from_dict(figures["chosen"]["fields"])
    return lambda train: candidates.build(chosen, train)


def nested_builders(figures) -> dict:
    """{kind: [per outer fold, how its training map makes the tree the recommendation's nested
    procedure picked there]} (stats.json's `recommendation`; core.model_selection), so the
    printed out-of-sample figures are the procedure's, as `collsel evaluate
    --candidate=--recommend` measures it directly. Where the recommendation is the MPI's
    default or the best fixed method (chosen, or fallen back to), that one on every fold: what
    is deployed then is that trivial choice, and a tree that defers everywhere scores as the
    default, never "worse than doing nothing". {} without nested picks."""
    fallback = figures.get("fallback")
    chosen = (figures.get("chosen") or {}).get("fields") or {}
    trivial = ("defer" if fallback["to"] == "default" else "fixed") if fallback else (
        chosen.get("limit") if chosen.get("limit") in ("defer", "fixed") else None)
    out = {}
    for kind, block in (figures.get("nested") or {}).items():
        if kind == "combined" or not block or "picked_fields" not in block:
            continue
        picks = [candidates.from_dict(f) for f in block["picked_fields"]]
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


def chosen_options(options, figures):
    """The BuildOptions of the recommended tree's variant (`options` when nothing was chosen)."""
    if "chosen" not in figures:
        return options
    return candidates.from_dict(figures["chosen"]["fields"]).options()


def recorded_options(options, t):
    """The options tree.json records for a recommended tree: the given ones, limited to the
    depth the chosen tree reaches."""
    return dataclasses.replace(options, max_depth=int(t.depth.max()), threshold=None)


def recommend(dmap, options, launch_tables=None, settings=out_of_sample.DEFAULT_SETTINGS,
              criterion="combined", workers=None):
    """(TreeArrays, figures) of the recommended tree of `dmap` (built with `settings`,
    core.decision_map.MapSettings): the candidate core.model_selection chooses by
    cross-validation under `criterion`, with its nested out-of-sample figure. Without any fold
    the exact tree of `options`. `workers` (core.parallel.pool()) share the folds' work when
    given. figures["budget"] stays None: stats.json and report.json keep the key, though the
    one-standard-error rule, not a penalty budget, picks the tree."""
    t, figures = recommendation.choose(dmap, launch_tables, settings, criterion, workers)
    figures["budget"] = None
    if t is None:
        figures["why"] = ("no out-of-sample data (fewer than 3 communicator sizes and 3 message "
                          "sizes with candidates, and no journal of 2+ launches): the exact tree")
        return tree.build_tree(dmap, dataclasses.replace(options, max_depth=None,
                                                         threshold=None)), figures
    return t, figures
