"""`collsel compare`: do one sweep's decisions hold on another sweep of the same grid?"""
import json
import sys

from collsel.commands.options import add_table_options, map_settings, read_tables
from collsel.core import out_of_sample, tree
from collsel.errors import InputError


def register(sub):
    p = sub.add_parser(
        "compare", help="score one table's exact decisions on another table's times",
        description="The exact map of table A (its fastest method per cell) used on table B: "
                    "penalty against B's best per cell (mean, median, max over the cells both "
                    "measure), how many of A's choices are in B's tie set (the methods B cannot "
                    "tell from its best: its tied or ci_halfwidth_us columns, --tolerance), and "
                    "Open MPI's default on the same cells of B; then the same from B to A. Two "
                    "sweeps of one grid made one after the other show how much of a decision is "
                    "measurement noise. Tables: A B (exactly two).")
    add_table_options(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(run=run_compare)


def compare(table_a, table_b, settings):
    """{"A->B": figures, "B->A": figures} (core.out_of_sample.cross_table)."""
    maps = {"A": settings.build(table_a), "B": settings.build(table_b)}
    out = {}
    for src, dst in (("A", "B"), ("B", "A")):
        fold = out_of_sample.Fold(f"{src}->{dst}", maps[src], maps[dst])
        out[fold.name] = out_of_sample.cross_table(fold, tree.build_tree(maps[src]))
    return out


def _line(name, f):
    if f["mean"] is None:
        return f"  {name}: no cell scored"
    return (f"  {name}: penalty mean {f['mean']:.2f}%, median {f['median']:.2f}%, max "
            f"{f['max']:.2f}% on {f['cells']} cells")


def run_compare(args):
    if len(args.tables) != 2:
        raise InputError(f"compare takes exactly two tables (A B), got {len(args.tables)}")
    a, b = (read_tables([path]).select(args.collective) for path in args.tables)
    result = compare(a, b, map_settings(args))
    if args.format == "json":
        sys.stdout.write(json.dumps({"tables": list(args.tables), **result}, indent=1,
                                    allow_nan=False) + "\n")
        return 0
    names = {"A": args.tables[0], "B": args.tables[1]}
    for key, f in result.items():
        src, dst = key.split("->")
        t = f["tree"]
        sys.stdout.write(f"best per cell of {names[src]} used on {names[dst]}:\n")
        sys.stdout.write(_line("exact map", t) + "\n")
        if t["cells"]:
            sys.stdout.write(f"  in {names[dst]}'s tie set: {t['in_tie_set']} of {t['cells']} "
                             f"cells ({100.0 * t['in_tie_set'] / t['cells']:.1f} %)\n")
        sys.stdout.write(_line("exact map on the default's cells", f["tree_on_default_cells"])
                         + "\n")
        sys.stdout.write(_line("Open MPI's default", f["default"]) + "\n")
    return 0
