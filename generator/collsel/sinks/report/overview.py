"""The overview page of a report over several collectives: one row per collective (its methods
and cells, the recommended tree's leaves, its out-of-sample penalty beside the MPI's default's
and the best fixed method's, the criterion that chose it), each linking to the collective's own
page. Input: each collective's Report (compute.compute) and its recommendation's figures
(core.evaluate.recommend's, which report.json keeps only as text); nothing here reads files or knows
the command line.
"""
import json
from dataclasses import dataclass

from collsel.core.evaluate.recommendation_figures import Recommendation
from collsel.sinks.emit import render
from collsel.sinks.report import page
from collsel.sinks.report.compute import Report

FORMAT = "collsel-report-overview"
VERSION = 1
OVERVIEW_JSON = "overview.json"

# The headline held-out figure: across launches when the sweep's journal gives them (the
# issue's "across-launch out-of-sample penalty"), else leave-one-P-out, else leave-one-m-out.
HEADLINE_KINDS = ("launches", "leave_one_P_out", "leave_one_m_out")
SHORT_LABELS = {"launches": "across launches", "leave_one_P_out": "leave-one-P-out",
                "leave_one_m_out": "leave-one-m-out"}
CHOICES = ("recommended", "default", "best_fixed")


@dataclass(frozen=True)
class CollectiveReport:
    link: str          # the collective's own page, relative to the overview's index.html
    report: Report     # compute.compute's record (its to_json() is report.json)
    figures: Recommendation     # the recommendation's figures (core.evaluate.recommend)


def _held_out(report):
    """The headline held-out column: {kind, label, folds, and per choice its mean penalty and
    cells}, or None when no out-of-sample kind was computed."""
    oos = report.out_of_sample
    at = {c["kind"]: i for i, c in enumerate(oos["columns"]) if c.get("available")}
    kind = next((k for k in HEADLINE_KINDS if k in at), None)
    if kind is None:
        return None
    column = oos["columns"][at[kind]]
    rows = {r["key"]: r for r in oos["rows"]}
    out = {"kind": kind, "label": SHORT_LABELS[kind], "folds": column["folds"]}
    for key in CHOICES:
        cell = rows[key]["cells"][at[kind]] if key in rows else None
        out[key] = None if not cell or cell.get("mean") is None else cell["mean"]
        out[f"{key}_cells"] = None if not cell else cell.get("cells")
    out["best_fixed_method"] = rows.get("best_fixed", {}).get("method")
    return out


def _criterion(figures):
    """The selection criterion's own figures (mean penalty, percent) of the chosen tree,
    the MPI's default and the best fixed method, and the nested figure of the whole selection;
    None when nothing was selected (no out-of-sample data: the exact tree)."""
    selected = figures.selection
    if selected is None:
        return None
    default, best_fixed = (selected.compared.get(k) for k in ("default", "best_fixed"))
    nested = figures.nested_figure()
    return {"name": figures.criterion, "scored_by": selected.scored_by,
            "statistic": selected.statistic,
            "recommended": selected.chosen.criterion_capped,
            "default": None if default is None else default.criterion_capped,
            "best_fixed": None if best_fixed is None else best_fixed.criterion_capped,
            "nested_capped": None if nested is None else nested.capped,
            "nested_mean": None if nested is None else nested.mean}


def _row(part):
    r = part.report
    rec, data = r.recommendation, r.data
    held = _held_out(r)
    gain = (None if held is None or None in (held["default"], held["recommended"])
            else held["default"] - held["recommended"])
    return {"collective": r.collective, "mpi": r.mpi, "family": r.family,
            "link": part.link,
            "methods": sum(1 for m in data["methods"] if not m["defer"]),
            "comm_sizes": data["axes"][0]["count"], "msg_sizes": data["axes"][1]["count"],
            "cells": data["cells"]["total"], "measured_cells": data["cells"]["measured"],
            "leaves": rec["leaves"], "nodes": rec["nodes"], "deferred": rec["deferred"],
            "why": rec["why"], "held_out": held, "criterion": _criterion(part.figures),
            "gain_over_default": gain,
            "warnings": sum(1 for w in r.warnings if w["tree"] == "recommended")}


def overview(parts) -> dict:
    """overview.json's dict: the rows in the order given, and the collective whose recommended
    tree gains most over the default held out (None when no row has both figures)."""
    rows = [_row(p) for p in parts]
    gains = [r for r in rows if r["gain_over_default"] is not None]
    best = max(gains, key=lambda r: r["gain_over_default"])["collective"] if gains else None
    statistic = next((r["criterion"]["statistic"] for r in rows if r["criterion"]), None)
    return {"format": FORMAT, "version": VERSION, "collectives": rows,
            "largest_gain": best, "criterion_statistic": statistic}


def _pct(v):
    return "–" if v is None else f"{v:.2f}%"


def text_lines(doc) -> list[str]:
    """The overview as a fixed-width table for the terminal, one line per collective."""
    head = (f"{'collective':<21} {'methods':>7} {'cells':>6} {'leaves':>6}  "
            f"{'held out':<16} {'default':>8} {'tree':>8} {'fixed':>8}  criterion (mean)")
    lines = [head]
    for r in doc["collectives"]:
        h, c = r["held_out"] or {}, r["criterion"]
        crit = ("none (no out-of-sample data: exact tree)" if c is None else
                f"{c['name']}: tree {_pct(c['recommended'])}, default {_pct(c['default'])}, "
                f"fixed {_pct(c['best_fixed'])}")
        lines.append(f"{r['collective']:<21} {r['methods']:>7} {r['cells']:>6} {r['leaves']:>6}  "
                     f"{h.get('label', 'none'):<16} {_pct(h.get('default')):>8} "
                     f"{_pct(h.get('recommended')):>8} {_pct(h.get('best_fixed')):>8}  {crit}")
    return lines


def render_files(doc) -> dict[str, bytes]:
    """{file name: bytes}: the overview page (index.html) and overview.json."""
    text = page.dumps(doc)
    html = render("report_overview.html.j2", o=json.loads(text), fmt=page.Format)
    return {OVERVIEW_JSON: text.encode("utf-8"), "index.html": html.encode("utf-8")}
