"""The recommended tree: one implementation for `collsel build --recommend` and the report.

1. The full tree (no depth limit, the given split mode and leaf rule) and its cost-complexity
   pruning path (core.pruning).
2. Every subtree on the path scored out of sample: across launches when 2+ launches exist, else
   leave-one-P-out. A training fold builds its own full tree and path and is cut at the same
   alpha (CART's cross-validation: subtree k stands for alphas [alpha_k, alpha_k+1), the fold's
   path is cut at their geometric mean), and that fold tree is asked at the held-out cells.
3. The recommendation is the smallest subtree whose out-of-sample mean penalty is within
   `budget` percentage points of the best subtree's, among those not worse than Open MPI's
   default on the cells where the default is measured (same folds, same cells). When no subtree
   qualifies, it is "defer to the MPI": a single leaf holding Method(0, 0, 0) where the map has
   that candidate; otherwise the best subtree, flagged `deferral_advised`.
Deterministic: the same inputs give the same tree.
"""
import dataclasses
import shlex

import numpy as np

from collsel.core import out_of_sample, pruning, tree
from collsel.core.algorithms import BASELINE_ALGORITHM, Method
from collsel.core.method_text import default_name, mpi_name
from collsel.core.tree import UNDEFINED, TreeArrays

DEFAULT_BUDGET = 1.0
DEFER = Method(BASELINE_ALGORITHM, 0, 0)


def path_of(dmap, options):
    """The pruning path of the map's full tree under `options` (its limits are ignored)."""
    at = lambda d: tree.build_tree(dmap, dataclasses.replace(  # noqa: E731
        options, max_depth=d, threshold=None))
    return pruning.pruning_path(dmap, at(None), at)


def path_figures(dmap, options, folds):
    """The path and, per step, leaves, alpha, in-sample and out-of-sample figures."""
    path = path_of(dmap, options)
    alphas = path.cv_alphas()

    def fold_trees(train):
        fold_path = path_of(train, options)
        return [fold_path.subtree(fold_path.step_at(a)) for a in alphas]

    result = out_of_sample.evaluate(folds, fold_trees)
    steps = [{"step": k, "alpha": path.alphas[k], "leaves": path.leaves[k],
              "cv_alpha": float(alphas[k]) if np.isfinite(alphas[k]) else None,
              "in_sample_mean": path.in_sample[k],
              "out_of_sample": None if result is None else result["trees"][k]}
             for k in range(len(path))]
    return path, steps, result


def defer_tree(dmap):
    """A single leaf deferring to the MPI, or None when the map has no such candidate."""
    if DEFER not in dmap.methods:
        return None
    n = len(dmap.axes)
    return TreeArrays(np.array([tree.LEAF], np.int32), np.full((1, n), UNDEFINED, np.int32),
                      np.array([dmap.methods.index(DEFER)], np.int32), np.zeros(1, np.int32))


def fold_builder(dmap, options, figures):
    """How a training fold makes the recommended tree again (for its out-of-sample figures):
    its own path cut at the chosen step's alpha, or its defer leaf."""
    if figures["deferred"]:
        return defer_tree
    alpha = figures["path"][figures["step"]]["cv_alpha"]
    alpha = np.inf if alpha is None else alpha

    def build(train):
        fold_path = path_of(train, options)
        return fold_path.subtree(fold_path.step_at(alpha))
    return build


def build_command(tables, collective, options, budget, settings=out_of_sample.DEFAULT_SETTINGS,
                  launches=None, out="DIR"):
    """The `collsel build` command line that writes this recommendation."""
    words = ["collsel", "build", *map(str, tables), "--collective", collective, "--recommend",
             "--budget", f"{budget:g}", "--split", options.split, "--leaf", options.leaf]
    words += settings.flags()
    words += ["--ties"] if options.ties and settings.tolerance is None else []
    words += [] if options.max_penalty is None else ["--max-penalty", f"{options.max_penalty:g}"]
    words += ["--launches", str(launches)] if launches else []
    return shlex.join(words + ["--out", str(out)])


def recorded_options(options, t):
    """The options tree.json records for a recommended tree: the given ones, limited to the
    depth the chosen tree reaches."""
    return dataclasses.replace(options, max_depth=int(t.depth.max()), threshold=None)


def recommend(dmap, table, options, budget=DEFAULT_BUDGET, launch_tables=None,
              settings=out_of_sample.DEFAULT_SETTINGS, all_folds=None):
    """(TreeArrays, figures) of the recommended tree of `dmap` (built from `table` with
    `settings`, core.decision_map.MapSettings). `all_folds`: the same inputs' folds when the
    caller has made them already (core.out_of_sample.all_folds), else they are made here."""
    folds = (all_folds["launches"] if all_folds is not None
             else out_of_sample.launch_folds(launch_tables or {}, settings))
    kind = "launches"
    if not folds:
        folds = (all_folds["leave_one_P_out"] if all_folds is not None
                 else out_of_sample.leave_one_out_folds(table, "comm_size", settings))
        kind = "leave_one_P_out"
    path, steps, result = path_figures(dmap, options, folds)
    figures = {"scored_by": out_of_sample.LABELS[kind], "kind": kind, "budget": budget,
               "path": steps, "default": None if result is None else result["default"],
               "best_fixed": None if result is None else result["best_fixed"],
               "deferral_advised": False, "deferred": False}
    if result is None:     # nothing to score out of sample: the smallest exact subtree
        figures["step"] = 0
        figures["why"] = "no out-of-sample data (one P and no launches): the full tree"
        return path.subtree(0), figures
    means = np.array([s["out_of_sample"]["mean"] if s["out_of_sample"]["mean"] is not None
                      else np.inf for s in steps])
    default = result["default"]["mean"]
    on_default = np.array([s["out_of_sample"]["on_default_cells"]["mean"]
                           if s["out_of_sample"]["on_default_cells"]["mean"] is not None
                           else np.inf for s in steps])
    ok = means <= means.min() + budget
    the_default = default_name(dmap.family)
    if default is not None:
        ok &= on_default <= default
    if ok.any():
        # smallest: fewest leaves, then the lower out-of-sample mean, then the earlier step
        k = int(min(np.flatnonzero(ok), key=lambda i: (steps[i]["leaves"], means[i], i)))
        figures["step"] = k
        chosen = steps[k]["out_of_sample"]
        leaves = steps[k]["leaves"]
        figures["why"] = (f"{leaves} lea{'f' if leaves == 1 else 'ves'}: {figures['scored_by']} "
                          f"mean penalty {chosen['mean']:.2f}% on {chosen['cells']} cells (best "
                          f"on the path {means.min():.2f}%, budget {budget:g} points)"
                          + ("" if default is None else
                             f"; {the_default} {default:.2f}% on its "
                             f"{result['default']['cells']} cells, this tree "
                             f"{chosen['on_default_cells']['mean']:.2f}% on them"))
        return path.subtree(k), figures
    k = int(np.argmin(means))
    figures["step"] = k
    deferred = defer_tree(dmap)
    lost = (f"no tree on the path beats {the_default} out of sample ({default:.2f}% "
            f"vs {on_default.min():.2f}% at best, {figures['scored_by']})")
    if deferred is not None:
        figures["deferred"] = True
        figures["why"] = (lost + f": deferring to {mpi_name(dmap.family)} everywhere (one "
                          "leaf, algorithm 0)")
        return deferred, figures
    figures["deferral_advised"] = True
    figures["why"] = (lost + f": keep {mpi_name(dmap.family)}'s own decision; the best subtree "
                      "is written anyway")
    return path.subtree(k), figures
