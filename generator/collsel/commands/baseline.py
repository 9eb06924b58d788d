"""`collsel baseline`: how far the MPI's own decision (the algorithm-0 rows) is from the best
measured method, per point, scored by core.trees.penalty."""
import numpy as np

from collsel.commands.options import read_tables, the_collective
from collsel.core.io import values
from collsel.core.maps import decision_map
from collsel.core.trees import penalty
from collsel.core.mpi.method_text import method_text, mpi_name
from collsel.errors import InputError
from collsel.commands import add_command


def register(sub):
    b = add_command(sub, "baseline",
                    description="For every point with an algorithm-0 row and at least "
                    "one candidate, penalty = time(algorithm 0) / time(best measured "
                    "method) - 1. Prints min/max/mean/median and the worst points.")
    b.add_argument("table", nargs="+", help="performance table(s)")
    b.add_argument("--collective", help="collective to use (needed when the table has several)")
    b.add_argument("--worst", type=int, default=10, help="how many worst points to list "
                   "(default 10; 0 lists none)")
    b.set_defaults(run=run_baseline)


def baseline_report(table, collective, worst=10):
    """Text report of the algorithm-0 penalty; the decision map does the per-cell work."""
    dm = decision_map.build_map(table)
    s = penalty.score(dm.baseline_time, dm.best_time)
    if not s["cells"]:
        files = ", ".join(src.path for src in table.sources)
        raise InputError(f"{files}: no {collective} point has both an algorithm 0 (baseline) "
                         "row and a measured candidate; sweep without --no-baseline")
    pen = penalty.penalty_pct(dm.baseline_time, dm.best_time)
    names = [method_text(collective, m, dm.family) for m in dm.methods]
    mpi = mpi_name(dm.family)
    lines = [f"{collective}: {mpi}'s own decision (algorithm 0) vs the best measured method",
             f"points compared: {s['cells']} (of {pen.size} cells)",
             f"penalty = t(alg 0) / t(best) - 1:  min {s['min']:.1f}%  max {s['max']:.1f}%  "
             f"mean {s['mean']:.1f}%  median {s['median']:.1f}%",
             f"points where {mpi}'s decision is within 5 % of the best: "
             f"{s['within_5pct']}/{s['cells']}"]
    idx = np.argwhere(np.isfinite(pen))
    order = np.lexsort((idx[:, 1], idx[:, 0], -pen[np.isfinite(pen)]))[:worst]
    lines.append(f"worst {len(order)} points:")
    lines.append(f"  {'P':>4} {'msg_size':>9} {'alg 0 µs':>11} {'best µs':>11} "
                 f"{'penalty':>8}  best method")
    for k in order:
        i, j = idx[k]
        p = dm.axes[0].values[i]
        m = dm.axes[1].values[j]
        lines.append(f"  {p:>4} {m:>9} {dm.baseline_time[i, j]:>11.2f} {dm.best_time[i, j]:>11.2f} "
                     f"{pen[i, j]:>7.1f}%  {names[dm.best[i, j]]}")
    return "\n".join(lines)


def run_baseline(args):
    worst = values.integer(args.worst, "--worst", 0, 2**31 - 1)
    table = read_tables(args.table)
    collective = the_collective(table, args.collective)
    print(baseline_report(table.select(collective), collective, worst))
    return 0
