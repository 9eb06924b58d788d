"""`collsel build`, `collsel query`, `collsel stats`: table -> map -> tree -> stats and C code."""
import argparse
import json
import os
import shutil
import sys
import tempfile

from . import decision_map, penalty, table, tree, treefile
from .emit import c as emit_c
from .errors import InputError

SIZE_MAX = 2**64 - 1
INT_MAX = 2**31 - 1


def _percent(text):
    try:
        return float(text.strip().rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a percentage") from None


def _add_tree_options(p):
    p.add_argument("--max-depth", type=int, metavar="D", help="leaves at depth <= D (root = 0)")
    p.add_argument("--threshold", type=_percent, metavar="PCT",
                   help="a block becomes a leaf once PCT%% of its cells share one method "
                        "(the paper's accuracy threshold; 100 = exact)")
    p.add_argument("--split", choices=tree.SPLITS, default="balanced",
                   help="replicate: the paper's reshape to 2^k x 2^k by replication; balanced: "
                        "split every axis at its middle index (default)")
    p.add_argument("--leaf", choices=tree.LEAF_RULES, default="majority",
                   help="majority: most frequent method in the block (the paper); penalty: least "
                        "summed relative penalty over the block's measured cells")


def _add_table_options(p):
    p.add_argument("tables", nargs="+", metavar="TABLE", help="canonical performance table(s)")
    p.add_argument("--collective", required=True, help="bcast, reduce, ...")
    p.add_argument("--z", metavar="COLUMN", help="third axis column (octree), e.g. ppn")


def load_map(args):
    t = table.read_tables(args.tables).select(args.collective)
    return decision_map.build_map(t, args.z)


def register(sub):
    p = sub.add_parser("build", help="performance table -> decision map -> tree -> stats and C",
                       description="Build the decision map of one collective, encode it as a "
                       "quadtree (octree with --z) within the given limits (none = exact tree), "
                       "and write DIR/tree.json, DIR/stats.json, DIR/decision.{c,h} and, for "
                       "bcast/reduce, DIR/ompi_<collective>_intra_dec_fixed.c.")
    _add_table_options(p)
    _add_tree_options(p)
    p.add_argument("--prefix", help="C function prefix (default collsel_<collective>)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.set_defaults(run=run_build)

    p = sub.add_parser("query", help="decision of a tree.json for given P and m",
                       description="Print 'algorithm segsize faninout' for each point.")
    p.add_argument("tree", metavar="TREE.json")
    p.add_argument("--comm-size", type=int, metavar="P")
    p.add_argument("--msg-size", type=int, metavar="M", help="bytes")
    p.add_argument("--z", help="third-axis value (octree)")
    p.add_argument("--points", metavar="FILE", help="one 'P M [Z]' per line ('-' = stdin)")
    p.set_defaults(run=run_query)

    p = sub.add_parser("stats", help="tree statistics and penalties for many limits",
                       description="The paper's tables 1 and 2: for max depths 1..k and for "
                       "several accuracy thresholds, with both split modes and both leaf rules.")
    _add_table_options(p)
    p.add_argument("--depths", type=int, default=6, metavar="K", help="max depths 1..K")
    p.add_argument("--thresholds", default="50,60,70,80,90,95",
                   help="comma-separated percentages")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    p.set_defaults(run=run_stats)


def write_outputs(out_dir, files, manifest=None):
    """All files or none: written to a temporary directory, then moved into place. With
    `manifest` (a file name), the names written are listed in that file, and files an earlier
    run listed there but this run does not write are removed, so a rerun leaves no stale
    outputs while files the user put beside them stay."""
    if manifest:
        files = {**files, manifest: "".join(f"{name}\n" for name in sorted(files))}
    out_dir = os.path.abspath(out_dir)
    parent = os.path.dirname(out_dir)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=parent, prefix=f".{os.path.basename(out_dir)}.tmp-")
    try:
        umask = os.umask(0)      # mkdtemp makes the directory 0700; give it the usual mode
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)
        for name, text in files.items():
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(text.encode("utf-8") if isinstance(text, str) else text)
        if not os.path.exists(out_dir):
            os.rename(tmp, out_dir)
            return
        stale = set()
        if manifest and os.path.isfile(os.path.join(out_dir, manifest)):
            with open(os.path.join(out_dir, manifest), encoding="utf-8") as f:
                stale = {line.strip() for line in f if line.strip()} - set(files)
        for name in files:
            os.replace(os.path.join(tmp, name), os.path.join(out_dir, name))
        for name in stale:
            if os.path.basename(name) == name:     # only plain names this command wrote
                try:
                    os.remove(os.path.join(out_dir, name))
                except FileNotFoundError:
                    pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def build_files(dmap, options, prefix=None):
    """Every output of `collsel build`, rendered in memory."""
    t = tree.build_tree(dmap, options)
    stats = penalty.tree_stats(dmap, t)
    document = treefile.tree_document(dmap, t, options)
    loaded = treefile.LoadedTree(document, "tree.json")
    files = {"tree.json": treefile.dumps(document),
             "stats.json": json.dumps(stats, indent=1, sort_keys=True) + "\n"}
    files.update(emit_c.emit_decision(loaded, prefix))
    if dmap.collective in ("bcast", "reduce") and len(dmap.axes) == 2:
        files.update(emit_c.emit_ompi_dec_fixed(loaded))
    return files, stats


def run_build(args):
    options = tree.BuildOptions(args.split, args.leaf, args.max_depth, args.threshold).check()
    files, stats = build_files(load_map(args), options, args.prefix)
    write_outputs(args.out, files)
    pen = ("n/a" if stats["penalty_mean"] is None
           else f"{stats['penalty_mean']:.2f}% mean, {stats['penalty_max']:.2f}% max")
    print(f"{args.out}: {stats['nodes']} nodes, {stats['leaves']} leaves, depth "
          f"{stats['min_depth']}-{stats['max_depth']} (mean {stats['mean_depth']:.2f}), "
          f"penalty {pen}, {stats['unmeasured_choices']} unmeasured choices")
    return 0


def _parse_int(text, what, low, high, where):
    try:
        value = int(text)
    except (TypeError, ValueError):
        raise InputError(f"{where}{what} '{text}' is not an integer") from None
    if not low <= value <= high:
        raise InputError(f"{where}{what} {value} out of range [{low}, {high}]")
    return value


def _z_value(axis, text, where):
    if axis.kind == "category":
        if text in axis.labels:
            return axis.labels.index(text)
        return _parse_int(text, "z", 0, len(axis.labels) - 1, where)
    return _parse_int(text, "z", -2**63, 2**63 - 1, where)


def _read_points(args, loaded):
    n_axes = len(loaded.axes)
    if args.points:
        try:
            if args.points == "-":
                lines = sys.stdin.read().splitlines()
            else:
                with open(args.points, encoding="utf-8") as f:
                    lines = f.read().splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"{args.points}: cannot read: {e}") from None
        rows = [(i, line.split()) for i, line in enumerate(lines, 1)
                if line.strip() and not line.lstrip().startswith("#")]
    else:
        if args.comm_size is None or args.msg_size is None:
            raise InputError("give --comm-size and --msg-size, or --points FILE")
        rows = [(0, [str(args.comm_size), str(args.msg_size)]
                 + ([args.z] if args.z is not None else []))]
    values = [[] for _ in range(n_axes)]
    for lineno, fields in rows:
        where = f"{args.points}:{lineno}: " if lineno else ""
        if len(fields) != n_axes:
            need = "P M Z (with --z for a 3-axis tree)" if n_axes == 3 else "P M"
            raise InputError(f"{where}expected {need}, got {len(fields)} value(s)")
        values[0].append(_parse_int(fields[0], "comm_size", 1, INT_MAX, where))
        values[1].append(_parse_int(fields[1], "msg_size", 0, SIZE_MAX, where))
        if n_axes == 3:
            values[2].append(_z_value(loaded.axes[2], fields[2], where))
    return values


def run_query(args):
    loaded = treefile.load(args.tree)
    values = _read_points(args, loaded)
    choice = loaded.decide(values)
    out = [f"{m.algorithm} {m.segsize} {m.faninout}"
           for m in (loaded.methods[i] for i in choice.tolist())]
    sys.stdout.write("\n".join(out) + ("\n" if out else ""))
    return 0


def stats_rows(dmap, depths, thresholds):
    """Statistics of every (split, leaf rule, limit) combination, plus the exact tree."""
    rows = []
    for split in tree.SPLITS:
        for leaf in tree.LEAF_RULES:
            limits = ([("depth", d) for d in range(1, depths + 1)]
                      + [("threshold", th) for th in thresholds] + [("exact", None)])
            for kind, value in limits:
                opts = tree.BuildOptions(split, leaf,
                                         value if kind == "depth" else None,
                                         value if kind == "threshold" else None)
                stats = penalty.tree_stats(dmap, tree.build_tree(dmap, opts))
                rows.append({"split": split, "leaf": leaf, "limit": kind, "value": value,
                             **stats})
    return rows


COLUMNS = (("split", "{}"), ("leaf", "{}"), ("limit", "{}"), ("max_depth", "{}"),
           ("min_depth", "{}"), ("mean_depth", "{:.2f}"), ("penalty_min", "{:.2f}"),
           ("penalty_max", "{:.2f}"), ("penalty_mean", "{:.2f}"), ("penalty_median", "{:.2f}"),
           ("leaves", "{}"), ("nodes", "{}"), ("unmeasured_choices", "{}"))
HEADERS = ("split", "leaf", "limit", "depth max", "min", "mean", "penalty% min", "max", "mean",
           "median", "leaves", "nodes", "unmeasured")


def format_stats(rows, fmt):
    def cell(row, key, spec):
        if key == "limit":
            if row["limit"] == "depth":
                return f"depth {row['value']}"
            return f"{row['value']:g}%" if row["limit"] == "threshold" else "exact"
        return "-" if row[key] is None else spec.format(row[key])
    table_rows = [[cell(r, k, s) for k, s in COLUMNS] for r in rows]
    if fmt == "markdown":
        lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
        lines += ["| " + " | ".join(r) + " |" for r in table_rows]
        return "\n".join(lines) + "\n"
    widths = [max(len(h), *(len(r[i]) for r in table_rows)) for i, h in enumerate(HEADERS)]
    fmt_row = lambda r: "  ".join(v.rjust(w) for v, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt_row(HEADERS)] + [fmt_row(r) for r in table_rows]) + "\n"


def run_stats(args):
    try:
        thresholds = [_percent(x) for x in args.thresholds.split(",") if x.strip()]
    except argparse.ArgumentTypeError as e:
        raise InputError(f"--thresholds: {e}") from None
    dmap = load_map(args)
    rows = stats_rows(dmap, args.depths, thresholds)
    if args.format == "json":
        sys.stdout.write(json.dumps(rows, indent=1) + "\n")
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
