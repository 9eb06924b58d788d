"""Issue 40's comparison of tune's measuring strategies by replay: per table, `collsel tune
--replay TABLE --strategy S --budget B%` for each strategy and budget; the tree each run ends
with scored by its curve's last point (interior leave-one-P-out and leave-one-m-out on the full
table, core/evaluate/held_out.py through pipeline/tune/curve.score), beside the tree built from the
full table itself, scored the same way once per table.

Prints one line per table: the full table's figures, then per strategy the cost (% of the full
table's measuring cost, the run's own spending) of the smallest budget whose tree is within
GAP points of the full table's tree on both protocols, and the figures of the 5 % and 10 %
budgets ('refused': tune refuses the budget as too small for its first grid). Measured figures
only; nothing asserts them.

Usage: compare_strategies.py [TABLE ...] [--budgets 2,5,10,20,40] [--score FLAGS] [--jobs N]
(default tables: build/corpus/*.csv of the main checkout and bench-data/paired/*.csv; --score:
the `collsel build` flags of every tree, default '' (exact trees, fast); '--recommend' is the
tune's own and about ten times slower.)
"""
import argparse
import concurrent.futures
import csv
import glob
import os
import subprocess
import sys
import tempfile

from collsel.commands.tune import score_config
from collsel.pipeline.tune import curve as tune_curve
from collsel.core.maps import table as table_io

STRATEGIES = ("coarse-refine", "adaptive")
GAP = 0.5
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def default_tables():
    corpus = os.path.join(os.path.dirname(os.path.realpath(ROOT)), "main", "build", "corpus")
    found = sorted(glob.glob(os.path.join(ROOT, "build", "corpus", "*.csv"))) or sorted(
        glob.glob(os.path.join(corpus, "*.csv")))
    return found + sorted(glob.glob(os.path.join(ROOT, "bench-data", "paired", "*.csv")))


def full_figures(path, score):
    """(P_mean, m_mean) of the tree built from the whole table (tune_curve.score, part =
    the full table: each fold's value removed from it)."""
    full = table_io.read_table(path)
    got = tune_curve.score(full, full, score_config(score))
    return got["P_mean"], got["m_mean"]


def replayed(path, strategy, budget, score, scratch):
    """(cost_pct, P_mean, m_mean) of the tune's final tree, or None when the budget is refused
    or no tree was built."""
    out = os.path.join(scratch, f"{os.path.basename(path)}-{strategy}-{budget}")
    run = subprocess.run([sys.executable, "-m", "collsel.cli", "tune", "--replay", path,
                          "--out", out, f"--budget={budget}%", f"--strategy={strategy}",
                          "--checkpoints=1", f"--score={score}"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        if "too small" in run.stderr:
            return None
        raise SystemExit(f"{path} {strategy} {budget}%: {run.stderr.strip()[-400:]}")
    curves = glob.glob(os.path.join(out, "*", tune_curve.CURVE))
    with open(curves[0]) as f:
        last = list(csv.DictReader(f))[-1]
    if not last["P_mean"] or not last["m_mean"]:
        return None
    return float(last["cost_pct"]), float(last["P_mean"]), float(last["m_mean"])


def within(got, full):
    return got is not None and all(g - f <= GAP for g, f in zip(got[1:], full)
                                   if f is not None)


def row(path, budgets, score, scratch):
    full = full_figures(path, score)
    cells = [os.path.basename(path)[:-4], _pair(full)]
    for strategy in STRATEGIES:
        runs = {b: replayed(path, strategy, b, score, scratch) for b in budgets}
        reached = next((runs[b] for b in budgets if within(runs[b], full)), None)
        cells.append(f"{reached[0]:.1f}" if reached else f">{budgets[-1]:g}")
        for b in (5, 10):
            got = runs.get(b) if b in runs else replayed(path, strategy, b, score, scratch)
            cells.append("refused" if got is None else f"{_pair(got[1:])} @{got[0]:.1f}")
    return cells


def _pair(figures):
    return "/".join("-" if f is None else f"{f:.2f}" for f in figures)


HEADER = ["table", "full P/m", *(f"{s}: {what}" for s in STRATEGIES
                                 for what in (f"cost% to {GAP}", "P/m @5%", "P/m @10%"))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="*")
    parser.add_argument("--budgets", default="2,5,10,20,40")
    parser.add_argument("--score", default="")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    budgets = sorted(float(b) for b in args.budgets.split(","))
    budgets = [int(b) if b.is_integer() else b for b in budgets]
    tables = args.tables or default_tables()
    print(f"# budgets {','.join(map(str, budgets))} %; trees: build {args.score!r}; figures: "
          "mean penalty % interior leave-one-P-out / leave-one-m-out on the full table; "
          f"'cost% to {GAP}': the spending of the smallest budget within {GAP} points of the "
          f"full table's tree on both ('>{budgets[-1]}': none of the budgets); 'P/m @5%': that "
          "budget's tree @ its spending (% of the full table's cost)")
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    with tempfile.TemporaryDirectory(prefix="collsel-compare-") as scratch, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for cells in pool.map(lambda t: row(t, budgets, args.score, scratch), tables):
            print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
