"""Direct held-out evaluation of build configurations: the protocol collsel is judged by
(docs/guide/evaluate.md), and what `collsel evaluate` runs.

For a protocol, each fold writes the table without the held-out rows, builds the tree with the
configuration exactly as `collsel build` does (core.evaluate.build_config), asks it at every
held-out cell by value as `collsel query` does (its cuts, `beyond` and the MPI's refusals), and
scores each answer by core.maps.cell_cost: against the fastest forced method measured at that cell,
a "defer" at the default's measured time, on the cells where the default was measured (when the
table has a default at all). A named method not measured at that cell is unscorable: counted,
never dropped silently. Beside every configuration, on the same folds: the default (nothing is
built) and the best fixed method chosen on each fold's training rows.

Protocols:
- P: interior leave-one-P-out (each interior P, or an evenly spaced subset of at most
  `max_folds` of those with scorable cells, always the first and last of them);
- m: the same with message sizes;
- edge: the largest P held out (asked beyond the measured range);
- launches: each launch of the sweep's journal held out (at most `max_folds` of them, evenly
  spaced), the tree built on the mean of the other launches' times (as the training map of a
  launch fold is, core.evaluate.fold_maps) with their journal beside it (`--recommend` chooses
  on their launch folds too), asked at the held-out launch's cells and scored by its times:
  the tree used again on the same machine.
"""
import numpy as np

from collsel.core.evaluate import build_config, fold_maps, out_of_sample
from collsel.core.maps import cell_cost, decision_map
from collsel.core.mpi import algorithms
from collsel.core.trees import pruning

PROTOCOLS = ("P", "m", "edge", "launches")
LABELS = {"P": "interior leave-one-P-out", "m": "interior leave-one-m-out",
          "edge": "edge (largest P held out)", "launches": "across launches (one held out)"}
COLUMN = {"P": "comm_size", "m": "msg_size", "edge": "comm_size"}


def held_values(table, protocol, max_folds=None):
    """The values of P (or m) the protocol holds out, one fold each."""
    column = getattr(table, COLUMN[protocol])
    base = table.algorithm == algorithms.BASELINE_ALGORITHM
    known = np.unique(column[~base])
    if protocol == "edge":
        return [int(known[-1])] if known.size >= 2 else []
    scorable = np.isin(known, column[base]) if base.any() else None
    limit = max_folds if max_folds else max(known.size, 1)
    return [int(known[i]) for i in fold_maps.held_out_positions(known.size, scorable, limit)]


def launch_folds(launch_runs, max_folds=None) -> list:
    """The launches held out one at a time: every one of 2+, or an evenly spaced subset of
    `max_folds` of them with the first and the last."""
    ids = sorted(launch_runs)
    if len(ids) < 2:
        return []
    return [ids[i] for i in fold_maps.evenly_spaced(len(ids), max_folds or len(ids))]


def fold_scores(table, value, protocol, configs, workers=None, launch_runs=None):
    """One fold: (penalties per config, the default's, the best fixed method's) over the
    counted held-out cells, NaN where unscorable; each tree built as `collsel build` does
    (core.evaluate.build_config). For "launches", `value` is the launch held out of
    `launch_runs` ({launch: table})."""
    has_default = bool((table.algorithm == algorithms.BASELINE_ALGORITHM).any())
    if protocol == "launches":
        others = {k: t for k, t in launch_runs.items() if k != value}
        train = out_of_sample.mean_table([t for _, t in sorted(others.items())])
        return scores(train, launch_runs[value], configs, has_default, workers,
                      launch_runs=others)
    column = getattr(table, COLUMN[protocol])
    return scores(table.take(column != value), table.take(column == value), configs,
                  has_default, workers)


def scores(train, test, configs, has_default, workers=None, builds=None, launch_runs=None):
    """fold_scores of any training and test rows (a replayed tune scores the tree of what it
    measured on the full table's cells: pipeline/tune/curve.py); `has_default`: whether the
    table the test rows come from has a default at all (core.maps.cell_cost.scored_cells).
    `builds`, a dict a caller keeps to score one training set on several tests: the trees
    built from `train` (config index -> build_config.Built), built once. `launch_runs`: the
    training launches' tables, for a recommendation's launch folds."""
    if not (train.algorithm != algorithms.BASELINE_ALGORITHM).any() or not len(test):
        return None
    held = _held_cells(test, has_default)
    if held is None:
        return None
    values, times, base, reference, methods = held
    out, train_map = [], None
    builds = {} if builds is None else builds
    for i, config in enumerate(configs):
        if i not in builds:     # the tree alone: its own figures are not what is scored here
            builds[i] = build_config.build(train, config, launch_tables=launch_runs,
                                           workers=workers, nested=False)
        built = builds[i]
        loaded = built.loaded()
        decided = loaded.decide(values)
        chosen = _time_of(loaded.methods, decided, methods, times, base)
        out.append(cell_cost.penalty_pct(chosen, reference))
        train_map = train_map or built.dmap       # the first configuration's training map
    fixed = pruning.best_fixed(train_map)
    index = {m: i for i, m in enumerate(methods)}
    at = index.get(train_map.methods[fixed], -1)
    fixed_time = times[:, at] if at >= 0 else np.full(len(reference), np.nan)
    return (out, cell_cost.penalty_pct(base, reference), cell_cost.penalty_pct(fixed_time,
                                                                                 reference))


def _held_cells(test, has_default):
    """The held-out rows as cells: (query values per axis, times (cells, methods) of the forced
    methods, the default's times, the reference, the methods), restricted to the counted cells
    (core.maps.cell_cost.scored_cells with a reference); None when none counts."""
    dmap = decision_map.build_map(test, defer=False) if (
        test.algorithm != algorithms.BASELINE_ALGORITHM).any() else None
    if dmap is None:
        return None
    times = dmap.times.reshape(-1, len(dmap.methods))
    base = dmap.baseline_time.reshape(-1)
    reference = cell_cost.reference_time(times, None)
    keep = cell_cost.scored_cells(np.isfinite(times).any(axis=-1), base, has_default) \
        & np.isfinite(reference)
    grid = np.unravel_index(np.flatnonzero(keep), dmap.shape)
    values = [np.asarray(a.values, dtype=a.dtype)[g] for a, g in zip(dmap.axes, grid)]
    return values, times[keep], base[keep], reference[keep], dmap.methods


def _time_of(tree_methods, decided, methods, times, base):
    """The measured time of each decision (a tree method index per cell): a forced method's
    time at that cell, the default's for "defer", NaN when that method was not measured."""
    index = {m: i for i, m in enumerate(methods)}
    column = np.array([index.get(m, -1) for m in tree_methods], dtype=np.int64)[decided]
    defer = np.array([m.algorithm == algorithms.BASELINE_ALGORITHM for m in tree_methods])[decided]
    got = times[np.arange(len(decided)), np.maximum(column, 0)]
    return np.where(defer, base, np.where(column >= 0, got, np.nan))


def summary(penalties):
    """mean, median, max over the scored cells, with the counts of scored and unscorable."""
    p = np.asarray(penalties, float)
    ok = np.isfinite(p)
    if not ok.any():
        return {"mean": None, "median": None, "max": None, "cells": 0,
                "unscorable": int(p.size)}
    return {"mean": float(p[ok].mean()), "median": float(np.median(p[ok])),
            "max": float(p[ok].max()), "cells": int(ok.sum()), "unscorable": int((~ok).sum())}


def _fold_task(args):
    return fold_scores(*args)


def evaluate(table, configs, protocols, max_folds=None, progress=None, workers=None,
             launch_runs=None):
    """{protocol: {"folds", "held_out", "configs": [summary], "default", "best_fixed"}} for
    the configurations (core.evaluate.build_config.Config) on `table`; None for a protocol with no
    fold. `progress(done, total)` is told after every fold; `workers`
    (core.evaluate.parallel.pool()) score the folds, one fold a task (its trees built in that
    process, as one process builds them: the figures do not depend on the pool);
    `launch_runs` the journal's {launch: table} (sources.launch_tables), for "launches"."""
    plan = [(p, v) for p in protocols
            for v in (launch_folds(launch_runs or {}, max_folds) if p == "launches"
                      else held_values(table, p, max_folds))]
    parts = {p: [] for p in protocols}
    tasks = [(table, value, protocol, configs, None,
              launch_runs if protocol == "launches" else None) for protocol, value in plan]
    scored = (map(_fold_task, tasks) if workers is None
              else workers.imap(_fold_task, tasks, chunksize=1))
    for done, ((protocol, value), got) in enumerate(zip(plan, scored), 1):
        if got is not None:
            parts[protocol].append((value, got))
        if progress:
            progress(done, len(plan))
    out = {}
    for protocol in protocols:
        folds = parts[protocol]
        if not folds:
            out[protocol] = None
            continue
        cat = lambda pick: np.concatenate([pick(g) for _, g in folds])  # noqa: E731
        out[protocol] = {
            "label": LABELS[protocol], "folds": len(folds),
            "held_out": [v for v, _ in folds],
            "configs": [summary(cat(lambda g, k=k: g[0][k])) for k in range(len(configs))],
            "default": summary(cat(lambda g: g[1])),
            "best_fixed": summary(cat(lambda g: g[2]))}
    return out
