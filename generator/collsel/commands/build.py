"""`collsel build`: table -> decision map -> tree -> tree.json, stats.json and C code (the steps
are collsel.pipeline.build's; this module reads the flags and prints)."""
import sys

from collsel import pipeline
from collsel.core.evaluate import headline, out_of_sample
from collsel.core.io import values
from collsel.core.mpi import method_text
from collsel.core.trees import extrapolation
from collsel.errors import InputError
from collsel.commands.options import (add_criterion_option, add_interpolate_option,
                                      add_launches_option, add_table_options, add_tree_options,
                                      build_options, map_settings)
from collsel.commands import add_command


def register(sub):
    p = add_command(sub, "build",
                    description="Build the decision map of one collective, encode it as a "
                    "quadtree (octree with --z) within the given limits (none = exact tree), "
                    "and write DIR/tree.json, DIR/stats.json (in-sample and out-of-sample "
                    "penalties), DIR/decision.{c,h} and, for a collective of Open MPI's "
                    "coll/tuned, DIR/ompi_<collective>_intra_dec_fixed.c.")
    add_table_options(p)
    add_interpolate_option(p)
    add_tree_options(p)
    p.add_argument("--recommend", action="store_true",
                   help="instead of --max-depth/--threshold: the tree chosen by cross-validation: "
                        "the exact tree of the interpolated map (--interpolate) where it beats "
                        "deferring to the MPI everywhere and the best fixed method, "
                        "else the smallest within one standard error of the best among pruned, "
                        "depth- and threshold-limited trees and those two, never worse than "
                        "the MPI's default; its figure comes from nested cross-validation "
                        "(the tree the report recommends)")
    add_criterion_option(p, "with --recommend, ")
    p.add_argument("--budget", metavar="PCT",
                   help="deprecated and ignored: --recommend now uses the one-standard-error "
                        "rule")
    p.add_argument("--beyond", choices=BEYOND_CHOICES,
                   help="beyond the largest measured P: defer to the MPI's default there "
                        "(tree.json's `beyond`, honoured by query, every emit target and the "
                        "runtime) or keep the edge decision (default: what --recommend's edge "
                        "folds decide; without --recommend, keep)")
    add_launches_option(p)
    p.add_argument("--prefix", help="C function prefix (default collsel_<collective>)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.set_defaults(run=run_build)


def run_build(args):
    options = build_options(args)
    if args.budget is not None:
        values.percent(str(args.budget), "--budget")
        print("collsel: warning: --budget is deprecated and ignored: --recommend chooses by "
              "the one-standard-error rule", file=sys.stderr)
    if args.recommend and (args.max_depth is not None or args.threshold is not None):
        raise InputError("--recommend chooses the tree's size: give it without --max-depth "
                         "and --threshold")
    if args.prefix is not None:      # before the tables are read
        values.identifier(args.prefix, "--prefix")
    built = pipeline.build(args.tables, out=args.out, collective=args.collective,
                           options=options, settings=map_settings(args),
                           recommend=args.recommend, criterion=args.criterion,
                           beyond=args.beyond, prefix=args.prefix, launches=args.launches)
    print_built(built)
    return 0


def print_built(built):
    """What `collsel build` says of a tree it wrote (pipeline.build's result): the summary on
    stdout, then the warnings on stderr."""
    stats, dmap, t, out = built.stats, built.dmap, built.tree, built.out
    if built.no_c:
        print(f"{out}: no C files: {built.no_c}", file=sys.stderr)
    pen = ("n/a" if stats["penalty_mean"] is None
           else f"{stats['penalty_mean']:.2f}% mean, {stats['penalty_max']:.2f}% max")
    print(f"{out}: {stats['nodes']} node{'' if stats['nodes'] == 1 else 's'}, "
          f"{method_text.leaves_text(stats['leaves'])}, depth "
          f"{stats['min_depth']}-{stats['max_depth']} (mean {stats['mean_depth']:.2f}), "
          f"in-sample penalty {pen}, {stats['unmeasured_choices']} unmeasured choices")
    print(out_of_sample_line(stats["out_of_sample"], dmap.family))
    if built.z:
        print(third_axis_line(stats["third_axis"], dmap.family))
    print("methods in the leaves: " + method_text.leaf_methods_text(
        dmap.collective, method_text.leaf_method_counts(t, dmap.methods), dmap.family,
        MAX_METHODS_SHOWN))
    if built.recommend:
        print(f"recommended: {stats['recommendation']['why']}")
        figure = headline.of_stats(stats)
        print(f"figures: this tree {headline.percent(figure.tree)}, "
              f"{method_text.default_name(dmap.family)} {headline.percent(figure.default)}, "
              f"{figure.basis()}" + ("; the tree defers everywhere: it is the default"
                                     if figure.defers else ""))
    if built.beyond == "defer":
        print(f"beyond P={dmap.axes[0].values[-1]}: defer to the MPI's default (tree.json "
              f"`beyond`, {'--beyond defer' if built.beyond_given else 'the edge folds decided'})")
    p_values = list(dmap.axes[0].values)
    note = extrapolation.tree_note(p_values, p_values[-1] if built.beyond == "defer" else None)
    if not extrapolation.one_p(p_values):
        print(note)
    sys.stdout.flush()      # the warnings follow the summary they are about
    if extrapolation.one_p(p_values):
        print(f"collsel: warning: {out}: {note}", file=sys.stderr)
    for warning in stats["warnings"]:
        print(f"collsel: warning: {out}: {warning}", file=sys.stderr)


BEYOND_CHOICES = ("defer", "keep")


# Methods `build` names in its summary line (the rest are counted; stats.json lists them all).
MAX_METHODS_SHOWN = 6


def third_axis_line(block, family):
    z = block["axis"]
    return (f"{z}: the best method differs between {z} values in {block['best_differs']} of "
            f"{block['cells']} (P, m) cells measured at 2+ values ({block['tie_sets_disjoint']} "
            f"even by tie sets); {z}-oblivious tree, "
            + out_of_sample_line(block["oblivious_out_of_sample"], family))


def out_of_sample_line(block, family):
    """One line: the out-of-sample mean penalties of the tree, of the MPI's default and of the
    best fixed method ("nested" where the tree's figure is the recommendation's nested one:
    core.evaluate.out_of_sample.NESTED)."""
    parts = []
    for kind in out_of_sample.KINDS:
        f = block.get(kind)
        if f is None or f["tree"]["mean"] is None:
            continue
        d, b = f["default"]["mean"], f["best_fixed"]["mean"]
        nested = " nested" if f.get("how") == out_of_sample.NESTED else ""
        parts.append(f"{f['label']}{nested} {f['tree']['mean']:.2f}% on {f['tree']['cells']} "
                     "cells ("
                     + ("" if d is None else f"{method_text.default_name(family)} {d:.2f}% on "
                        f"{f['default']['cells']}, ")
                     + (f"best fixed method {b:.2f}%)" if b is not None else
                        "no fixed method measured in every cell)"))
    if block.get("launches") is None:
        parts.append("no launch data (only leave-one-out)")
    return "out-of-sample mean penalty: " + "; ".join(parts)
