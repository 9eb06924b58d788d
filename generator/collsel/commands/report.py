"""`collsel report TABLE... --collective C --out DIR`."""
import math
import os
import shutil
import sys
import tempfile
import time

from collsel.commands.options import add_table_options, percent, read_tables
from collsel.commands.stats import depths_option, thresholds_option
from collsel.core import decision_map, table, values
from collsel.core.files import write_directory
from collsel.errors import InputError
from collsel.sinks.report.compute import MAX_THRESHOLDS, ReportOptions, check_size
from collsel.core.tree import LEAF_RULES, SPLITS


def register(sub):
    p = sub.add_parser(
        "report", help="penalty-analysis report: index.html, report.json, PNG/SVG plots",
        description="Write DIR/index.html (one self-contained page: images embedded, no network, "
        "no JavaScript), DIR/report.json (every number the page shows) and a PNG and an SVG of "
        "each plot: the data summary, the exact decision map and trees limited by depth "
        "(1..K) and accuracy threshold, their penalty maps, the statistics table of every "
        "limit with both split modes and both leaf rules, the penalty/size trade-off with its "
        "Pareto front, Open MPI's own decision (algorithm 0 rows) and an optional model-based "
        "choice as baselines, and the smallest tree within --budget with the commands that "
        "emit it.")
    add_table_options(p)
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--depths", type=int, default=6, metavar="K", help="max depths 1..K (default 6)")
    p.add_argument("--thresholds", default="60,80,90,95", metavar="LIST",
                   help="comma-separated accuracy thresholds in %% (default 60,80,90,95)")
    p.add_argument("--budget", type=percent, default=5.0, metavar="PCT",
                   help="mean-penalty budget of the recommended tree, e.g. 5%% (default 5)")
    p.add_argument("--model-table", action="append", dest="model_tables", metavar="PREDICTED.csv",
                   help="predicted performance table (canonical format, e.g. from `collsel model "
                   "predict`); the model-based choice is its fastest method per cell, scored "
                   "with the measured times. Repeat for several files")
    p.add_argument("--split", choices=SPLITS,
                   help="split mode of the pictured trees (default: the recommended tree's)")
    p.add_argument("--leaf", choices=LEAF_RULES,
                   help="leaf rule of the pictured trees (default: the recommended tree's)")
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

    def progress(msg):
        if not args.quiet:
            print(f"collsel report: {msg} ({time.monotonic() - start:.1f} s)", file=sys.stderr)

    options = ReportOptions(tuple(args.tables), args.collective, args.z, depths,
                            tuple(thresholds), args.budget, tuple(args.model_tables or ()),
                            args.split, args.leaf)
    measured = read_tables(args.tables).select(args.collective)
    dmap = decision_map.build_map(measured, args.z)
    check_size(dmap, options)
    mmap = None
    if args.model_tables:
        mmap = decision_map.build_map(
            read_tables(args.model_tables).select(args.collective), args.z)
    from collsel.sinks.report import compute, page   # matplotlib only when a report is made
    report = compute.compute(dmap, table.summary(measured), options, mmap, progress)
    files = page.render_files(report, progress)
    write_directory(args.out, files, manifest=REPORT_MANIFEST)
    rec = report["recommendation"]
    if rec is None:
        line = f"no tree within a {args.budget:g}% mean penalty"
    else:
        line = (f"recommended {rec['split']}/{rec['leaf']} {rec['label']}: {rec['nodes']} nodes, "
                f"mean penalty {rec['penalty_mean']:.2f}%")
    print(f"{args.out}/index.html: {len(files)} files; {line}")
    return 0
