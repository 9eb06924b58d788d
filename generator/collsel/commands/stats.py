"""`collsel stats`: tree statistics and penalties for many limits (the paper's tables 1 and 2)."""
import json
import sys

import numpy as np

from collsel.core.evaluate import baseline_warning, out_of_sample
from collsel.core.io import values
from collsel.core.trees import penalty, tree
from collsel.core.mpi.method_text import default_name
from collsel.errors import CollselError, InputError
from collsel.core.io.files import write_file
from collsel.commands.options import (add_launches_option, add_table_options,
                                      load_launches, load_table_and_map, map_settings)
from collsel.sources import launch_tables
from collsel.commands import add_command


def register(sub):
    p = add_command(sub, "stats",
                    description="The paper's tables 1 and 2: for max depths 1..k and for "
                    "several accuracy thresholds, with both split modes and both leaf rules.")
    add_table_options(p)
    p.add_argument("--depths", type=int, default=6, metavar="K", help="max depths 1..K")
    p.add_argument("--thresholds", default="50,60,70,80,90,95",
                   help="comma-separated percentages")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    add_launches_option(p)
    p.add_argument("--probe-latency", action="store_true",
                   help="instead of tree statistics: does the probe predict the latency (issue "
                        "19, the paper's figure 2)? From the sweep's journal (TABLE.launches or "
                        "--launches) of a probing sweep: per (P, m, method) every launch's "
                        "median round probe_us against the method's median time in that launch, "
                        "Pearson's r and Spearman's rho with p-values")
    p.add_argument("--plot", metavar="FILE.png",
                   help="with --probe-latency: also draw probe_us against the time of Open "
                        "MPI's default (or, without it, of every method) per (P, m), one point "
                        "per launch coloured by load level")
    p.set_defaults(run=run_stats)


def stats_rows(dmap, depths, thresholds, folds=None):
    """Statistics of every (split, leaf rule, limit) combination, plus the exact tree: in-sample,
    and out-of-sample on `folds` (core.evaluate.out_of_sample.all_folds) when given, with the
    warnings of core.evaluate.baseline_warning (`warnings`, `worse_than`)."""
    rows = []
    for split, leaf, kind, value, opts in tree.limit_family(depths, thresholds):
        row = {"split": split, "leaf": leaf, "limit": kind, "value": value,
               **penalty.tree_stats(dmap, tree.build_tree(dmap, opts))}
        if folds is not None:
            row["out_of_sample"] = out_of_sample.tree_figures(
                folds, lambda m, o=opts: tree.build_tree(m, o))
            for k in out_of_sample.KINDS:
                f = row["out_of_sample"][k]
                row[f"oos_{k}_mean"] = None if f is None else f["tree"]["mean"]
            row["warnings"] = baseline_warning.worse_than_baselines(row["out_of_sample"],
                                                                    dmap.family)
            row["worse_than"] = " and ".join(baseline_warning.beaten_by(row["out_of_sample"]))
        rows.append(row)
    return rows


COLUMNS = (("split", "{}"), ("leaf", "{}"), ("limit", "{}"), ("max_depth", "{}"),
           ("min_depth", "{}"), ("mean_depth", "{:.2f}"), ("penalty_min", "{:.2f}"),
           ("penalty_max", "{:.2f}"), ("penalty_mean", "{:.2f}"), ("penalty_median", "{:.2f}"),
           ("leaves", "{}"), ("nodes", "{}"), ("unmeasured_choices", "{}"),
           ("oos_launches_mean", "{:.2f}"), ("oos_leave_one_P_out_mean", "{:.2f}"),
           ("oos_leave_one_m_out_mean", "{:.2f}"), ("worse_than", "{}"))
HEADERS = ("split", "leaf", "limit", "depth max", "min", "mean", "in-sample penalty% min", "max",
           "mean", "median", "leaves", "nodes", "unmeasured", "out-of-sample mean%: launches CV",
           "leave-one-P-out", "leave-one-m-out", "worse out of sample than")


def format_stats(rows, fmt):
    def cell(row, key, spec):
        if key == "limit":
            return tree.limit_label(row["limit"], row["value"])
        return "-" if row.get(key) in (None, "") else spec.format(row[key])
    table_rows = [[cell(r, k, s) for k, s in COLUMNS] for r in rows]
    if fmt == "markdown":
        lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
        lines += ["| " + " | ".join(r) + " |" for r in table_rows]
        return "\n".join(lines) + "\n"
    widths = [max(len(h), *(len(r[i]) for r in table_rows)) for i, h in enumerate(HEADERS)]
    fmt_row = lambda r: "  ".join(v.rjust(w) for v, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt_row(HEADERS)] + [fmt_row(r) for r in table_rows]) + "\n"


# At most this many thresholds: each adds four trees to build and score.
MAX_THRESHOLDS = 100


def run_probe_latency(args):
    """--probe-latency: the correlation table (core.evaluate.probe_latency)."""
    from collsel.core.evaluate import probe_latency
    from collsel.core.mpi import algorithms
    path = launch_tables.journal_of(args.tables, args.launches)
    if path is None:
        raise InputError("--probe-latency needs the sweep's journal: TABLE.launches beside "
                         "one TABLE, or --launches JOURNAL")
    collective = args.collective or "bcast"
    probed = launch_tables.read_launch_tables(path, collective, "probe_us")
    if not probed:
        raise InputError(f"{path}: no probe_us column (sweep with --probe or --load-levels)")
    levels = launch_tables.read_launch_tables(path, collective, "load_level")
    pairs = probe_latency.from_launch_tables(probed, levels=levels)
    rows = probe_latency.correlations(pairs)
    if args.plot:
        # matplotlib only when a plot is asked: imported at the top it cost every command ~1 s
        from collsel.sinks.report import probe_plot
        write_file(args.plot, probe_plot.probe_latency_png(
            collective, probe_latency.panels(pairs, rows)))
    if args.format == "json":
        sys.stdout.write(json.dumps(rows, indent=1, allow_nan=False) + "\n")
        return 0
    md = args.format == "markdown"
    head = ["P", "m", "method", "pairs", "Pearson r", "p", "Spearman rho", "p"]
    lines = [f"{collective}: probe_us vs the method's time, one pair per launch ({path})"]
    table = [[str(r["comm_size"]), str(r["msg_size"]),
              "default (0)" if r["algorithm"] == algorithms.BASELINE_ALGORITHM
              else algorithms.Method(r["algorithm"], r["segsize"], 0).label(collective),
              str(r["pairs"]), f"{r['pearson']:.3f}", f"{r['pearson_p']:.2g}",
              f"{r['spearman']:.3f}", f"{r['spearman_p']:.2g}"] for r in rows]
    if md:
        lines += ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in table]
    else:
        lines += ["  ".join(head)] + ["  ".join(r) for r in table]
    if rows:
        r_all = np.array([r["pearson"] for r in rows])
        s_all = np.array([r["spearman"] for r in rows])
        lines.append(f"{'' if not md else chr(10)}median over {len(rows)} (P, m, method) groups: "
                     f"Pearson r {np.median(r_all):.3f}, Spearman rho {np.median(s_all):.3f}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def run_stats(args):
    if args.probe_latency:
        return run_probe_latency(args)
    depths = values.depths(args.depths)
    thresholds = values.thresholds(args.thresholds, MAX_THRESHOLDS)
    table, dmap = load_table_and_map(args)
    journal, launches = load_launches(args)
    folds = out_of_sample.all_folds(table, launches, map_settings(args))
    rows = stats_rows(dmap, depths, thresholds, folds)
    if args.format == "json":
        try:   # strict JSON: a non-finite number is a bug, never written as NaN or Infinity
            text = json.dumps(rows, indent=1, allow_nan=False)
        except ValueError as e:
            raise CollselError(f"stats: a statistic is not a finite number ({e})") from None
        sys.stdout.write(text + "\n")
        return 0
    b = penalty.baseline_stats(dmap)
    sys.stdout.write(f"{dmap.collective}: {dmap.shape[0]} comm sizes x {dmap.shape[1]} message "
                     f"sizes{' x %d %s' % (dmap.shape[2], args.z) if args.z else ''}, "
                     f"{len(dmap.methods)} methods, {int(dmap.measured.sum())} measured cells, "
                     f"{int((~dmap.measured).sum())} filled\n")
    the_default = default_name(dmap.family)
    if b["baseline_cells"]:
        sys.stdout.write(f"{the_default} (algorithm 0) on {b['baseline_cells']} cells: "
                         f"penalty mean {b['baseline_penalty_mean']:.2f}%, median "
                         f"{b['baseline_penalty_median']:.2f}%, max "
                         f"{b['baseline_penalty_max']:.2f}%\n")
    for kind in out_of_sample.KINDS:
        f = rows[0]["out_of_sample"][kind]
        if f is not None and f["default"]["cells"]:
            sys.stdout.write(f"{the_default}, {f['label']} (out-of-sample folds) on "
                             f"{f['default']['cells']} cells: penalty mean "
                             f"{f['default']['mean']:.2f}%; best fixed method chosen on the "
                             f"training folds: {f['best_fixed']['mean']:.2f}% on "
                             f"{f['best_fixed']['cells']} cells\n")
    if not launches:
        sys.stdout.write("no launch data (no --launches, no TABLE.launches): out-of-sample "
                         "figures are leave-one-P-out and leave-one-m-out only\n")
    else:
        sys.stdout.write(f"launch data: {journal}, {len(launches)} launches\n")
    sys.stdout.write("In-sample: scored on the measurements the tree was built from. "
                     "Out-of-sample: built without the scored data (another launch, P or m) "
                     "and asked there; pooled over the held-out cells.\n")
    sys.stdout.write("\n" + format_stats(rows, args.format))
    warning = worse_trees_warning(rows, the_default)
    if warning:
        sys.stdout.flush()      # after the table it is about
        sys.stderr.write(f"collsel: warning: {warning}\n")
    return 0


def worse_trees_warning(rows, the_default):
    """One line: how many of the trees lose out of sample to the default or the best fixed
    method, and the first exact tree's (else the first tree's) warning; None when none does."""
    worse = [r for r in rows if r.get("warnings")]
    if not worse:
        return None
    example = next((r for r in worse if r["limit"] == "exact"), worse[0])
    return (f"{len(worse)} of {len(rows)} trees are worse out of sample than {the_default} or "
            f"the best fixed method (last column); e.g. the {example['split']}-split, "
            f"{example['leaf']}-leaf {tree.limit_label(example['limit'], example['value'])} "
            f"tree: {example['warnings'][0]}")
