"""Options and helpers shared by the commands that read tables and build trees."""
import argparse
import sys

from collsel.core import decision_map, statistic, table, tree
from collsel.errors import printable


def percent(text):
    try:
        return float(text.strip().rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a percentage") from None


def add_tree_options(p):
    p.add_argument("--max-depth", type=int, metavar="D", help="leaves at depth <= D (root = 0)")
    p.add_argument("--threshold", type=percent, metavar="PCT",
                   help="a block becomes a leaf once PCT%% of its cells share one method "
                        "(the paper's accuracy threshold; 100 = exact)")
    p.add_argument("--split", choices=tree.SPLITS, default="balanced",
                   help="replicate: the paper's reshape to 2^k x 2^k by replication; balanced: "
                        "split every axis at its middle index (default)")
    p.add_argument("--leaf", choices=tree.LEAF_RULES, default="majority",
                   help="majority: most frequent method in the block (the paper); penalty: least "
                        "summed relative penalty over the block's measured cells")


def add_table_options(p):
    p.add_argument("tables", nargs="+", metavar="TABLE", help="canonical performance table(s)")
    p.add_argument("--collective", required=True, help="bcast, reduce, ...")
    p.add_argument("--z", metavar="COLUMN", help="third axis column (octree), e.g. ppn")


def read_tables(paths):
    """The tables combined; a warning on stderr, naming the files, when they measure different
    statistics (core.statistic)."""
    combined = table.read_tables(paths)
    warning = statistic.mismatch_warning(
        [(s.path, s.metadata.get("statistic")) for s in combined.sources])
    if warning:
        print(f"collsel: warning: {printable(warning)}", file=sys.stderr)
    return combined


def load_map(args):
    return decision_map.build_map(read_tables(args.tables).select(args.collective), args.z)
