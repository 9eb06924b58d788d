"""`collsel stats`: tree statistics and penalties for many limits (the paper's tables 1 and 2)."""
import json
import sys

from collsel.core import penalty, tree, values
from collsel.errors import CollselError, InputError
from collsel.commands.options import add_table_options, load_map


def register(sub):
    p = sub.add_parser("stats", help="tree statistics and penalties for many limits",
                       description="The paper's tables 1 and 2: for max depths 1..k and for "
                       "several accuracy thresholds, with both split modes and both leaf rules.")
    add_table_options(p)
    p.add_argument("--depths", type=int, default=6, metavar="K", help="max depths 1..K")
    p.add_argument("--thresholds", default="50,60,70,80,90,95",
                   help="comma-separated percentages")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    p.set_defaults(run=run_stats)


def stats_rows(dmap, depths, thresholds):
    """Statistics of every (split, leaf rule, limit) combination, plus the exact tree."""
    return [{"split": split, "leaf": leaf, "limit": kind, "value": value,
             **penalty.tree_stats(dmap, tree.build_tree(dmap, opts))}
            for split, leaf, kind, value, opts in tree.limit_family(depths, thresholds)]


COLUMNS = (("split", "{}"), ("leaf", "{}"), ("limit", "{}"), ("max_depth", "{}"),
           ("min_depth", "{}"), ("mean_depth", "{:.2f}"), ("penalty_min", "{:.2f}"),
           ("penalty_max", "{:.2f}"), ("penalty_mean", "{:.2f}"), ("penalty_median", "{:.2f}"),
           ("leaves", "{}"), ("nodes", "{}"), ("unmeasured_choices", "{}"))
HEADERS = ("split", "leaf", "limit", "depth max", "min", "mean", "penalty% min", "max", "mean",
           "median", "leaves", "nodes", "unmeasured")


def format_stats(rows, fmt):
    def cell(row, key, spec):
        if key == "limit":
            return tree.limit_label(row["limit"], row["value"])
        return "-" if row[key] is None else spec.format(row[key])
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


def depths_option(value, flag="--depths"):
    """K of 'max depths 1..K': 1 up to the deepest tree collsel builds (core.values.DEPTH)."""
    return values.integer(value, flag, 1, values.DEPTH[1])


def thresholds_option(text, flag="--thresholds", limit=MAX_THRESHOLDS):
    """The percentages of a comma list (empty items are skipped; at least one is needed)."""
    items = [x for x in text.split(",") if x.strip()]
    if not items:
        raise InputError(f"{flag} '{text}': no percentage given (e.g. 60,80,95)")
    if len(items) > limit:
        raise InputError(f"{flag}: {len(items)} thresholds, at most {limit}")
    return list(dict.fromkeys(values.percent(x, flag) for x in items))


def run_stats(args):
    depths = depths_option(args.depths)
    thresholds = thresholds_option(args.thresholds)
    dmap = load_map(args)
    rows = stats_rows(dmap, depths, thresholds)
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
    if b["baseline_cells"]:
        sys.stdout.write(f"Open MPI default (algorithm 0) on {b['baseline_cells']} cells: "
                         f"penalty mean {b['baseline_penalty_mean']:.2f}%, median "
                         f"{b['baseline_penalty_median']:.2f}%, max "
                         f"{b['baseline_penalty_max']:.2f}%\n")
    sys.stdout.write("\n" + format_stats(rows, args.format))
    return 0
