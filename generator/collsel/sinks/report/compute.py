"""Everything the report shows, as one Report record (its to_json() is report.json); plots and
page read only that document.

Input: the decision map (and optionally a model's predicted map), a summary of the table it came
from, and typed options; nothing here reads files or knows the command line.
Penalties are in percent, against the exact decision map, over measured cells (core.trees.penalty).
Grids are nested lists indexed [comm_size][msg_size][z]; `null` where a value does not exist.
"""
import math
import os
import shlex
from dataclasses import dataclass

import numpy as np

from collsel.core.evaluate import headline, probe_latency, recommendation as recommendation_figures
from collsel.core.maps import decision_map
from collsel.core.trees import extrapolation, penalty, tree
from collsel.core.mpi.algorithms import BASELINE_ALGORITHM, Method, algorithm_name, describe
from collsel.core.mpi.method_text import mpi_name
from collsel.core.evaluate.recommendation_figures import Recommendation
from collsel.errors import InputError
from collsel.core.mpi import algorithms
from collsel.sinks.emit import ompi_dec_fixed
from collsel.sinks.emit.deploy import deploy_line
from collsel.sinks.report import resolution, robust
from collsel.sinks.report.colours import DEFER_COLOUR, method_colour, variant_label

FORMAT = "collsel-report"
VERSION = 1
# report.json's `baselines` key of the MPI's own decision (algorithm 0 rows), whichever the MPI
# (the name dates from Open MPI only; the page's readers and tests know it by it)
OWN_DECISION = "ompi"

# What one report draws in reasonable time and memory (measured on the 2-core development VM: a
# 2000 x 64 map, 128,000 cells, took 40 s and 0.9 GB and wrote 43 MB). Every panel shows every
# cell of the map and report.json keeps each panel's grids, so the work grows with cells x
# pictured trees; one set of figures is drawn per value of a third axis.
MAX_CELLS = 32768              # cells of the decision map (P x m x z)
MAX_CELL_PANELS = 1 << 20      # cells x pictured trees (max depths 1..K, thresholds, exact)
MAX_Z_VALUES = 16              # third-axis values (a set of figures each)
MAX_THRESHOLDS = 16            # --thresholds values


@dataclass(frozen=True)
class ReportOptions:
    tables: tuple               # the measured tables (named in the page and in its commands)
    collective: str
    z: str = None               # third-axis column, if any
    depths: int = 6             # trees limited to max depth 1..depths
    thresholds: tuple = (60.0, 80.0, 90.0, 95.0)
    budget: float = 5.0         # mean-penalty budget of the recommended tree (percent)
    model_tables: tuple = ()    # predicted tables behind the model map
    split: str = None           # pictured trees' split mode (default: the recommendation's)
    leaf: str = None            # pictured trees' leaf rule (default: the recommendation's)
    tree_dir: str = None        # absolute: where build --recommend writes (or wrote) the tree
    tree_written: bool = False  # its tree.json is there already (collsel tune wrote it)
    deployed: tuple = ()        # ((target, absolute path), ...): files emitted from it already

# Penalty colour bins (the paper's figure 3: white < 5 %, yellow 10-25 %, red >= 50 %),
# lower bound inclusive; "below 0" only occurs for baselines faster than every candidate.
PENALTY_BINS = [
    {"low": None, "high": 0.0, "label": "< 0 % (faster than best candidate)", "colour": "#BFD7EA"},
    {"low": 0.0, "high": 5.0, "label": "0 - 5 %", "colour": "#FFFFFF"},
    {"low": 5.0, "high": 10.0, "label": "5 - 10 %", "colour": "#FFF5B8"},
    {"low": 10.0, "high": 25.0, "label": "10 - 25 %", "colour": "#F7DC3C"},
    {"low": 25.0, "high": 50.0, "label": "25 - 50 %", "colour": "#F29A2E"},
    {"low": 50.0, "high": None, "label": ">= 50 %", "colour": "#C8261E"},
]
NOT_MEASURED = {"label": "not measured (filled cell)", "colour": "#9A9A9A"}
# "Defer to the MPI" (algorithm 0 as a leaf) stands apart from every algorithm's hue: grey.
DEFER = {"label": "defer to the MPI (its own decision, algorithm 0)", "colour": DEFER_COLOUR}
UNSCORED = {"label": "choice not measured in this cell", "colour": "#3A3A3A"}


def count(n, one, many):
    """'1 leaf', '35 leaves'."""
    return f"{n} {one if n == 1 else many}"


def _grid(array, fn=lambda v: v):
    """Nested lists of a NumPy grid, through fn per element."""
    if array.ndim == 1:
        return [fn(v) for v in array.tolist()]
    return [_grid(a, fn) for a in array]


def _num(v):
    return None if v is None or not math.isfinite(v) else float(v)


def _summary(chosen_time, best_time):
    """The penalty summary of a choice as the page shows it (core.trees.penalty.score)."""
    s = penalty.score(chosen_time, best_time)
    return {k: s[k] for k in ("cells", "mean", "median", "max", "min")}


def _panel_penalties(chosen_time, best_time):
    """The penalty grid a panel draws and, per panel (one per third-axis value, one for a 2-D
    map), its summary for the panel's title: {"penalty": grid, "panels": [summary]}."""
    pen = penalty.penalty_pct(chosen_time, best_time)
    planes = [(chosen_time, best_time)] if chosen_time.ndim == 2 else [
        (chosen_time[..., k], best_time[..., k]) for k in range(chosen_time.shape[2])]
    return {"penalty": _grid(pen, _num), "panels": [_summary(t, b) for t, b in planes]}


def _pareto(rows, key):
    """Ids of rows no other row beats on both `key` and mean penalty (ties stay on the front)."""
    pts = [(r[key], r["penalty_mean"], r["id"]) for r in rows if r["penalty_mean"] is not None]
    front = []
    for x, p, i in pts:
        dominated = any(x2 <= x and p2 <= p and (x2 < x or p2 < p) for x2, p2, _ in pts)
        if not dominated:
            front.append(i)
    return sorted(front, key=lambda i: (rows[i][key], rows[i]["penalty_mean"], i))


def _cells_in(dmap, other):
    """Cell index in `other` (a map of another table) of every cell of `dmap`, per axis."""
    idx = []
    for d, (a, b) in enumerate(zip(dmap.axes, other.axes)):
        if a.kind == decision_map.CATEGORY or b.kind == decision_map.CATEGORY:
            missing = [lab for lab in a.labels if lab not in b.labels]
            if missing:
                raise InputError(f"--model-table: no {a.name} value(s) {', '.join(missing)}")
            idx.append(np.array([b.labels.index(lab) for lab in a.labels]))
        else:
            idx.append(tree.cells_of_values([b], [a.values])[0])
    return np.meshgrid(*idx, indexing="ij")


def _losses(dmap, tree_time, other_time, tree_choice, other_choice, other_names=None):
    """Cells where the tree is slower than another choice, worst first; `below_resolution` marks
    the differences the data cannot tell from noise (resolution.below)."""
    lose = (dmap.measured & np.isfinite(tree_time) & np.isfinite(other_time)
            & (tree_time > other_time))
    cells = np.argwhere(lose)
    below = resolution.below(dmap, tree_time, other_time, tree_choice, other_choice)
    loss = penalty.penalty_pct(tree_time[lose], other_time[lose])   # the tree against the other
    out = []
    for k in np.lexsort((np.arange(len(loss)), -loss)):
        c = tuple(int(x) for x in cells[k])
        item = {"cell": list(c), "comm_size": dmap.axes[0].values[c[0]],
                "msg_size": dmap.axes[1].values[c[1]],
                "tree_us": float(tree_time[c]), "other_us": float(other_time[c]),
                "loss_pct": float(loss[k]), "loss_us": float(tree_time[c] - other_time[c]),
                "below_resolution": bool(below[c])}
        if len(c) == 3:
            item["z"] = dmap.axes[2].labels[c[2]]
        if other_names is not None:
            item["other_method"] = other_names[c]
        out.append(item)
    return out


def check_size(dmap, options):
    """An InputError naming the limit when the report of this map would be too large to draw."""
    shape = tuple(len(a.values) for a in dmap.axes)
    cells = int(np.prod(shape))
    grid = " x ".join(f"{n} {a.name}" for n, a in zip(shape, dmap.axes))
    advice = ("report a subset of the table (fewer P, m or z values), or use `collsel stats`, "
              "which has no such limit")
    files = ", ".join(str(t) for t in options.tables) or "report"
    if cells > MAX_CELLS:
        raise InputError(f"{files}: the decision map has {cells:,} cells ({grid}); a report "
                         f"draws at most {MAX_CELLS:,}: {advice}")
    if len(shape) == 3 and shape[2] > MAX_Z_VALUES:
        raise InputError(f"{files}: {shape[2]} values of the third axis {dmap.axes[2].name} "
                         f"(one set of figures each); a report draws at most {MAX_Z_VALUES}: "
                         f"{advice}")
    panels = options.depths + len(options.thresholds) + 1
    if cells * panels > MAX_CELL_PANELS:
        raise InputError(f"{files}: {panels} pictured trees (--depths {options.depths}, "
                         f"{len(options.thresholds)} thresholds, exact) of {cells:,} cells each "
                         f"exceed the {MAX_CELL_PANELS:,} cells a report draws: give fewer "
                         "--depths or --thresholds")


@dataclass(frozen=True)
class Recommended:
    """What the command computed through core.evaluate.recommend (the one implementation of the
    recommended tree) and core.evaluate.out_of_sample, for the report to show."""
    tree: object                # TreeArrays of `collsel build --recommend`
    options: object             # its BuildOptions (split mode, leaf rule)
    figures: Recommendation     # core.evaluate.recommend's figures (why, scored_by, ...)
    command: str                # the `collsel build --recommend` command line
    out_of_sample: dict         # {kind: None or {label, folds, recommended, exact, default,
                                #  best_fixed}} (robust.out_of_sample_table)
    tree_json: bytes = b""      # the tree.json that command writes (the report keeps a copy)
    tree_map: object = None     # the map `tree` is built on when not the report's (interpolated)


@dataclass(frozen=True)
class ProbePairs:
    """The probe-vs-latency pairs of a sweep's journal (issue 19, the paper's figure 2)."""
    journal: str                # where they were read (named on the page)
    pairs: object               # core.evaluate.probe_latency.Pairs, one pair per launch


@dataclass(frozen=True)
class Report:
    """Everything one collective's report shows; to_json() is report.json (without the figures
    page.render_files adds). The parts are JSON-ready: grids are nested lists, `null` where a
    value does not exist."""
    collective: str
    family: str
    mpi: str                    # the MPI's name in text (core.mpi.method_text.mpi_name)
    options: dict               # the report's options as given (tables, z, depths, ...)
    data: dict                  # the table's summary, axes, methods, cells and exact map
    stats: list                 # one row per (split, leaf, limit) tree
    pareto: dict                # the rows on the penalty / size fronts
    pictured: list              # the pictured trees' panels
    baselines: dict             # the MPI's own decision and the model-based choice
    recommendation: dict        # the recommended tree, its panels and deploy steps
    out_of_sample: dict         # sinks.report.robust.out_of_sample_table
    warnings: list              # trees worse than a baseline out of sample
    robust: dict                # the tie-set and candidate-count maps
    probe_latency: dict | None  # the probe-vs-latency section of a probed sweep

    def to_json(self) -> dict:
        """report.json's document, its keys in their order."""
        return {
            "format": FORMAT, "version": VERSION, "collective": self.collective,
            "family": self.family, "mpi": self.mpi, "options": self.options, "data": self.data,
            "stats": self.stats, "pareto": self.pareto, "pictured": self.pictured,
            "baselines": self.baselines, "recommendation": self.recommendation,
            "out_of_sample": self.out_of_sample, "warnings": self.warnings,
            "robust": self.robust, "resolution_us": resolution.RESOLUTION_US,
            "penalty_bins": PENALTY_BINS, "not_measured": NOT_MEASURED, "unscored": UNSCORED,
            "defer": DEFER, "probe_latency": self.probe_latency}


def compute(dmap, table_summary, options, recommended, mmap=None, progress=None, probe=None):
    """The Report of a decision map. `table_summary` is core.maps.table.summary() of the table
    behind it; `recommended` the Recommended tree; `mmap` the decision map of predicted tables
    (the model-based choice); `probe` the ProbePairs of a journal with a probe_us column."""
    check_size(dmap, options)
    model_cells = None if mmap is None else _model_cells(dmap, mmap)   # before the long work
    rows, choices, leaf_ids = _tree_family(dmap, options)
    if progress:
        progress(f"{len(rows)} trees built and scored")
    pareto = _tradeoff(dmap, rows, choices)
    rec = _recommended(dmap, recommended, rows, choices)
    split = options.split or recommended.options.split
    leaf = options.leaf or recommended.options.leaf
    baselines = _baselines(dmap, options, rec["choice_grid"], mmap, model_cells)
    recommendation = _recommendation_box(dmap, options, recommended, rec,
                                         baselines.get(OWN_DECISION))
    oos = robust.out_of_sample_table(dmap, rec["choice_grid"], recommended.out_of_sample)
    if progress:
        progress("baselines scored")
    return Report(
        collective=dmap.collective, family=dmap.family, mpi=mpi_name(dmap.family),
        options=_options_record(options, split, leaf),
        data=_data_summary(dmap, table_summary, recommended), stats=rows, pareto=pareto,
        pictured=_pictured(dmap, rows, choices, leaf_ids, split, leaf), baselines=baselines,
        recommendation=recommendation, out_of_sample=oos, warnings=robust.warnings(oos),
        robust=robust.cell_maps(dmap),
        probe_latency=None if probe is None else probe_latency_section(dmap.collective, probe))


def _model_cells(dmap, mmap):
    """Cell index in the model's map `mmap` of every cell of `dmap`; an InputError when the
    predicted tables have other axes or lack a category value."""
    if len(mmap.axes) != len(dmap.axes):
        raise InputError("--model-table: axes differ from the measured table's")
    return _cells_in(dmap, mmap)


def _options_record(options, split, leaf):
    """report.json's `options`: the report's options as given, and the pictured trees' split
    mode and leaf rule."""
    return {"tables": list(options.tables), "z": options.z, "depths": options.depths,
            "thresholds": list(options.thresholds), "budget": options.budget,
            "model_tables": list(options.model_tables),
            "pictured_split": split, "pictured_leaf": leaf}


def _method_label(method, name):
    """How the page names a method: "defer to the MPI" for algorithm 0, else `name` (its name
    in the table's algorithm family, decision_map.DecisionMap.method_names)."""
    return DEFER["label"] if method.algorithm == BASELINE_ALGORITHM else name


def _axis_summary(axis):
    """One axis of the map as the data summary shows it: name, kind, values, range, count."""
    category = axis.kind == decision_map.CATEGORY
    return {"name": axis.name, "kind": axis.kind, "values": list(axis.values),
            "labels": list(axis.labels), "min": axis.labels[0] if category else axis.values[0],
            "max": axis.labels[-1] if category else axis.values[-1], "count": len(axis.values)}


def _method_summary(dmap, i, name):
    """Method `i` of the map as the data summary shows it: names, parameters, colour, and the
    measured cells where it is the exact map's choice."""
    m = dmap.methods[i]
    defer = m.algorithm == BASELINE_ALGORITHM
    return {"index": i, "name": _method_label(m, name), "defer": defer,
            "algorithm": m.algorithm, "algorithm_name": "defer" if defer else algorithm_name(
                dmap.collective, m.algorithm, dmap.family),
            "variant": variant_label(m), "segsize": m.segsize, "faninout": m.faninout,
            "colour": method_colour(m, dmap.methods),
            "best_cells": int((dmap.measured & (dmap.best == i)).sum())}


def _data_summary(dmap, table_summary, recommended):
    """report.json's `data`: the table's summary (sources, rows, precision, times), the map's
    axes, methods and cell counts, where the recommended tree extrapolates, the measured mask
    and the exact decision map."""
    measured = dmap.measured
    names = dmap.method_names()
    return {
        **{k: table_summary[k] for k in ("sources", "rows", "baseline_rows")},
        "axes": [_axis_summary(a) for a in dmap.axes],
        "methods": [_method_summary(dmap, i, name) for i, name in enumerate(names)],
        "cells": {"total": int(np.prod(dmap.shape)), "measured": int(measured.sum()),
                  "filled": int((~measured).sum())},
        "precision": table_summary["precision"],
        "extrapolation": _extrapolation(dmap, recommended),
        "time_us": table_summary["time_us"],
        "measured": _grid(measured, bool),
        "exact": _grid(dmap.best, int),
    }


def _tree_family(dmap, options):
    """Every (split, leaf, limit) tree of core.trees.tree.limit_family, built by
    core.trees.tree.build_tree and scored by core.trees.penalty.tree_stats: (statistics rows,
    each tree's method per cell, each tree's leaf per cell)."""
    rows, choices, leaf_ids = [], [], []
    for split, leaf, kind, value, opts in tree.limit_family(options.depths, options.thresholds):
        tr = tree.build_tree(dmap, opts)
        stats = penalty.tree_stats(dmap, tr)
        leaf_ids.append(tr.leaf_grid(dmap.shape))
        choices.append(tr.method[leaf_ids[-1]])
        keep = {k: v for k, v in stats.items() if not k.startswith("baseline_")
                and k not in ("measured_cells", "filled_cells")}
        rows.append({"id": len(rows), "split": split, "leaf": leaf, "limit": kind,
                     "value": value, "label": tree.limit_label(kind, value), **keep})
    return rows, choices, leaf_ids


def _tradeoff(dmap, rows, choices):
    """The penalty / size trade-off: the ids of the rows on the Pareto fronts of mean penalty
    against mean depth and against nodes. Marks each row (in place) with whether it is on each
    front and with its choice's excess over the resolution (sinks.report.resolution.excess)."""
    pareto = {"mean_depth": _pareto(rows, "mean_depth"), "nodes": _pareto(rows, "nodes")}
    for r, choice in zip(rows, choices):
        r["pareto_depth"] = r["id"] in pareto["mean_depth"]
        r["pareto_nodes"] = r["id"] in pareto["nodes"]
        r.update(resolution.excess(dmap, choice))
    return pareto


def _choice_penalties(dmap, choice):
    """The penalty panels of a choice grid, scored at its measured times on the measured cells
    (_panel_penalties)."""
    return _panel_penalties(np.where(dmap.measured, penalty.chosen_time(dmap, choice), np.nan),
                            dmap.reference_time)


def _pictured(dmap, rows, choices, leaf_ids, split, leaf):
    """The pictured trees' panels: every limit of the `split` / `leaf` trees, with its choice
    grid, leaf grid and penalty panels."""
    return [{"row": r["id"], "label": r["label"], "limit": r["limit"],
             "choice": _grid(choices[r["id"]], int), "leaf": _grid(leaf_ids[r["id"]], int),
             **_choice_penalties(dmap, choices[r["id"]])}
            for r in rows if r["split"] == split and r["leaf"] == leaf]


def _baselines(dmap, options, rec_choice, mmap, model_cells):
    """report.json's `baselines`: the MPI's own decision where an algorithm-0 row was measured,
    and the model-based choice when there is a model map; each scored on the same cells as the
    recommended tree (`rec_choice`)."""
    baselines = {}
    own = _own_decision(dmap, rec_choice)
    if own is not None:
        baselines[OWN_DECISION] = own
    if mmap is not None:
        baselines["model"] = _model_choice(dmap, mmap, model_cells, options.model_tables,
                                           rec_choice)
    return baselines


def _scored_baseline(dmap, time):
    """A baseline's penalty panels and summary, `time` NaN outside the cells it is scored on."""
    return {**_panel_penalties(time, dmap.reference_time), **_summary(time, dmap.reference_time)}


def _against_tree(dmap, scored, rec_choice, other_time, other_choice, other_names=None):
    """The recommended tree on a baseline's `scored` cells: its penalty summary there and the
    cells where it loses to the baseline (_losses)."""
    rec_time = np.where(scored, penalty.chosen_time(dmap, rec_choice), np.nan)
    return {"tree_same_cells": _summary(rec_time, dmap.reference_time),
            "losses": _losses(dmap, rec_time, other_time, rec_choice, other_choice, other_names)}


def _own_decision(dmap, rec_choice):
    """The MPI's own decision (the algorithm-0 rows) as a baseline, on the measured cells that
    have one; None when no cell has."""
    has = dmap.measured & np.isfinite(dmap.baseline_time)
    if not has.any():
        return None
    mpi = mpi_name(dmap.family)
    defer = None if dmap.defer_index is None else np.full(dmap.shape, dmap.defer_index)
    return {"name": f"{mpi}'s own decision (algorithm 0 rows)", "short": f"{mpi}'s own decision",
            **_scored_baseline(dmap, np.where(has, dmap.baseline_time, np.nan)),
            **_against_tree(dmap, has, rec_choice, dmap.baseline_time, defer)}


def _model_choice(dmap, mmap, model_cells, model_tables, rec_choice):
    """The model-based choice (the fastest method of the predicted map `mmap` per cell) as a
    baseline, scored at the measured times of the methods it picks; a pick not measured in a
    cell is counted in `unmeasured_choices`."""
    picked = mmap.best[tuple(model_cells)].ravel().tolist()
    index = {m: i for i, m in enumerate(dmap.methods)}
    choice = np.array([index.get(mmap.methods[k], -1) for k in picked],
                      dtype=np.int64).reshape(dmap.shape)
    names = np.array([describe(dmap.collective, mmap.methods[k]) for k in picked],
                     dtype=object).reshape(dmap.shape)
    time = np.where(choice >= 0, penalty.chosen_time(dmap, np.maximum(choice, 0)), np.nan)
    scored = dmap.measured & np.isfinite(time)
    return {"name": "model-based choice (argmin of predicted times)",
            "short": "model-based choice", "sources": list(model_tables),
            "unmeasured_choices": int((dmap.measured & ~scored).sum()),
            **_scored_baseline(dmap, np.where(scored, time, np.nan)),
            **_against_tree(dmap, scored, rec_choice, time, np.maximum(choice, 0), names)}


def _defers_everywhere(rec):
    """Whether the recommended tree defers to the MPI in every cell (then deploying it changes
    nothing)."""
    return bool(rec["methods"]) and all(m["name"] == DEFER["label"] for m in rec["methods"])


def _deploy_box(dmap, options, rec):
    """The recommendation's deploy steps (deploy_steps); none for a tree that defers
    everywhere, and no C step for an Open MPI tree with a hierarchical leaf."""
    if _defers_everywhere(rec):
        return []
    hier = any(algorithms.hier_parts(dmap.methods[m["index"]].algorithm)
               for m in rec["methods"]) if dmap.family == "openmpi" else False
    return deploy_steps(dmap.collective, dmap.family, options.z, options.tree_dir,
                        options.deployed, not hier)


def _recommendation_box(dmap, options, recommended, rec, own):
    """report.json's `recommendation`: the recommended tree's block (_recommended) with its
    panels, headline figures (core.evaluate.headline, against the MPI's own decision `own`
    when measured), deploy steps and commands."""
    rec_choice = rec["choice_grid"]
    defers = _defers_everywhere(rec)
    steps = _deploy_box(dmap, options, rec)
    figure = headline.headline(recommended.figures, defers, (rec["penalty_mean"], None)
                               if own is None else (own["tree_same_cells"]["mean"], own["mean"]))
    box = {k: v for k, v in rec.items() if k != "choice_grid"}
    box.update(
        budget=options.budget, choice=_grid(rec_choice, int), **_choice_penalties(dmap, rec_choice),
        imputed_choice=_grid(dmap.measured & np.take_along_axis(
            dmap.imputed, rec_choice[..., None], axis=-1)[..., 0], bool),
        defers_everywhere=defers,
        tree_json=os.path.join(options.tree_dir or f"tree-{dmap.collective}", "tree.json"),
        tree_written=options.tree_written,
        headline={"tree": figure.tree, "default": figure.default, "basis": figure.basis(),
                  "out_of_sample": figure.out_of_sample},
        deploy=steps, commands=[recommended.command] + [x["emit"] for x in steps if x["emit"]])
    return box


def probe_latency_section(collective, probe):
    """Pearson's r and Spearman's rho per (P, m, method) (core.evaluate.probe_latency.correlations,
    the one implementation `collsel stats --probe-latency` prints too) and the pairs of the plot
    (core.evaluate.probe_latency.panels)."""
    rows = probe_latency.correlations(probe.pairs)
    groups = [dict(r, method="default (0)" if r["algorithm"] == BASELINE_ALGORITHM
                   else Method(r["algorithm"], r["segsize"], 0).label(collective))
              for r in rows]
    return {
        "journal": probe.journal, "pairs": int(probe.pairs.probe_us.size),
        "min_pairs": probe_latency.MIN_PAIRS, "groups": groups,
        "median_pearson": float(np.median([r["pearson"] for r in rows])) if rows else None,
        "median_spearman": float(np.median([r["spearman"] for r in rows])) if rows else None,
        "panels": [{"comm_size": p.comm_size, "msg_size": p.msg_size, "default": p.row,
                    "probe_us": p.probe_us.tolist(), "time_us": p.time_us.tolist(),
                    "level": [str(v) for v in p.level]}
                   for p in probe_latency.panels(probe.pairs, rows)],
    }


def _extrapolation(dmap, recommended):
    """The measured P and what the recommended tree does outside them (core.trees.extrapolation):
    beyond the largest it defers when its tree.json says so (core.evaluate.recommendation's edge
    decision, as `build --recommend` writes it)."""
    p_values = [int(v) for v in dmap.axes[0].values]
    defers = recommendation_figures.beyond_decision(None, recommended.figures) == "defer"
    return {"p": extrapolation.p_text(p_values), "one_p": extrapolation.one_p(p_values),
            "note": extrapolation.tree_note(p_values, p_values[-1] if defers else None)}


def deploy_steps(collective, family, z, tree_dir=None, deployed=(), c_files=True):
    """How the tree `build --recommend` writes to `tree_dir`/tree.json (absolute; default
    tree-C in the current directory) goes into use, per target: what it is for, the emit
    command, and the line that runs an MPI program with the emitted file in effect
    (sinks.emit.deploy, the text the emitters write in their headers). A target in `deployed`
    ((target, path) pairs: files emitted already, such as collsel tune's rules file and blob
    directory) has no emit command: its line runs that file as it is; nor have the C files the
    build itself writes beside tree.json (`c_files`: the tree has no hierarchical leaf, which C
    cannot run: without them there is no C step)."""
    out = tree_dir or f"tree-{collective}"
    given = dict(deployed)
    steps = []

    def step(target, file, what, by_build=False):
        file = given.get(target, os.path.join(out, file))
        emitted = target in given or by_build
        steps.append({"target": target, "what": what, "file": file,
                      "written_by": "build" if by_build else "given" if emitted else None,
                      "emit": None if emitted else
                      shlex.join(["collsel", "emit", "--target", target,
                                  os.path.join(out, "tree.json"), "--out", file]),
                      "run": deploy_line(target, file, family)})

    # every target serves the 14 collectives: Open MPI's rules file (core.mpi.rules_size converts
    # m), MPICH's selection file, Intel MPI's tuning file (P x m), libcollsel and coll/collsel
    # (the blob: not Intel's, whose presets are read in MPI_Init), the patched dec_fixed
    if family == "intel":
        if z is None:
            step("intel-json", "intel_tuning.json", "Intel MPI's JSON tuning file, read from "
                 "I_MPI_TUNING (no rebuild)")
    elif z in (None, "ppn"):
        if family != "mpich":
            step("ompi-rules", "rules.conf", "Open MPI's coll/tuned dynamic rules file "
                 "(no rebuild)")
        else:
            step("mpich-json", "mpich_selection.json", "MPICH's collective selection "
                 "file (no rebuild)")
    if family != "intel":
        step("blob", f"{collective}.bin", "libcollsel, the PMPI library" + (
            "" if family == "mpich" else ", or Open MPI's coll/collsel component")
            + " (no rebuild)")
    if c_files:     # build writes decision.c/.h and (Open MPI, 2-D) the dec_fixed body
        step("c", "decision.c", "a C decision function (with decision.h), for code that "
             "forces the MPI's algorithm", by_build=True)
        if family != "mpich" and not z and collective in ompi_dec_fixed.SPECS:
            step("ompi-dec-fixed", f"ompi_{collective}_intra_dec_fixed.c",
                 "Open MPI's fixed decision, compiled into a patched Open MPI", by_build=True)
    return steps


DEPLOY_TARGETS = ("ompi-rules", "mpich-json", "intel-json", "blob", "c", "ompi-dec-fixed")


def _methods_used(dmap, choice):
    """The methods a choice grid picks, named in the table's algorithm family, with the cells
    each decides, most first."""
    index, counts = np.unique(choice, return_counts=True)
    names = dmap.method_names()
    return [{"index": int(i), "cells": int(n), "name": _method_label(dmap.methods[i], names[i])}
            for n, i in sorted(zip(counts.tolist(), index.tolist()), key=lambda x: (-x[0], x[1]))]


def _recommended(dmap, recommended, rows, choices):
    """The recommendation block: the tree `collsel build --recommend` makes
    (core.evaluate.recommend, computed by the command and passed in), scored in sample like every
    row."""
    t, on = recommended.tree, recommended.tree_map or dmap
    stats = penalty.tree_stats(on, t)       # the same measured cells on either map
    at = decision_map.cells_within(on, dmap)
    choice = t.method_grid(on.shape)[at]
    figures = recommended.figures
    # the row of the statistics table that is the same tree, if one is
    same = [r["id"] for r, c in zip(rows, choices) if r["nodes"] == t.node_count
            and (r["split"], r["leaf"]) == (recommended.options.split, recommended.options.leaf)
            and np.array_equal(c, choice)]
    return {"split": recommended.options.split, "leaf": recommended.options.leaf,
            "label": f"pruned, {count(stats['leaves'], 'leaf', 'leaves')}",
            "row": same[0] if same else None,
            **{k: stats[k] for k in ("nodes", "leaves", "max_depth", "mean_depth",
                                      "penalty_mean", "penalty_median", "penalty_max",
                                      "unmeasured_choices")},
            **resolution.excess(dmap, choice),
            "scored_by": figures.scored_by, "why": figures.why,
            "deferred": figures.deferred, "deferral_advised": figures.deferral_advised,
            "build_command": recommended.command, "choice_grid": choice,
            "methods": _methods_used(dmap, choice), "cells": int(choice.size),
            "leaf_ids": _grid(t.leaf_grid(on.shape)[at], int)}
