"""Score method choices against measured bcast times, and measure how far any choice can be
trusted on this machine.

A choice's penalty in a cell is time(choice) / time(measured best) - 1. On a noisy machine even
the measured best of one measurement is not the best of the next, so beside the model the
validation scores `measured best of another launch`: choose from launch k of the sweep journal
(TABLE.launches), score on the mean of the other launches, for every k. That is the
reproducibility floor; a model cannot be shown to be better than it on this data.
"""
import os

import numpy as np

from collsel.core import penalty
from collsel.core.table import read_table
from collsel.errors import InputError
from collsel.sources.models.predict import model_choices
from collsel.sources.sweep import journal


def measured_cells(path):
    """{(P, m): {(algorithm, segsize): time_us}} of a bcast table, and its launch count."""
    table = read_table(path).select("bcast")
    cells = {}
    for P, m, a, s, t in zip(table.comm_size.tolist(), table.msg_size.tolist(),
                             table.algorithm.tolist(), table.segsize.tolist(),
                             table.time_us.tolist()):
        cells.setdefault((P, m), {})[(a, s)] = t
    launches = table.extra.get("launches")
    measurements = int(sum(int(x) for x in launches)) if launches is not None else len(table)
    return cells, measurements


def journal_launches(path):
    """{launch: cells} from a sweep journal, each launch's median per point, restricted to the
    points every launch has."""
    try:
        _, rows, _ = journal.load_existing(path, journal.JOURNAL_COLUMNS, "bcast", repair=False)
    except OSError as e:
        raise InputError(f"{path}: cannot read the sweep journal: {e.strerror}") from None
    per_point = {}
    for r in rows:
        per_point.setdefault(journal.point_key(r), {})[r["launch"]] = float(r["median_us"])
    launches = sorted({r["launch"] for r in rows})
    out = {k: {} for k in launches}
    for (P, m, a, s), got in per_point.items():
        if len(got) == len(launches):
            for k in launches:
                out[k].setdefault((P, m), {})[(a, s)] = got[k]
    return out


def candidates(times):
    """The forced methods of a cell (algorithm 0 is Open MPI's own decision, a baseline)."""
    return {k: v for k, v in times.items() if k[0] != 0}


def measured_best(cells):
    return {cell: min(c, key=lambda k: (c[k], k))
            for cell, c in ((cell, candidates(t)) for cell, t in cells.items()) if c}


def score(cells, choice):
    """Hit rate and penalties of `choice` ({(P, m): method}) over the cells both have, scored
    by core.penalty.score against the best forced method, rounded to 0.1 %. A choice that is
    not a candidate (algorithm 0, Open MPI's own decision) never counts as picking the best."""
    chosen, best, candidate = [], [], []
    for cell, times in sorted(cells.items()):
        cand = candidates(times)
        if not cand or choice.get(cell) not in times:
            continue
        chosen.append(times[choice[cell]])
        best.append(min(cand.values()))
        candidate.append(choice[cell] in cand)
    s = penalty.score(chosen, best)
    hits = penalty.score(np.where(candidate, chosen, np.nan), best)["picks_best"]
    rounded = {k: None if s[k] is None else round(s[k], 1) for k in ("mean", "median", "max")}
    return {"cells": s["cells"], "picks_best": hits,
            "picks_best_pct": round(100.0 * hits / max(s["cells"], 1), 1),
            "within_5pct": s["within_5pct"],
            "mean_penalty_pct": rounded["mean"],
            "median_penalty_pct": rounded["median"],
            "max_penalty_pct": rounded["max"]}


def mean_cells(launch_cells, launches):
    """Cells whose times are the mean over `launches` (as the sweep's time_us)."""
    first = launch_cells[launches[0]]
    return {cell: {k: float(np.mean([launch_cells[l][cell][k] for l in launches]))
                   for k in times} for cell, times in first.items()}


def reproducibility(journal_path, choices):
    """Per launch k: the measured best of launch k and each of `choices` ({name: {(P, m):
    method}}), scored on the mean of the other launches; and each one's mean over k."""
    per_launch = journal_launches(journal_path)
    launches = sorted(per_launch)
    if len(launches) < 2:
        return None
    splits = []
    for k in launches:
        others = [l for l in launches if l != k]
        truth = mean_cells(per_launch, others)
        split = {"choose_from_launch": k, "scored_on_launches": others,
                 "measured_best_of_that_launch": score(truth, measured_best(per_launch[k]))}
        split.update({name: score(truth, choice) for name, choice in choices.items()})
        splits.append(split)
    names = [n for n in splits[0] if isinstance(splits[0][n], dict)]
    return {"journal": journal_path, "launches": len(launches), "splits": splits,
            "mean_penalty_pct_over_splits": {n: _mean_of(s[n]["mean_penalty_pct"] for s in splits)
                                             for n in names}}


def _mean_of(values):
    values = [v for v in values if v is not None]
    return round(float(np.mean(values)), 1) if values else None


def default_journal(measured_path):
    path = journal.journal_path(measured_path)
    return path if os.path.exists(path) else None


def validate(par, params_path, measured, journal_file=None):
    """The figures `collsel model validate` prints: the model's (tau-Lop, Hockney when the
    parameters have it) and Open MPI's default choices scored on every measured cell and on the
    P the fit did not use, the reproducibility floor from the sweep journal (default:
    MEASURED.launches if it exists), and how many measurements the fit took."""
    cells, n_sweep = measured_cells(measured)
    choices = {"model_tlop": model_choices(par, cells, "tlop")}
    if par.hockney:
        choices["model_hockney"] = model_choices(par, cells, "hockney")
    choices["open_mpi_default"] = {cell: (0, 0) for cell in cells}
    fit_P = {int(p) for p in str(par.doc.get("fit", {}).get("comm_sizes", "")).split(",") if p}
    held = {k: v for k, v in cells.items() if k[0] not in fit_P}
    result = {"measured": measured, "params": params_path}
    for name, subset in (("all", cells), ("held_out_P", held)):
        result[name] = {n: score(subset, c) for n, c in choices.items()}
    journal_file = journal_file or default_journal(measured)
    if journal_file:
        result["reproducibility"] = reproducibility(journal_file, choices)
    n_fit = par.doc.get("fit", {}).get("measurements")
    result["measurements"] = {"fit": n_fit, "sweep": n_sweep,
                              "fit_fraction_pct": round(100.0 * n_fit / n_sweep, 1)
                              if n_fit else None, "fit_P": sorted(fit_P)}
    return result
