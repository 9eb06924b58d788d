"""Choosing the recommended tree by cross-validation, and its honest (nested) figure.

Criterion (what "out of sample" means, matching the use): `launches` (build on the other
launches' mean, score on the held-out launch: the tree used again on this machine), `P`
(leave-P-out: communicator sizes not measured), `m` (leave-m-out: message sizes not measured),
or `combined`, the default: the mean of the kinds the data allows (launches only with a journal
of 2+ launches). P and m folds hold out interior values one at a time (core.evaluate.fold_maps:
at most MAX_FOLDS of them, evenly spaced).

Statistic: the mean penalty over the held-out cells, the figure `collsel evaluate` scores and a
user is judged by (CAP = inf: no cell is capped; the `capped` fields of stats.json are this
statistic). No cap, because a cell where the MPI's default (or a method) is 1,000x slower is
part of what a choice costs: avoiding it is the point. A cap at 100 % made such a default look
as good as a tree (valentinisalessio-bcast-socket: 5.17 % capped, 551 % plain); over the 53
(corpus table, protocol) pairs the recommendation's mean regret against the best of {exact,
depth 2/3/4 penalty, best fixed} is 20.09 points with that cap, 4.52 with a 1,000 % cap, 1.17
without (median 0.62 / 0.44 / 0.44). A kind's figure is the mean over its
folds' pooled held-out cells; `combined` averages kinds.

Rule: the exact tree of the interpolated map (candidates.INTERPOLATED_EXACT, a candidate where
the map has a gap to interpolate) whenever its figure is better than the MPI's default's and
the best fixed method's. Choosing among all candidates overfits the folds: over the 53 (corpus
table, protocol) pairs, that tree alone meets the evaluation protocol's test (no worse than the
default, within 0.5 points of the better of the plain exact and depth-3 trees) on 41, the
one-standard-error rule below with it among the candidates on 33, this rule on 40 (mean regret
against the best of {exact, depth 2/3/4 penalty, best fixed}: 5.27 points before it, -5.03
with it; docs/measurements.md, "Preferring the interpolated exact tree"). Where it loses to a
trivial candidate (noisy tables, or where deferring wins), and on maps without a gap:

the one-standard-error rule. The best candidate b has the least figure; candidate c
qualifies when figure(c) <= figure(b) + SE(c), SE computed over CELLS of the paired per-cell
difference c - b (a cell hard for every candidate cancels), per kind SE_k = sd/sqrt(cells),
combined sqrt(sum SE_k^2)/kinds. Over folds (3-5 per kind) the SE was so wide that deferring
everywhere "tied" trees 3 points better (seen on the Trieste bcast table); cells of one fold are
not independent, so this SE is on the small side and the rule on the greedy side. Among those
qualifying that are not worse than the MPI's default nor the best fixed method (never worse
than the obvious), the one with the fewest leaves wins (then the lower figure, then grid
order). The trivial candidates have one leaf, so when they are within noise of the best they
are chosen, and said so.

Nested figure: for every outer fold, the rule is applied to the training set as a
recommendation made on it would apply it (what `collsel evaluate --candidate=--recommend` does
directly): on the folds that data has (core.evaluate.fold_maps.FoldGrid.folds `without` the outer
fold's values: trained without both, scored without the outer fold's cells; _inner_keys says which
kinds), and the tree
it picks, trained on the outer training set, is scored on the outer held-out cells. With no
inner fold left, the pick is the exact tree, as `build --recommend` builds then. That figure
includes the optimism of choosing and is the one the recommendation prints per kind
(core.evaluate.recommend.nested_builders rebuilds its picks for core.evaluate.out_of_sample). The
yardstick for it is `nested_best`, the nested figure of taking the best candidate (the same folds,
no one-SE rule): the least plain cross-validated figure is the minimum of ~250 noisy figures and
optimistic by construction (by 3.35 points on the Trieste bcast table, where the one-SE rule
itself costs 0.46), so the regret of the rule is nested - nested_best, like with like.

Never worse than the obvious: the trivial candidates (deferring to the MPI everywhere, the best
fixed method) compete in the one-SE rule like any tree, and win it when within noise of the
best. There is no second, nested test of the chosen tree against them. Such a fallback (up to
2026-11-29) compared the procedure's nested figure with the trivial ones' on the same held-out
cells and deployed the better: a choice made on the cells that score it, which no nested figure
accounted for. Measured directly (`collsel evaluate --candidate=--recommend`, `make
corpus-scoreboard`, the 53 corpus pairs), it made things worse: mean regret against the best of
{exact, depth 2/3/4 penalty, best fixed} 11.98 points with it, 5.27 without; 27 against 29 pairs
within 0.5 points of the better of exact and depth 3; 50 of 53 no worse than the default either
way. (stats.json files written before keep their `fallback`, core.evaluate.recommendation_figures.)

Scoring: core.maps.cell_cost, the protocol `collsel evaluate` judges by (penalty against the fastest
forced method, on the cells where the default was measured): choosing charges an unmeasured
choice the cell's worst penalty (WORST), the figures leave it out as unscorable (UNSCORABLE).
"""
import contextlib
import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from collsel.core.evaluate import candidates as cands, parallel
from collsel.core.trees import tree
from collsel.core.evaluate.recommendation_figures import Edge, NestedFigures
from collsel.errors import InputError

CAP = math.inf     # no cell capped (above: the statistic)
SE_RULE = 1.0      # standard errors a smaller candidate may lose to the best
CRITERIA = ("combined", "launches", "P", "m")
KIND_KEYS = {"launches": "launches", "P": "leave_one_P_out", "m": "leave_one_m_out"}
LABELS = {"launches": "across launches", "P": "leave-P-out", "m": "leave-m-out",
          "combined": "combined"}


def capped(costs) -> np.ndarray:
    """Capped mean over the last axis (the selection statistic); NaN (unscorable) cells are
    left out."""
    return _nanmean(np.minimum(costs, CAP))


def _nanmean(values):
    """Mean over the last axis of the finite values (NaN where none is)."""
    finite = np.isfinite(values)
    count = finite.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(finite, values, 0.0).sum(axis=-1) / count


# candidates -> {the training maps' content keys -> candidates.Trained}, while
# shared_training() is on
_shared: Optional[dict] = None


@contextlib.contextmanager
def shared_training():
    """Within it, every Study takes each training set's candidates.Trained from one store keyed
    by the candidates and the training maps' content, so studies of overlapping data (the
    folds of one replayed checkpoint, pipeline/tune/curve.py, whose trainings differ by a value
    or two) build the trees of an equal training set once. A Trained is a function of its maps
    and candidates alone, so nothing chosen or scored changes."""
    global _shared
    outer, _shared = _shared, ({} if _shared is None else _shared)
    try:
        yield
    finally:
        _shared = outer


class Study:
    """Training sets, held-out sets and candidate costs, each computed once and shared by every
    fold and fold-within-a-fold that needs it."""

    def __init__(self, grid, candidates):
        self.grid, self.candidates = grid, candidates
        self._trained, self._held, self._costs, self._leaves = {}, {}, {}, {}
        # the shared store of these candidates' training sets (shared_training), or None
        self._store = None if _shared is None else _shared.setdefault(tuple(candidates), {})

    def trained(self, removal):
        key = frozenset(removal)
        if key not in self._trained:
            maps = cands.measured_maps(self.grid, tuple(sorted(key)), self.candidates)
            if self._store is None:
                self._trained[key] = self._new_trained(maps)
            else:
                content = tuple((d, m.content_key()) for d, m in maps.items())
                if content not in self._store:
                    self._store[content] = self._new_trained(maps)
                self._trained[key] = self._store[content]
        return self._trained[key]

    def _new_trained(self, maps):
        return cands.Trained(cands.with_interpolated(maps, self.candidates), self.candidates)

    def pair(self, train_removal, test_removal, excluding=()):
        """(costs, unscorable) of candidates.Trained.costs: trained without `train_removal`,
        asked at the cells of `test_removal` (without those of `excluding`:
        core.evaluate.fold_maps.FoldGrid.held_out)."""
        key = (frozenset(train_removal), test_removal, excluding)
        if key not in self._costs:
            self._costs[key] = self.trained(train_removal).costs(self.held(test_removal,
                                                                           excluding))
        return self._costs[key]

    def costs(self, train_removal, test_removal, excluding=()):
        """(candidates, cells) penalties for choosing: an unmeasured choice costs the cell's
        worst (core.maps.cell_cost.WORST)."""
        return self.pair(train_removal, test_removal, excluding)[0]

    def scored(self, train_removal, test_removal, excluding=()):
        """The same penalties for the figures: NaN where the choice is unscorable
        (core.maps.cell_cost.UNSCORABLE), as `collsel evaluate` scores."""
        cost, unscorable = self.pair(train_removal, test_removal, excluding)
        return np.where(unscorable, np.nan, cost)

    def leaves(self, removal):
        """Leaf count of every candidate trained without `removal`."""
        key = frozenset(removal)
        if key not in self._leaves:
            self._leaves[key] = self.trained(removal).leaves()
        return self._leaves[key]

    def held(self, removal, excluding=()):
        if (removal, excluding) not in self._held:
            self._held[(removal, excluding)] = self.grid.held_out(removal, excluding)
        return self._held[(removal, excluding)]


def kinds_for(criterion, grid) -> list[str]:
    """The kinds of folds a criterion uses on this data (an error when it asks for missing data)."""
    available = [k for k in ("launches", "P", "m") if grid.folds(k)]
    if criterion == "combined":
        return available
    if criterion not in available:
        why = {"launches": "needs the sweep's journal of 2+ launches (TABLE.launches beside the "
                           "table, or --launches)",
               "P": "needs 3+ communicator sizes with candidates",
               "m": "needs 3+ message sizes with candidates"}[criterion]
        raise InputError(f"--criterion {criterion}: {why}")
    return [criterion]


def one_se_pick(kind_costs, leaves, trivial, se_rule=None, preferred=None) -> tuple[int, dict]:
    """(index, details) by the rule (module docstring); `kind_costs` {kind: (candidates,
    cells)} held-out penalties pooled over the kind's folds, `leaves` per candidate, `trivial`
    the indexes a choice may not be worse than (the MPI's default, the best fixed method),
    `preferred` the index taken when better than them (None: the one-SE rule alone);
    `se_rule` standard errors (SE_RULE when None; 0 takes the best)."""
    kinds = list(kind_costs)
    clipped = [np.minimum(c, CAP) for c in kind_costs.values()]
    score = np.mean([c.mean(axis=1) for c in clipped], axis=0)
    best = int(np.argmin(score))
    var = np.zeros(len(score))
    for c in clipped:
        if c.shape[1] >= 2:
            var += (c - c[best]).var(axis=1, ddof=1) / c.shape[1]
    se = np.sqrt(var) / len(kinds)
    ok = score <= score[best] + (SE_RULE if se_rule is None else se_rule) * se + 1e-12
    for t in trivial:
        ok &= score <= score[t] + 1e-12
    info = {"score": score, "se": se, "best": best}
    if preferred is not None and all(score[preferred] < score[t] for t in trivial):
        return preferred, info
    return int(min(np.flatnonzero(ok), key=lambda i: (leaves[i], score[i], i))), info


@dataclass
class Selection:
    candidates: list
    kinds: list
    criterion: str
    chosen: int
    score: np.ndarray            # per candidate: the criterion's cross-validated figure
    se: np.ndarray
    best: int
    leaves: np.ndarray
    per_kind: dict               # kind -> per candidate {capped, mean, max, cells} arrays
    nested: dict[str, Optional[NestedFigures]]       # kind (and "combined") -> the procedure's
    nested_best: dict[str, Optional[NestedFigures]]  # the same taking the best (no one-SE rule)
    trained: cands.Trained       # every candidate on the whole map
    edge: Optional[Edge] = None
    indexes: dict = field(default_factory=dict)


def _figures(costs_list):
    """Per candidate: capped mean, mean and max over the folds' pooled scorable cells, and
    cells (NaN entries: unscorable, left out)."""
    cat = np.concatenate(costs_list, axis=-1)
    return {"capped": capped(cat), "mean": _nanmean(cat),
            "max": np.max(np.where(np.isfinite(cat), cat, -np.inf), axis=-1),
            "cells": cat.shape[-1]}


def _asked(grid, folds, nested):
    """Every (train removal, test removal, excluded removal) select asks the study for: each
    fold, the inner folds of each one (_inner_keys; only when `nested`) and the edge fold."""
    keys = [(r, r, ()) for k in folds for r in folds[k]]
    if nested:
        keys += [key for k in folds for r in folds[k] for key in _inner_keys(grid, folds, r)]
    edge = grid.edge_fold()
    return keys + ([(edge, edge, ())] if edge is not None else [])


def _costs_of(grid, candidates, keys, leaves_of):
    study = Study(grid, candidates)
    return [study.pair(*key) for key in keys], [study.leaves(r) for r in leaves_of]


def _costs_by_workers(study, folds, workers, nested):
    """The study's costs (and the leaves of the folds' training sets, which the nesting
    orders by) computed by two processes, each a half of the training sets (a training set's
    trees are built once, whichever tests ask them); `nested` as select takes it."""
    by_train = {}
    for key in _asked(study.grid, folds, nested):
        by_train.setdefault(frozenset(key[0]), []).append(key)
    groups = list(by_train.values())
    parts = [[key for g in groups[w::parallel.WORKERS] for key in g]
             for w in range(parallel.WORKERS)]
    outer = [r for k in folds for r in folds[k]]
    leaves_of = [[r for r in outer if any(frozenset(r) == frozenset(key[0]) for key in p)]
                 for p in parts]
    done = workers.starmap(_costs_of, [(study.grid, study.candidates, p, o)
                                       for p, o in zip(parts, leaves_of)])
    for part, owned, (costs, leaves) in zip(parts, leaves_of, done):
        for (train, test, excluding), c in zip(part, costs):
            study._costs[(frozenset(train), test, excluding)] = c
        for r, n in zip(owned, leaves):
            study._leaves[frozenset(r)] = n


def select(grid, criterion="combined", workers=None, nested=True) -> Optional[Selection]:
    """The Selection for a core.evaluate.fold_maps.FoldGrid, or None when no kind of fold exists;
    the folds' costs computed by `workers` (core.evaluate.parallel.pool()) when given. Without
    `nested` (a tree wanted, not its figures: `collsel evaluate` and a replay's curve score the
    tree themselves) the nested figures are left out ({}), and with them the inner folds'
    training sets, most of the work; the choice is the same, made on the outer folds alone."""
    candidates = cands.grid(grid.dmap)
    kinds = kinds_for(criterion, grid)
    if not kinds:
        return None
    study = Study(grid, candidates)
    trivial = [i for i, c in enumerate(candidates) if c.limit in ("defer", "fixed")]
    folds = {k: grid.folds(k) for k in kinds}
    if workers is not None:
        _costs_by_workers(study, folds, workers, nested)
    whole = study.trained(())
    leaves = whole.leaves()
    outer = {k: [study.costs(r, r) for r in folds[k]] for k in kinds}
    preferred = (candidates.index(cands.INTERPOLATED_EXACT)
                 if cands.INTERPOLATED_EXACT in candidates else None)
    chosen, info = one_se_pick({k: np.concatenate(outer[k], axis=1) for k in kinds}, leaves,
                               trivial, preferred=preferred)
    scored = {k: [study.scored(r, r) for r in folds[k]] for k in kinds}
    per_kind = {k: _figures(scored[k]) for k in kinds}
    exact = index_of_candidates(candidates, limit="exact", split=tree.BuildOptions().split,
                                leaf="majority", ties=False, defer=True, interp=False)
    by_rule, by_best = ([_nested(study, folds, scored, trivial, rule, exact, pick)
                         for rule, pick in ((None, preferred), (0.0, None))]
                        if nested else ({}, {}))
    sel = Selection(candidates, kinds, criterion, chosen, info["score"], info["se"],
                    info["best"], leaves, per_kind, _combine(by_rule), _combine(by_best), whole)
    sel.edge = _edge(study, grid, chosen, candidates)
    return sel


def _inner_keys(grid, folds, r):
    """The inner folds of outer fold `r`: the folds the data without `r`'s values has
    (core.evaluate.fold_maps.FoldGrid.folds `without`), trained without both, scored without `r`'s
    cells. An outer P or m fold chooses on P and m folds, as `collsel evaluate
    --candidate=--recommend` reruns the recommendation on the table's rows (no journal); an
    outer launch fold, on the other launches while two are left, else on P and m folds
    (nesting launches across kinds too would cost a training set per launch and value: 149
    instead of 87 on the 5-launch bcast table, beyond build --recommend's 3 s)."""
    if r[0][0] == "launches" and grid.folds("launches", without=r):
        kinds = ["launches"]
    else:
        kinds = [k for k in ("P", "m") if k in folds]
    return [(r + s, s, r) for k in kinds for s in grid.folds(k, without=r)]


def _combine(nested):
    """`nested` with its "combined" entry: the mean over the kinds that have a figure."""
    done = [f for f in nested.values() if f is not None]
    if done:
        nested["combined"] = NestedFigures(
            float(np.mean([f.capped for f in done])), float(np.mean([f.mean for f in done])),
            float(max(f.max for f in done)),
            kinds=tuple(KIND_KEYS[k] for k, f in nested.items() if f is not None))
    return nested


def _nested(study, folds, scored, trivial, se_rule, exact, preferred):
    """Per kind, the NestedFigures of the rule applied inside each outer fold's training set
    (_inner_keys; `exact`, the exact tree's index, where no inner fold is left) and its pick
    scored on the outer held-out cells (`scored`: unscorable cells left out of the figures, as
    `collsel evaluate` does), with the pick of each outer fold; None for a kind where no pick
    could be scored at any of its cells (e.g. P = 2, 8, 16: the P = 8 fold's pick, made on the
    m folds of P = 2 and 16, runs there a method measured at P = 2 only)."""
    out = {}
    for k in folds:
        picks, shown = [], []
        for i, r in enumerate(folds[k]):
            inner = {}
            for train, test, excluding in _inner_keys(study.grid, folds, r):
                costs = study.costs(train, test, excluding)
                if costs.shape[1]:
                    inner.setdefault(test[0][0], []).append(costs)
            # the leaves of the trees as the training set makes them (its one-SE rule's order)
            c = (one_se_pick({j: np.concatenate(v, axis=1) for j, v in inner.items()},
                             study.leaves(r), trivial, se_rule, preferred)[0]
                 if inner else exact)
            picks.append(c)
            shown.append(scored[k][i][c])
        figures = _figures([np.concatenate(shown)])
        if not np.isfinite(figures["mean"]):
            out[k] = None
            continue
        out[k] = NestedFigures(float(figures["capped"]), float(figures["mean"]),
                               float(figures["max"]), int(figures["cells"]),
                               tuple(study.candidates[c].label() for c in picks),
                               tuple(study.candidates[c] for c in picks))
    return out


# The edge decision that defers beyond the measured P (`collsel build` then writes tree.json's
# `beyond`).
EDGE_DEFER = "defer beyond the measured P"


def _edge(study, grid, chosen, candidates):
    """The largest P held out: the chosen candidate built without it and asked there (the edge
    decision extended beyond the measured range) against deferring to the MPI there."""
    removal = grid.edge_fold()
    if removal is None:
        return None
    costs = study.costs(removal, removal)
    held = study.held(removal)
    if not len(held):       # no counted cell there (e.g. the default not measured at that P)
        return None
    default = held.default[np.isfinite(held.default)]
    # by data: on the cells the default is measured, does the edge decision beat deferring?
    on = np.isfinite(held.default)
    beyond = ("no default measured at the edge" if not on.any() else
              "defer (the recommendation defers everywhere)"
              if candidates[chosen].limit == "defer" else
              EDGE_DEFER if capped(held.default[on])
              < capped(costs[chosen][on]) else "keep the edge decision")
    return Edge(int(grid.dmap.axes[0].values[removal[0][1]]), len(held),
                float(capped(costs[chosen])), float(costs[chosen].mean()),
                float(capped(default)) if default.size else None,
                float(default.mean()) if default.size else None, int(default.size), beyond)


def index_of(selection, **match) -> Optional[int]:
    """The index of the first candidate whose fields equal `match`, or None."""
    return index_of_candidates(selection.candidates, **match)


def index_of_candidates(candidates, **match) -> Optional[int]:
    for i, c in enumerate(candidates):
        if all(getattr(c, k) == v for k, v in match.items()):
            return i
    return None
