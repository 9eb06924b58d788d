"""`collsel build`: table -> decision map -> tree -> tree.json, stats.json and C code."""
import contextlib
import json
import os
import sys

from collsel.core import (baseline_warning, build_config, extrapolation, headline, method_text,
                          out_of_sample, penalty, recommend,
                          third_axis, tree, treefile, values)
from collsel.core.files import write_directory
from collsel.errors import InputError
from collsel.sinks.emit import c_ladder as emit_c, ompi_dec_fixed, targets
from collsel.commands import launch_tables
from collsel.commands.options import (add_criterion_option, add_table_options,
                                      add_tree_options, build_options, load_table_and_map,
                                      map_settings)
from collsel.commands import add_command


def register(sub):
    p = add_command(sub, "build",
                    description="Build the decision map of one collective, encode it as a "
                    "quadtree (octree with --z) within the given limits (none = exact tree), "
                    "and write DIR/tree.json, DIR/stats.json (in-sample and out-of-sample "
                    "penalties), DIR/decision.{c,h} and, for a collective of Open MPI's "
                    "coll/tuned, DIR/ompi_<collective>_intra_dec_fixed.c.")
    add_table_options(p)
    add_tree_options(p)
    p.add_argument("--recommend", action="store_true",
                   help="instead of --max-depth/--threshold: the tree chosen by cross-validation "
                        "among pruned, depth- and threshold-limited trees of both split modes "
                        "and leaf rules (tie-aware or not, defer on and off), deferring to the "
                        "MPI everywhere and the best fixed method: the smallest within one "
                        "standard error of the best, never worse than the MPI's default; its "
                        "figure comes from nested cross-validation (the tree the report "
                        "recommends)")
    add_criterion_option(p, "with --recommend, ")
    p.add_argument("--budget", metavar="PCT",
                   help="deprecated and ignored: --recommend now uses the one-standard-error "
                        "rule")
    p.add_argument("--beyond", choices=BEYOND_CHOICES,
                   help="beyond the largest measured P: defer to the MPI's default there "
                        "(tree.json's `beyond`, honoured by query, every emit target and the "
                        "runtime) or keep the edge decision (default: what --recommend's edge "
                        "folds decide; without --recommend, keep)")
    launch_tables.add_launches_option(p)
    p.add_argument("--prefix", help="C function prefix (default collsel_<collective>)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.set_defaults(run=run_build)


def render_files(dmap, t, options, prefix=None, extra_stats=None, beyond=None):
    """Every output of `collsel build` for tree `t` (`beyond`: a treefile.Beyond or None),
    rendered in memory, and why the C files are left out (a hierarchical leaf, which C cannot
    run) or None."""
    stats = {**penalty.tree_stats(dmap, t), **(extra_stats or {})}
    document = treefile.tree_document(dmap, t, options, beyond)
    loaded = treefile.LoadedTree(document, "tree.json", schema=False)   # made just now
    files = {"tree.json": treefile.dumps(document),
             "stats.json": json.dumps(stats, indent=1, sort_keys=True, allow_nan=False) + "\n"}
    no_c = targets.hierarchical_leaf_error("c", "tree.json", loaded)
    if no_c:
        return files, stats, no_c
    files.update(emit_c.emit_decision(loaded, prefix))
    if dmap.collective in ompi_dec_fixed.SPECS and len(dmap.axes) == 2 \
            and dmap.family == "openmpi":          # Open MPI's file: coll/tuned ids only
        files.update(ompi_dec_fixed.emit(loaded))
    return files, stats, None


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
    values.output_directory(args.out)
    table, dmap = load_table_and_map(args)
    settings = map_settings(args)
    journal, launches = launch_tables.load(args)
    folds = out_of_sample.all_folds(table, launches, settings, dmap=dmap)
    extra = {}
    config = build_config.Config(args.out, options, settings, args.recommend, args.criterion,
                                 args.beyond)
    if args.recommend:
        from collsel.core import parallel   # only here: multiprocessing costs a build ~10 ms
    with (parallel.pool() if args.recommend else contextlib.nullcontext()) as workers:
        built = build_config.build(table, config, dmap, launches, workers)
    t = built.tree
    rebuild = recommend.fold_builder(dmap, options, built.figures)
    if args.recommend:
        extra["recommendation"] = {**built.figures, "command": recommend.build_command(
            args.tables, args.collective, recommend.chosen_options(options, built.figures),
            settings, journal if args.launches else None, args.out, args.criterion,
            args.beyond)}
    options = built.options
    extra["out_of_sample"] = {**out_of_sample.tree_figures(
        folds, rebuild, recommend.nested_builders(built.figures)),
                              "launch_journal": journal}
    extra["leaf_methods"] = leaf_methods(dmap, t)
    extra["warnings"] = baseline_warning.worse_than_baselines(extra["out_of_sample"], dmap.family)
    if args.z:
        extra["third_axis"] = third_axis_block(table, dmap, launches, settings,
                                               build_options(args))
    decision = built.beyond
    files, stats, no_c = render_files(dmap, t, options, args.prefix, extra,
                                      treefile.beyond_of(dmap, decision))
    write_directory(args.out, files)
    if no_c:
        for stale in ("decision.c", "decision.h", f"ompi_{dmap.collective}_intra_dec_fixed.c"):
            with contextlib.suppress(FileNotFoundError):   # an earlier build's C would disagree
                os.remove(os.path.join(args.out, stale))
        print(f"{args.out}: no C files: {no_c}", file=sys.stderr)
    pen = ("n/a" if stats["penalty_mean"] is None
           else f"{stats['penalty_mean']:.2f}% mean, {stats['penalty_max']:.2f}% max")
    print(f"{args.out}: {stats['nodes']} node{'' if stats['nodes'] == 1 else 's'}, "
          f"{method_text.leaves_text(stats['leaves'])}, depth "
          f"{stats['min_depth']}-{stats['max_depth']} (mean {stats['mean_depth']:.2f}), "
          f"in-sample penalty {pen}, {stats['unmeasured_choices']} unmeasured choices")
    print(out_of_sample_line(stats["out_of_sample"], dmap.family))
    if args.z:
        print(third_axis_line(stats["third_axis"], dmap.family))
    print("methods in the leaves: " + method_text.leaf_methods_text(
        dmap.collective, method_text.leaf_method_counts(t, dmap.methods), dmap.family,
        MAX_METHODS_SHOWN))
    if args.recommend:
        print(f"recommended: {stats['recommendation']['why']}")
        figure = headline.of_stats(stats)
        print(f"figures: this tree {headline.percent(figure.tree)}, "
              f"{method_text.default_name(dmap.family)} {headline.percent(figure.default)}, "
              f"{figure.basis()}" + ("; the tree defers everywhere: it is the default"
                                     if figure.defers else ""))
    if decision == "defer":
        print(f"beyond P={dmap.axes[0].values[-1]}: defer to the MPI's default (tree.json "
              f"`beyond`, {'--beyond defer' if args.beyond else 'the edge folds decided'})")
    p_values = list(dmap.axes[0].values)
    note = extrapolation.tree_note(p_values, p_values[-1] if decision == "defer" else None)
    if not extrapolation.one_p(p_values):
        print(note)
    sys.stdout.flush()      # the warnings follow the summary they are about
    if extrapolation.one_p(p_values):
        print(f"collsel: warning: {args.out}: {note}", file=sys.stderr)
    for warning in stats["warnings"]:
        print(f"collsel: warning: {args.out}: {warning}", file=sys.stderr)
    return 0


BEYOND_CHOICES = ("defer", "keep")


# Methods `build` names in its summary line (the rest are counted; stats.json lists them all).
MAX_METHODS_SHOWN = 6


def leaf_methods(dmap, t):
    """stats.json's `leaf_methods`: every method the tree's leaves hold, with its ids, its name
    (core.method_text) and how many leaves hold it."""
    return [{"algorithm": m.algorithm, "segsize": m.segsize, "faninout": m.faninout,
             "name": method_text.method_text(dmap.collective, m, dmap.family), "leaves": n}
            for m, n in method_text.leaf_method_counts(t, dmap.methods)]


def third_axis_block(table, dmap, launches, settings, options):
    """stats.json's `third_axis`: the (P, m) cells whose decision changes with z, and the
    z-oblivious tree (built with the same limits from the same runs, z pooled) out of sample on
    the same folds as the tree."""
    pooled = out_of_sample.all_folds(table, launches, settings, pool=True)
    return {**third_axis.changes(dmap),
            "oblivious_out_of_sample": out_of_sample.tree_figures(
                pooled, lambda m: tree.build_tree(m, options))}


def third_axis_line(block, family):
    z = block["axis"]
    return (f"{z}: the best method differs between {z} values in {block['best_differs']} of "
            f"{block['cells']} (P, m) cells measured at 2+ values ({block['tie_sets_disjoint']} "
            f"even by tie sets); {z}-oblivious tree, "
            + out_of_sample_line(block["oblivious_out_of_sample"], family))


def out_of_sample_line(block, family):
    """One line: the out-of-sample mean penalties of the tree, of the MPI's default and of the
    best fixed method ("nested" where the tree's figure is the recommendation's nested one:
    core.out_of_sample.NESTED)."""
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
