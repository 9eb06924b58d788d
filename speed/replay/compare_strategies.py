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
from collsel.pipeline.tune import plan as tune_plan, planning
from collsel.sources.sweep import replay as replay_source

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


def costs(path):
    """(the tune's plan of a replay: the full table's simulated cost in s, its launch starts'
    share in %), as replay charges them (sources/sweep/replay.py)."""
    recording = replay_source.load(path)
    # (a budget any recorded table's coarsest grid fits; the cost does not depend on it)
    full = _plan(path, "adaptive", "100h").replayed.full_cost_s
    starts = replay_source.START_S * recording.recorded_starts
    return full, 100 * starts / full


def least_budget(path, strategy, full_cost_s):
    """The least budget tune takes for this table and strategy, in % of its full cost: what
    its plan of a 0.01 % budget says the coarsest grid needs (tune.plan.BudgetTooSmall)."""
    try:
        _plan(path, strategy, "0.01%")
    except tune_plan.BudgetTooSmall as e:
        return 100 * e.need_s / full_cost_s
    return 0.01


def _plan(path, strategy, budget):
    """tune's plan of `collsel tune --replay PATH --budget BUDGET --strategy STRATEGY`."""
    return planning.plan(planning.TuneRequest(out="", replay=path, budget=budget,
                                              strategy=strategy, score=""), score_config)


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
    figures = [_num(last[k]) for k in ("P_mean", "m_mean")]
    if all(f is None for f in figures):
        return None         # no tree (nothing complete): as good as refused
    # a protocol without folds (leave-one-m-out of a barrier table, m = 0 only) stays None
    return (float(last["cost_pct"]), *figures)


def within(got, full):
    return got is not None and all(g is not None and g - f <= GAP
                                   for g, f in zip(got[1:], full) if f is not None)


def row(path, budgets, score, scratch, recorded=None):
    """(the table's line, its runs as --raw rows); `recorded`: its runs from a --raw file
    (read_raw), nothing replayed."""
    name = os.path.basename(path)[:-4]
    full = recorded["full"] if recorded else full_figures(path, score)
    full_cost, starts = costs(path)
    least = [least_budget(path, strategy, full_cost) for strategy in STRATEGIES]
    cells = [name, _shape(path), _pair(full), f"{starts:.0f}", "/".join(f"{x:.1f}" for x in least)]
    records = [[name, "full", "", 100, *full]]
    for strategy in STRATEGIES:
        runs = (recorded[strategy] if recorded else
                {b: replayed(path, strategy, b, score, scratch) for b in budgets})
        records += [[name, strategy, b, *(got or ("refused", "", ""))] for b, got in runs.items()]
        reached = next((runs[b] for b in budgets if within(runs[b], full)), None)
        cells.append(f"{reached[0]:.1f}" if reached else f">{budgets[-1]:g}")
        for b in (5, 10):
            got = runs[b]
            cells.append("refused" if got is None else f"{_pair(got[1:])} @{got[0]:.1f}")
    return cells, records


def _shape(path):
    """'P, methods' of a table: the issue's targets hold for 6+ P and 3+ forced methods."""
    t = table_io.read_table(path)
    forced = {x for x in zip(t.algorithm.tolist(), t.segsize.tolist(), t.faninout.tolist())
              if x[0] != 0}
    return f"{len(set(t.comm_size.tolist()))}, {len(forced)}"


def read_raw(raw_path):
    """{table: {"full": (P, m), strategy: {budget: (cost, P, m) or None}}} of a --raw file."""
    out = {}
    with open(raw_path) as f:
        for r in csv.DictReader(f):
            mine = out.setdefault(r["table"], {s: {} for s in STRATEGIES})
            figures = (_num(r["P_mean"]), _num(r["m_mean"]))
            if r["strategy"] == "full":
                mine["full"] = figures
            else:
                budget = float(r["budget_pct"])
                # "failed": a run that did not end (recorded by hand, with why, in the docs)
                mine[r["strategy"]][int(budget) if budget.is_integer() else budget] = (
                    None if r["cost_pct"] in ("refused", "failed") else
                    (float(r["cost_pct"]), *figures))
    return out


def _pair(figures):
    return "/".join("-" if f is None else f"{f:.2f}" for f in figures)


def page(recorded, source):
    """An HTML page of every table's curves (sinks/report/curve_plot.py) from read_raw's
    `recorded` runs (of the file `source`): per strategy, the tree each budget ends with, at
    what it spent, beside the full table's tree."""
    from collsel.sinks.report import curve_plot
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>collsel: measuring "
             "strategies by replay</title></head><body>",
             "<h1>Measuring strategies by replay: cost against held-out penalty</h1>",
             f"<p>From {os.path.basename(source)}: each point is one `collsel tune --replay "
             "TABLE --budget B% --strategy S` run's final tree at what it spent; the dashed "
             f"line is the tree of the full table, the band {GAP} points above it.</p>"]
    for table, runs in recorded.items():
        series = []
        for strategy in STRATEGIES:
            done = sorted(got for got in runs[strategy].values() if got is not None)
            series.append(curve_plot.Series(strategy, [d[0] for d in done],
                                            {"P_mean": [d[1] for d in done],
                                             "m_mean": [d[2] for d in done]}))
        full = dict(zip(("P_mean", "m_mean"), runs["full"]))
        svg = curve_plot.figure_svg(table, series, full).decode()
        parts.append(f"<h2 id='{table}'>{table}</h2>" + svg[svg.index("<svg"):])
    return "\n".join(parts + ["</body></html>"]) + "\n"


def _num(text):
    return float(text) if text not in ("", None) else None


HEADER = ["table", "P, methods", "full P/m", "launch starts, % of full cost",
          "least budget tune takes, %: " + " / ".join(STRATEGIES),
          *(f"{s}: {what}" for s in STRATEGIES
            for what in (f"cost% to {GAP}", "P/m @5%", "P/m @10%"))]


def _print_header(budgets, score):
    print(f"# budgets {','.join(map(str, budgets))} %; trees: build {score!r}; figures: "
          "mean penalty % interior leave-one-P-out / leave-one-m-out on the full table; "
          f"'cost% to {GAP}': the spending of the smallest budget within {GAP} points of the "
          f"full table's tree on both ('>{budgets[-1]}': none of the budgets); 'P/m @5%': that "
          "budget's tree @ its spending (% of the full table's cost)")
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="*")
    parser.add_argument("--budgets", default="2,5,10,20,40")
    parser.add_argument("--score", default="")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--raw", help="also write every run as CSV rows (table, strategy, "
                        "budget %%, spent %% or 'refused', P mean, m mean) to this file")
    parser.add_argument("--page", help="write the curves of --raw's runs as an HTML page here "
                        "(with --from-raw: of a file written before, nothing replayed)")
    parser.add_argument("--from-raw", action="store_true")
    args = parser.parse_args()
    if (args.page or args.from_raw) and not args.raw:
        parser.error("--page and --from-raw read the runs of --raw FILE")
    if args.from_raw:          # the table and page of runs made before: nothing replayed
        recorded = read_raw(args.raw)
        paths = {os.path.basename(p)[:-4]: p for p in default_tables() + args.tables}
        budgets = sorted(next(iter(recorded.values()))[STRATEGIES[0]])
        _print_header(budgets, args.score)
        with tempfile.TemporaryDirectory(prefix="collsel-compare-") as scratch:
            for name, runs in recorded.items():
                cells, _ = row(paths[name], budgets, args.score, scratch, recorded=runs)
                print("| " + " | ".join(cells) + " |", flush=True)
    else:
        budgets = sorted(float(b) for b in args.budgets.split(","))
        budgets = [int(b) if b.is_integer() else b for b in budgets]
        tables = args.tables or default_tables()
        _print_header(budgets, args.score)
        with tempfile.TemporaryDirectory(prefix="collsel-compare-") as scratch, \
                concurrent.futures.ThreadPoolExecutor(args.jobs) as pool, \
                open(args.raw or os.devnull, "w", newline="") as raw:
            writer = csv.writer(raw)     # table by table, in order: an interrupted run keeps them
            writer.writerow(["table", "strategy", "budget_pct", "cost_pct", "P_mean", "m_mean"])
            for cells, records in pool.map(lambda t: row(t, budgets, args.score, scratch),
                                           tables):
                print("| " + " | ".join(cells) + " |", flush=True)
                writer.writerows(records)
                raw.flush()
    if args.page:
        with open(args.page, "w") as f:
            f.write(page(read_raw(args.raw), args.raw))

if __name__ == "__main__":
    main()
