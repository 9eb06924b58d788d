"""make scoreboard: issue 30's Must-show table. Per table, the recommended tree's nested
out-of-sample penalty (its choice included), leaves and criterion, beside the MPI's default,
the best fixed method, the exact tree, the depth-3 penalty-leaf tree and the best candidate of
the grid (regret = recommended - that candidate's nested figure, like with like), and the edge
experiment (the largest P held out: the tree's edge decision kept there vs deferring).

    python speed/recommend/scoreboard.py TABLE[:COLLECTIVE]... [--before DIR]

Figures are capped mean penalties (%) on the fold kinds the nested figure covers
(core.evaluate.recommendation.baseline_on_nested_folds): a trivial or fixed-size tree is not
chosen, so its cross-validated figure is honest as it is. A Trieste fixture
(trieste_tanjaderin_*.csv) is mapped to the canonical columns first. Then the two constructed
cases, made from the Trieste bcast fixture: a sparse table (at every other communicator size,
every method with an even id >= 2 deleted) and one injected 1,000x outlier (the best method's
time at the middle cell), each recommended by this checkout and, with --before DIR (a checkout
of the code before the recommendation work), by that one: leaves and the out-of-sample means
stats.json records (the tree rebuilt on each fold).
"""
import argparse
import csv
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

from collsel.sources import launch_tables
from collsel.core.evaluate import parallel, recommendation
from collsel.core.maps import decision_map, table as tables
from collsel.core.evaluate.model_selection import LABELS

TRIESTE = "trieste_tanjaderin_"
COMPARED = ("default", "best_fixed", "exact", "depth_3_penalty")


def canonical(path, directory):
    """A Trieste fixture as a canonical table (else `path` itself)."""
    path = pathlib.Path(path)
    if not path.name.startswith(TRIESTE):
        return path
    collective = path.name[len(TRIESTE):].split("_")[0]
    out = pathlib.Path(directory) / f"trieste_{collective}.csv"
    with open(path, newline="") as src, open(out, "w") as dst:
        dst.write(f"# source={path.name}\ncollective,comm_size,msg_size,algorithm,segsize,"
                  "time_us\n")
        for row in csv.DictReader(src):
            dst.write(f"{collective},{row['Processes']},{row['Size']},{row['Algorithm']},0,"
                      f"{row['Latency(us)']}\n")
    return out


def figures_of(path, collective, workers):
    table = tables.read_tables([path])
    collective = collective or sorted(set(table.collective.tolist()))[0]
    dmap = decision_map.build_map(table.select(collective))
    journal = pathlib.Path(str(path) + ".launches")
    launches = (launch_tables.read_launch_tables(journal, collective) if journal.exists()
                else {})
    _, figures = recommendation.choose(dmap, launches, decision_map.MapSettings(), "combined",
                                       workers)
    return collective, dmap, figures


def row(name, collective, dmap, figures):
    if not figures.get("kinds"):
        return f"| {name} | {collective} | no folds |" + " |" * 10
    nested = figures["nested"].get("combined")
    fall = figures.get("fallback")
    rec = recommendation.recommended_on_nested_folds(figures)
    kinds = (nested or {}).get("kinds") or figures["kinds"]
    on_nested = {n: recommendation.baseline_on_nested_folds(figures, n) for n in COMPARED}
    best = figures["nested_best"].get("combined")
    f = lambda x: "-" if x is None else f"{x:.2f}"  # noqa: E731
    leaves = figures["chosen"]["leaves"]
    what = ("defer" if figures["deferred"] else "fixed"
            if figures["chosen"]["candidate"].startswith("best single") else f"{leaves}")
    edge = figures.get("edge")
    edge_text = "-"
    if edge and edge["default_capped"] is not None:
        edge_text = (f"P={edge['comm_size']}: tree {edge['tree_capped']:.2f} vs default "
                     f"{edge['default_capped']:.2f}: {edge['beyond']}")
    regret = None if rec is None or best is None else rec - best["capped"]
    short = ", ".join(LABELS.get(k, k) for k in (
        {"leave_one_P_out": "P", "leave_one_m_out": "m"}.get(k, k) for k in kinds))
    return (f"| {name} | {collective} | {short} | {f(rec)}{' (fallback)' if fall else ''} | "
            f"{what} | {f(on_nested['default'])} | {f(on_nested['best_fixed'])} | "
            f"{f(on_nested['exact'])} | {f(on_nested['depth_3_penalty'])} | "
            f"{f(best['capped'] if best else None)} | {f(regret)} | {edge_text} |")


HEADER = ("| table | collective | nested kinds | recommended (nested, %) | "
          "leaves | default | best fixed | exact tree | "
          "depth 3 penalty | best candidate (nested) | regret | edge: largest P held out "
          "(capped %) |\n|" + "---|" * 12)


def sparse(src, out):
    """Trieste bcast with every method of even id >= 2 deleted at every other P."""
    t = tables.read_tables([src])
    sizes = np.unique(t.comm_size)
    odd = np.isin(t.comm_size, sizes[1::2])
    drop = odd & (t.algorithm >= 2) & (t.algorithm % 2 == 0)
    write(t.take(~drop), out)


def outlier(src, out):
    """Trieste bcast with the best method's time at its middle cell multiplied by 1,000."""
    t = tables.read_tables([src])
    t = t.take(np.arange(len(t)))
    t.time_us = t.time_us.copy()
    p = np.unique(t.comm_size)[len(np.unique(t.comm_size)) // 2]
    m = np.unique(t.msg_size)[len(np.unique(t.msg_size)) // 2]
    at = np.flatnonzero((t.comm_size == p) & (t.msg_size == m) & (t.algorithm != 0))
    t.time_us[at[np.argmin(t.time_us[at])]] *= 1000
    write(t, out)


def write(t, out):
    with open(out, "w") as f:
        f.write("collective,comm_size,msg_size,algorithm,segsize,time_us\n")
        for c, p, m, a, s, us in zip(t.collective, t.comm_size, t.msg_size, t.algorithm,
                                     t.segsize, t.time_us):
            f.write(f"{c},{p},{m},{a},{s},{float(us)!r}\n")


def recommended(code, table, out):
    """(leaves, {kind: tree mean}, the recommendation's own figure text) of
    `collsel build --recommend` run by the checkout `code` (None: this one)."""
    env = dict(os.environ)
    if code:
        env["PYTHONPATH"] = str(pathlib.Path(code) / "generator")
    r = subprocess.run([sys.executable, "-m", "collsel.cli", "build", str(table), "--collective",
                        "bcast", "--recommend", "--out", str(out)], capture_output=True,
                       text=True, env=env)
    if r.returncode:
        return None, {}, r.stderr.strip()[:200]
    stats = json.loads((pathlib.Path(out) / "stats.json").read_text())
    oos = {k: v["tree"]["mean"] for k, v in stats["out_of_sample"].items() if v}
    oos["default"] = {k: v["default"]["mean"] for k, v in stats["out_of_sample"].items() if v}
    line = [x for x in r.stdout.splitlines() if x.startswith("recommended")]
    return stats["leaves"], oos, (line[0][:160] if line else "")


def constructed(trieste_bcast, before, directory):
    print("\n| constructed case | code | leaves | leave-one-P-out mean % | leave-one-m-out mean % "
          "| default (P / m) | recommendation |\n|" + "---|" * 7)
    for name, make in (("sparse: even-id methods deleted at every other P", sparse),
                       ("one 1,000x outlier cell", outlier)):
        table = pathlib.Path(directory) / (make.__name__ + ".csv")
        make(trieste_bcast, table)
        for label, code in (("before", before), ("now", None)):
            if label == "before" and not before:
                continue
            leaves, oos, line = recommended(code, table, pathlib.Path(directory) / label)
            f = lambda k: "-" if oos.get(k) is None else f"{oos[k]:.2f}"  # noqa: E731
            d = oos.get("default", {})
            print(f"| {name} | {label} | {leaves} | {f('leave_one_P_out')} | "
                  f"{f('leave_one_m_out')} | {d.get('leave_one_P_out', 0):.2f} / "
                  f"{d.get('leave_one_m_out', 0):.2f} | {line} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("tables", nargs="+", metavar="TABLE[:COLLECTIVE]")
    p.add_argument("--before", metavar="DIR", help="a checkout of the code before issue 30")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as directory, parallel.pool() as workers:
        print(HEADER)
        trieste_bcast = None
        for spec in args.tables:
            path, _, collective = spec.partition(":")
            table = canonical(path, directory)
            if table.name == "trieste_bcast.csv":
                trieste_bcast = table
            collective, dmap, figures = figures_of(table, collective or None, workers)
            shown = pathlib.Path(path)
            name = shown.name if shown.name.startswith(TRIESTE) else \
                f"{shown.parent.name}/{shown.name}"
            print(row(name, collective, dmap, figures), flush=True)
        if trieste_bcast is not None:
            constructed(trieste_bcast, args.before, directory)


if __name__ == "__main__":
    main()
