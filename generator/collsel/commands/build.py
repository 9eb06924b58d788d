"""`collsel build`: table -> decision map -> tree -> tree.json, stats.json and C code."""
import json

from collsel.core import penalty, tree, treefile, values
from collsel.core.files import write_directory
from collsel.sinks.emit import c_ladder as emit_c
from collsel.commands.options import add_table_options, add_tree_options, load_map


def register(sub):
    p = sub.add_parser("build", help="performance table -> decision map -> tree -> stats and C",
                       description="Build the decision map of one collective, encode it as a "
                       "quadtree (octree with --z) within the given limits (none = exact tree), "
                       "and write DIR/tree.json, DIR/stats.json, DIR/decision.{c,h} and, for "
                       "bcast/reduce, DIR/ompi_<collective>_intra_dec_fixed.c.")
    add_table_options(p)
    add_tree_options(p)
    p.add_argument("--prefix", help="C function prefix (default collsel_<collective>)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.set_defaults(run=run_build)


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
    if args.prefix is not None:      # before the tables are read
        values.identifier(args.prefix, "--prefix")
    values.output_directory(args.out)
    files, stats = build_files(load_map(args), options, args.prefix)
    write_directory(args.out, files)
    pen = ("n/a" if stats["penalty_mean"] is None
           else f"{stats['penalty_mean']:.2f}% mean, {stats['penalty_max']:.2f}% max")
    print(f"{args.out}: {stats['nodes']} nodes, {stats['leaves']} leaves, depth "
          f"{stats['min_depth']}-{stats['max_depth']} (mean {stats['mean_depth']:.2f}), "
          f"penalty {pen}, {stats['unmeasured_choices']} unmeasured choices")
    return 0
