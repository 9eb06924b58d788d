"""`collsel report TABLE... [--collective C] --out DIR`: one collective's report, or, when the
tables hold several and no --collective is given, each one's report and an overview page."""
import argparse
import math
import os
import shutil
import sys
import tempfile
import time

from collsel.commands.options import (add_criterion_option, add_launches_option,
                                      add_table_options, load_launches, load_table_and_map,
                                      map_settings, percent, read_tables)
from collsel.commands.stats import depths_option, thresholds_option
from collsel.core import (algorithms, decision_map, out_of_sample, probe_latency, recommend,
                          recommendation, table, tree, treefile, values)
from collsel.core.files import write_directory
from collsel.errors import InputError
from collsel.sources import launch_tables
from collsel.sinks.report.compute import (DEPLOY_TARGETS, MAX_THRESHOLDS, ProbePairs,
                                          Recommended, ReportOptions, check_size, count)
from collsel.commands import add_command


def register(sub):
    p = add_command(
        sub, "report",
        description="Write DIR/index.html (one self-contained page: images embedded, no network, "
        "no JavaScript), DIR/report.json (every number the page shows) and an SVG of each plot "
        "(with --png, a PNG too): the data summary, the exact decision map and trees limited by "
        "depth (1..K) and accuracy threshold, their penalty maps, the statistics table of every "
        "limit with both split modes and both leaf rules, the penalty/size trade-off with its "
        "Pareto front, Open MPI's own decision (algorithm 0 rows) and an optional model-based "
        "choice as baselines, the tie-set / decision-confidence and candidate-count maps, "
        "out-of-sample penalties (across launches, leave-one-P-out, leave-one-m-out) beside "
        "the in-sample ones, and the recommended tree: exactly the one `collsel build "
        "--recommend` writes with the same tables (the command "
        "is on the page and in report.json). With --z, one set of decision-map panels per "
        "value (bin) of the third axis; when the sweep's journal has a probe_us column "
        "(--probe, --load-levels), the probe-vs-latency plot and Pearson/Spearman per "
        "(P, m, method), as `collsel stats --probe-latency`. Tables of several "
        "collectives without --collective: each collective's report in DIR/<collective>/ "
        "(from the tables holding it, with the journal beside a single one) and an overview "
        "page DIR/index.html with DIR/overview.json: one row per collective, its methods, "
        "cells and recommended tree's leaves, the held-out mean penalty of the MPI's default, "
        "the recommended tree and the best fixed method (across launches when a journal is "
        "there, else leave-one-P-out, else leave-one-m-out), and the selection criterion's "
        "figures; the same table on stdout.")
    add_table_options(p)
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--depths", type=int, default=6, metavar="K", help="max depths 1..K (default 6)")
    p.add_argument("--thresholds", default="60,80,90,95", metavar="LIST",
                   help="comma-separated accuracy thresholds in %% (default 60,80,90,95)")
    p.add_argument("--budget", type=percent, default=recommend.DEFAULT_BUDGET, metavar="PCT",
                   help="the trade-off plot's budget line, in percent (default "
                   f"{recommend.DEFAULT_BUDGET:g}); the recommended tree does not use it "
                   "(`collsel build --recommend` chooses by cross-validation)")
    add_criterion_option(p)
    p.add_argument("--model-table", action="append", dest="model_tables", metavar="PREDICTED.csv",
                   help="predicted performance table (canonical format, e.g. from `collsel model "
                   "predict`); the model-based choice is its fastest method per cell, scored "
                   "with the measured times. Repeat for several files")
    p.add_argument("--split", choices=tree.SPLITS,
                   help="split mode of the pictured trees (default: the recommended tree's, "
                   "which cross-validation chooses)")
    p.add_argument("--leaf", choices=tree.LEAF_RULES,
                   help="leaf rule of the pictured trees (default: the recommended tree's, "
                   "which cross-validation chooses)")
    add_launches_option(p)
    p.add_argument("--tree-dir", metavar="DIR",
                   help="where `collsel build --recommend` writes (or wrote) this tree: the "
                   "deploy box's commands name it, as an absolute path (default: "
                   "tree-<collective> in the current directory)")
    p.add_argument("--deployed", action="append", metavar="TARGET=PATH",
                   help="a file already emitted from this tree (e.g. ompi-rules=tune/rules.conf, "
                   "blob=tune/trees): the deploy box runs it as it is instead of an emit "
                   "command; it must exist. Repeat for several targets")
    p.add_argument("--png", action="store_true",
                   help="also write each plot as DIR/<name>.png (the page embeds the SVGs; "
                   "drawing every plot a second time adds about a second of CPU)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(run=run_report)


def _check_out(path):
    """--out must be a directory collsel can write into (checked before the long work). Access
    bits do not stop root, so a temporary directory is made where the report's will be."""
    values.output_directory(path)
    parent = os.path.dirname(os.path.abspath(path))
    try:
        if os.path.isdir(parent):
            shutil.rmtree(tempfile.mkdtemp(dir=parent, prefix=".collsel-probe-"))
    except OSError as e:
        raise InputError(f"--out {path}: cannot write in {parent}: {e.strerror or e}") from None


# The names of the files a report wrote, so a rerun can remove the ones it no longer makes.
REPORT_MANIFEST = "report-files.txt"


def run_report(args):
    start = time.monotonic()
    # Every flag is checked before the long work, and the output directory too, so a bad one is
    # one line and nothing written.
    depths = depths_option(args.depths)
    thresholds = thresholds_option(args.thresholds, limit=MAX_THRESHOLDS)
    if not (math.isfinite(args.budget) and args.budget >= 0):
        raise InputError(f"--budget {args.budget:g} is not a percentage >= 0")
    _check_out(args.out)
    _deployed(args.deployed)

    def progress(msg):
        if not args.quiet:
            print(f"collsel report: {msg} ({time.monotonic() - start:.1f} s)", file=sys.stderr)

    from collsel.sinks.report import figure_pool
    with figure_pool.pool() as workers:     # the recommendation's folds, then the figures
        per_collective, read = overview_tables(args)
        if per_collective:
            return run_overview(args, per_collective, depths, thresholds, progress, workers, read)
        # sets args.collective when inferred; the tables overview_tables read are not read again
        measured, dmap = load_table_and_map(args, read and [read[p] for p in args.tables])
        report, files, _ = collective_report(args, measured, dmap, depths, thresholds,
                                             progress, workers)
    write_directory(args.out, files, manifest=REPORT_MANIFEST)
    print_summary(args.out, report, files)
    return 0


def collective_report(args, measured, dmap, depths, thresholds, progress, workers=None):
    """(report dict, {file name: bytes}, the recommendation's figures) of one collective, its
    plots drawn by `workers` (figure_pool.pool()) when given."""
    tree_dir = _tree_dir(args)
    options = ReportOptions(tuple(args.tables), args.collective, args.z, depths,
                            tuple(thresholds), args.budget, tuple(args.model_tables or ()),
                            args.split, args.leaf, tree_dir,
                            os.path.isfile(os.path.join(tree_dir, "tree.json")),
                            _deployed(args.deployed))
    check_size(dmap, options)
    mmap = None
    if args.model_tables:
        mmap = decision_map.build_map(model_table(args.model_tables, args.collective), args.z)
    with launch_tables.shared_parses():
        journal, launches = load_launches(args)
        probe = probe_pairs(journal, args.collective)
    recommended = recommended_tree(dmap, measured, args, journal, launches, workers)
    progress("recommended tree built and scored out of sample")
    from collsel.sinks.report import compute, page   # matplotlib only when a report is made
    report = compute.compute(dmap, table.summary(measured), options, recommended, mmap,
                             progress, probe)
    files = page.render_files(report, progress, recommended.tree_json, workers, args.png)
    return report, files, recommended.figures


def print_summary(out, report, files):
    rec = report["recommendation"]
    pen = "n/a" if rec["penalty_mean"] is None else f"{rec['penalty_mean']:.2f}%"
    print(f"{out}/index.html: {len(files)} files; recommended tree ({rec['split']} split, "
          f"{rec['leaf']} leaves): {count(rec['nodes'], 'node', 'nodes')}, "
          f"{count(rec['leaves'], 'leaf', 'leaves')}, in-sample mean penalty {pen}"
          + (f"; chosen by criterion {rec['scored_by']}" if rec.get("scored_by") else ""))
    for w in report["warnings"]:
        if w["tree"] == "recommended":
            print(f"{out}/index.html: warning: {w['column']}, the recommended tree's mean "
                  f"penalty {w['tree_mean']:.2f}% is above that of {w['against_name']} "
                  f"({w['other_mean']:.2f}%)")


def _tree_dir(args):
    """The absolute directory the report's build command writes the tree to."""
    return os.path.abspath(args.tree_dir or f"tree-{args.collective}")


def _deployed(given):
    """--deployed TARGET=PATH,... as ((target, absolute path), ...), each checked: a known
    target, given once, and a file or directory that exists."""
    found = {}
    for text in given or ():
        target, sep, path = text.partition("=")
        if not sep or not path:
            raise InputError(f"--deployed {text!r}: expected TARGET=PATH, e.g. "
                             "ompi-rules=tune/rules.conf")
        if target not in DEPLOY_TARGETS:
            raise InputError(f"--deployed {text!r}: unknown target {target!r}; one of "
                             f"{', '.join(DEPLOY_TARGETS)}")
        if target in found:
            raise InputError(f"--deployed: {target} given twice")
        if not os.path.exists(path):
            raise InputError(f"--deployed {text!r}: {path} does not exist")
        found[target] = os.path.abspath(path)
    return tuple(found.items())


def overview_tables(args):
    """({collective: [its tables]} when the report is an overview (no --collective, and the
    tables hold several collectives) else None, {path: its table as read to find out} or None
    when --collective is given). Each collective's journal is the one beside its table
    (TABLE.launches), so --launches and --model-table, which name one file for one collective,
    are refused here; so is a collective collsel does not know."""
    if args.collective is not None:
        return None, None
    held, family, read = {}, {}, {}
    for path in args.tables:
        one = read[path] = read_tables([path])
        for coll in sorted(set(one.collective.tolist())):
            held.setdefault(coll, []).append(path)
            family[coll] = one.family
    if len(held) < 2:
        return None, read
    for flag, given in (("--launches", args.launches), ("--model-table", args.model_tables),
                        ("--tree-dir", args.tree_dir), ("--deployed", args.deployed)):
        if given:
            raise InputError(f"{flag}: the tables hold {len(held)} collectives "
                             f"({', '.join(held)}) and {flag} names files of one; give "
                             f"--collective for that one's report (each table's journal "
                             f"TABLE.launches is found beside it)")
    for coll, paths in held.items():
        try:
            algorithms.check_collective(coll, family[coll])
        except InputError as e:
            raise InputError(f"{', '.join(paths)}: {e}") from None
        values.output_directory(os.path.join(args.out, coll))
    return held, read


def run_overview(args, per_collective, depths, thresholds, progress, workers=None, read=None):
    """Each collective's report in DIR/<collective>/ (as `--collective C` writes it, from the
    tables holding C and the journal beside a single one) and the overview in DIR/index.html."""
    from collsel.sinks.report import overview
    parts, written = [], {}
    for coll, paths in per_collective.items():
        one = argparse.Namespace(**{**vars(args), "collective": coll, "tables": paths})
        measured, dmap = load_table_and_map(one, read and [read[p] for p in paths])
        report, files, figures = collective_report(
            one, measured, dmap, depths, thresholds, lambda msg: progress(f"{coll}: {msg}"),
            workers)
        parts.append(overview.CollectiveReport(f"{coll}/index.html", report, figures))
        written[coll] = (report, files)
    doc = overview.overview(parts)
    write_directory(args.out, overview.render_files(doc), manifest=REPORT_MANIFEST)
    for coll, (report, files) in written.items():
        write_directory(os.path.join(args.out, coll), files, manifest=REPORT_MANIFEST)
        print_summary(os.path.join(args.out, coll), report, files)
    for line in overview.text_lines(doc):
        print(line)
    print(f"{args.out}/index.html: overview of {len(parts)} collectives "
          f"({', '.join(per_collective)}); largest held-out gain over the default: "
          f"{doc['largest_gain'] or 'none'}")
    return 0


def model_table(paths, collective):
    """The predicted rows of `collective` in --model-table files; refused, naming both
    collectives, when they predict others only."""
    predicted = read_tables(paths)
    present = sorted(set(predicted.collective.tolist()))
    if collective not in present:
        raise InputError(f"--model-table {', '.join(paths)}: predicts {', '.join(present)}, but "
                         f"the report is of {collective}; give a table predicted for "
                         f"{collective}")
    return predicted.select(collective)


def probe_pairs(journal, collective):
    """The probe-vs-latency pairs (core.probe_latency) when the sweep's journal has a probe_us
    column (a sweep with --probe or --load-levels), else None: the report's section on whether
    the probe predicts the latency (the paper's figure 2)."""
    if journal is None:
        return None
    probed = launch_tables.read_launch_tables(journal, collective, "probe_us")
    if not probed:
        return None
    levels = launch_tables.read_launch_tables(journal, collective, "load_level")
    return ProbePairs(journal, probe_latency.from_launch_tables(probed, levels=levels))


def recommended_tree(dmap, measured, args, journal, launches, workers=None):
    """The tree `collsel build --recommend` writes for these arguments (core.recommend, the one
    implementation; the same steps as commands/build.py), its command line and tree.json bytes,
    and its out-of-sample figures of every kind beside the MPI's default, the best fixed method
    and the exact map on the same folds (core.out_of_sample)."""
    options = tree.BuildOptions(args.split or "balanced", args.leaf or "majority").check()
    settings = map_settings(args)
    t, figures = recommend.recommend(dmap, options, launches, settings, args.criterion, workers)
    from collsel.sinks.report import figure_pool
    figure_pool.warm(workers)   # the workers are done with the folds: matplotlib, while we score
    out = _tree_dir(args)
    rebuild = recommend.fold_builder(dmap, options, figures)
    options = recommend.chosen_options(options, figures)
    # absolute paths: the page is read from anywhere, and its commands must still work
    command = recommend.build_command([os.path.abspath(t) for t in args.tables],
                                      args.collective, options,
                                      settings, journal if args.launches else None, out,
                                      args.criterion)
    recorded = recommend.recorded_options(options, t)
    beyond = treefile.beyond_of(dmap, recommendation.beyond_decision(None, figures))
    tree_json = treefile.dumps(treefile.tree_document(dmap, t, recorded, beyond)).encode("utf-8")
    folds = out_of_sample.all_folds(measured, launches, settings, dmap=dmap)
    rec = out_of_sample.tree_figures(folds, rebuild, recommend.nested_builders(figures))
    exact = out_of_sample.tree_figures(folds, lambda m: tree.build_tree(m, options))
    kinds = {kind: None if rec[kind] is None else {
        "label": rec[kind]["label"], "folds": rec[kind]["folds"],
        "recommended": rec[kind]["tree"], "exact": exact[kind]["tree"],
        "default": rec[kind]["default"], "best_fixed": rec[kind]["best_fixed"]}
        for kind in out_of_sample.KINDS}
    return Recommended(t, options, figures, command, kinds, tree_json)
