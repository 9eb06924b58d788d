"""`collsel report TABLE... [--collective C] --out DIR`: one collective's report, or, when the
tables hold several and no --collective is given, each one's report and an overview page. This
module holds the flags and prints; collsel.pipeline.report writes the report."""
import dataclasses

from collsel import pipeline
from collsel.commands.options import (add_criterion_option, add_launches_option,
                                      add_table_options, percent)
from collsel.core.evaluate import recommend
from collsel.core.trees import tree
from collsel.sinks.report.compute import count
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


def request(args) -> pipeline.ReportRequest:
    """The report of the parsed flags: every flag is a field of the request, as given."""
    return pipeline.ReportRequest(**{f.name: getattr(args, f.name)
                                     for f in dataclasses.fields(pipeline.ReportRequest)})


def run_report(args):
    print_result(pipeline.report(request(args)))
    return 0


def print_result(result: pipeline.ReportResult) -> None:
    """What `collsel report` prints: each collective's summary, and an overview's table."""
    for one in result.reports:
        print_summary(one.out, one.report, one.files)
    if result.overview is None:
        return
    from collsel.sinks.report import overview
    for line in overview.text_lines(result.overview):
        print(line)
    print(f"{result.out}/index.html: overview of {len(result.reports)} collectives "
          f"({', '.join(one.report.collective for one in result.reports)}); largest held-out "
          f"gain over the default: {result.overview['largest_gain'] or 'none'}")


def print_summary(out, report, files):
    rec = report.recommendation
    pen = "n/a" if rec["penalty_mean"] is None else f"{rec['penalty_mean']:.2f}%"
    print(f"{out}/index.html: {len(files)} files; recommended tree ({rec['split']} split, "
          f"{rec['leaf']} leaves): {count(rec['nodes'], 'node', 'nodes')}, "
          f"{count(rec['leaves'], 'leaf', 'leaves')}, in-sample mean penalty {pen}"
          + (f"; chosen by criterion {rec['scored_by']}" if rec.get("scored_by") else ""))
    for w in report.warnings:
        if w["tree"] == "recommended":
            print(f"{out}/index.html: warning: {w['column']}, the recommended tree's mean "
                  f"penalty {w['tree_mean']:.2f}% is above that of {w['against_name']} "
                  f"({w['other_mean']:.2f}%)")
