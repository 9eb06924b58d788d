"""Score method choices against measured bcast times, and measure how far any choice can be
trusted on this machine.

A choice's penalty in a cell is time(choice) / time(measured best) - 1. On a noisy machine even
the measured best of one measurement is not the best of the next, so beside the model the
validation scores `measured best of another launch`: choose from launch k of the sweep journal
(TABLE.launches), score on the mean of the other launches, for every k. That is the
reproducibility floor; a model cannot be shown to be better than it on this data.

Tables measured across nodes (a `ppn` column, and `nodes`, as `collsel sweep --nodes --ppn`
writes) have one cell per (P, m, ppn): each is predicted with its own placement, rank r on node
r // ppn, and the figures are also given per placement ("NODESxPPN").
"""
import os

import numpy as np

from collsel.core.io import csvfile, values
from collsel.core.trees import penalty
from collsel.core.maps.table import read_table
from collsel.errors import InputError, located
from collsel.research.models.predict import model_choices
from collsel.sources.sweep import journal

JOURNAL_NEEDS = ("collective", "comm_size", "msg_size", "algorithm", "segsize", "launch",
                 "median_us")


def cell_ppn(cell):
    """The ranks per node of a cell key: (P, m) has none (the parameters' own mapping)."""
    return cell[2] if len(cell) == 3 else None


def placement(cell):
    """"NODESxPPN" of a cell (P, m, ppn); one node when ppn >= P."""
    P, ppn = cell[0], min(cell[2], cell[0])
    return f"{-(-P // ppn)}x{ppn}"


def ppn_column(table):
    """Ranks per node of every row (ints), or None without a ppn column. `nodes`, when present,
    must agree: nodes x ppn = P (the sweep's placements)."""
    ppn, nodes = table.extra.get("ppn"), table.extra.get("nodes")
    if ppn is None:
        return None
    out = []
    for i, P in enumerate(table.comm_size.tolist()):
        v = values.integer(str(ppn[i]).strip(), "ppn", *values.COMM_SIZE, table.origin[i])
        if nodes is not None:
            n = values.integer(str(nodes[i]).strip(), "nodes", *values.COMM_SIZE,
                               table.origin[i])
            if n * v != P:
                raise InputError(f"{table.origin[i]}: nodes {n} x ppn {v} is not comm_size {P}")
        out.append(v)
    return out


def measured_cells(path):
    """{cell: {(algorithm, segsize): time_us}} of a bcast table, cell = (P, m), or (P, m, ppn)
    when the table has a ppn column; and its launch count."""
    table = read_table(path).select("bcast")
    ppn = ppn_column(table)
    cells = {}
    for i, (P, m, a, s, t) in enumerate(zip(
            table.comm_size.tolist(), table.msg_size.tolist(), table.algorithm.tolist(),
            table.segsize.tolist(), table.time_us.tolist())):
        cells.setdefault((P, m) if ppn is None else (P, m, ppn[i]), {})[(a, s)] = t
    launches = table.extra.get("launches")
    measurements = int(sum(int(x) for x in launches)) if launches is not None else len(table)
    return cells, measurements, table.sources[0].metadata


def _journal_header(path):
    """The column names of a sweep journal (per-method or paired, with or without the
    placement columns), checked to have what the floor needs (read by the one CSV reader, so
    a journal that is not UTF-8 or not a regular file is named as such)."""
    doc = csvfile.read(path, "a sweep journal")
    if doc.header is None:
        raise InputError(f"{path}: empty sweep journal (no header line)")
    header = [c.strip() for c in doc.header]
    missing = [c for c in JOURNAL_NEEDS if c not in header]
    if missing:
        raise located(path, doc.header_line,
                      "not a sweep journal: no " + ", ".join(missing) + " column")
    return header


def journal_launches(path, mapped=False):
    """{launch: cells} from a sweep journal (TABLE.launches of a per-method or paired sweep),
    each launch's median per point. Launches that at least half the points have are kept, and
    the points that have all of them (a paired sweep's --refine adds launches to a few points
    only). `mapped`: cells are (P, m, ppn), the journal must have a ppn column."""
    header = _journal_header(path)
    if mapped and "ppn" not in header:
        raise InputError(f"{path}: the journal has no ppn column, so its launches cannot be "
                         "paired with the table's nodes x ppn cells")
    try:
        _, rows, _, _ = journal.load_existing(path, header, "bcast", repair=False,
                                           launches="seed" in header)
    except OSError as e:
        raise InputError(f"{path}: cannot read the sweep journal: {e.strerror}") from None
    per_point = {}
    for r in rows:
        key = journal.point_key(r)
        if mapped:
            key += (values.integer(r["ppn"], "ppn", *values.COMM_SIZE, path),)
        per_point.setdefault(key, {})[r["launch"]] = float(r["median_us"])
    counts = {}
    for got in per_point.values():
        for k in got:
            counts[k] = counts.get(k, 0) + 1
    launches = sorted(k for k, c in counts.items() if 2 * c >= len(per_point))
    out = {k: {} for k in launches}
    for key, got in per_point.items():
        if all(k in got for k in launches):
            cell = (key[0], key[1]) + key[4:]
            for k in launches:
                out[k].setdefault(cell, {})[(key[2], key[3])] = got[k]
    return out


def candidates(times):
    """The forced methods of a cell (algorithm 0 is Open MPI's own decision, a baseline)."""
    return {k: v for k, v in times.items() if k[0] != 0}


def measured_best(cells):
    return {cell: min(c, key=lambda k: (c[k], k))
            for cell, c in ((cell, candidates(t)) for cell, t in cells.items()) if c}


def score(cells, choice):
    """Hit rate and penalties of `choice` ({(P, m): method}) over the cells both have, scored
    by core.trees.penalty.score against the best forced method, rounded to 0.1 %. A choice that is
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
    return {cell: {k: float(np.mean([launch_cells[n][cell][k] for n in launches]))
                   for k in times} for cell, times in first.items()}


def reproducibility(journal_path, choices, mapped=False):
    """Per launch k: the measured best of launch k and each of `choices` ({name: {cell:
    method}}), scored on the mean of the other launches; and each one's mean over k."""
    per_launch = journal_launches(journal_path, mapped)
    launches = sorted(per_launch)
    if len(launches) < 2:
        return None
    splits = []
    for k in launches:
        others = [n for n in launches if n != k]
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


def _model_choices(par, params_path, cells, model):
    try:
        return model_choices(par, cells, model)
    except ValueError as e:       # a tree across nodes, parameters of one node (no Q)
        raise InputError(f"{params_path}: cannot predict the measured table's cells: {e}") \
            from None


def validate(par, params_path, measured, journal_file=None):
    """The figures `collsel model validate` prints: the model's (tau-Lop, Hockney when the
    parameters have it) and Open MPI's default choices scored on every measured cell and on the
    P (placements, for a table across nodes) the fit did not use, per placement, the
    reproducibility floor from the sweep journal (default: MEASURED.launches if it exists), and
    how many measurements the fit took."""
    cells, n_sweep, meta = measured_cells(measured)
    mapped = any(cell_ppn(c) is not None for c in cells)
    choices = {"model_tlop": _model_choices(par, params_path, cells, "tlop")}
    if par.hockney:
        choices["model_hockney"] = _model_choices(par, params_path, cells, "hockney")
    choices["open_mpi_default"] = {cell: (0, 0) for cell in cells}
    fit_doc = par.doc.get("fit", {})
    fit_P = {int(p) for p in str(fit_doc.get("comm_sizes", "")).split(",") if p}
    result = {"measured": measured, "params": params_path}
    if mapped:
        fitted = {p for p in str(fit_doc.get("placements", "")).split(",") if p}
        held_name, held = "held_out_placements", {k: v for k, v in cells.items()
                                                  if placement(k) not in fitted}
    else:
        held_name, held = "held_out_P", {k: v for k, v in cells.items() if k[0] not in fit_P}
    for name, subset in (("all", cells), (held_name, held)):
        result[name] = {n: score(subset, c) for n, c in choices.items()}
    if mapped:
        groups = {}
        for cell, times in cells.items():
            groups.setdefault(placement(cell), {})[cell] = times
        result["by_placement"] = {
            p: {n: score(sub, c) for n, c in choices.items()}
            for p, sub in sorted(groups.items(), key=lambda g: tuple(map(int, g[0].split("x"))))}
        result["links"] = {"measured": meta.get("links"), "fit": fit_doc.get("cluster")}
    journal_file = journal_file or default_journal(measured)
    if journal_file:
        result["reproducibility"] = reproducibility(journal_file, choices, mapped)
    n_fit = fit_doc.get("measurements")
    result["measurements"] = {"fit": n_fit, "sweep": n_sweep,
                              "fit_fraction_pct": round(100.0 * n_fit / n_sweep, 1)
                              if n_fit else None, "fit_P": sorted(fit_P)}
    if mapped:
        result["measurements"]["fit_placements"] = sorted(fitted)
    return result


CHOOSER_NAMES = {"model_tlop": "tau-Lop, fitted", "model_hockney": "Hockney",
                 "open_mpi_default": "Open MPI default",
                 "measured_best_of_that_launch": "measured best of one launch"}


def summary(result):
    """The validation as Markdown tables (the model issue's layout): every chooser on all
    cells and held-out cells, per placement, and the reproducibility floor."""
    out = []
    for section in [k for k in result if k == "all" or k.startswith("held_out")]:
        out += [f"{section}:", "", "| chooser | cells | picks best | within 5 % | mean | "
                "median | max |", "|---|---|---|---|---|---|---|"]
        for name, s in result[section].items():
            out.append(f"| {CHOOSER_NAMES.get(name, name)} | {s['cells']} | {s['picks_best']} "
                       f"| {s['within_5pct']} | {_pct(s['mean_penalty_pct'])} | "
                       f"{_pct(s['median_penalty_pct'])} | {_pct(s['max_penalty_pct'])} |")
        out.append("")
    if "by_placement" in result:
        names = list(result["all"])
        out += ["mean penalty per placement (nodes x ppn):", "",
                "| placement | cells | " + " | ".join(CHOOSER_NAMES.get(n, n) for n in names)
                + " |", "|---|---|" + "---|" * len(names)]
        for p, scores in result["by_placement"].items():
            out.append(f"| {p} | {scores[names[0]]['cells']} | " + " | ".join(
                _pct(scores[n]["mean_penalty_pct"]) for n in names) + " |")
        out.append("")
    floor = result.get("reproducibility")
    if floor:
        out += [f"reproducibility floor (choose from one launch, score on the mean of the "
                f"other {floor['launches'] - 1}; mean over the {floor['launches']} splits):", "",
                "| chooser | mean penalty |", "|---|---|"]
        out += [f"| {CHOOSER_NAMES.get(n, n)} | {_pct(v)} |"
                for n, v in floor["mean_penalty_pct_over_splits"].items()]
        out.append("")
    m = result["measurements"]
    out.append(f"measurements: fit {m['fit']}, sweep {m['sweep']} "
               f"({_pct(m['fit_fraction_pct'])} of the sweep's)")
    return "\n".join(out) + "\n"


def _pct(v):
    return "-" if v is None else f"{v:.1f} %"
