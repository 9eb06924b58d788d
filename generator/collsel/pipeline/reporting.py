"""`collsel report`'s steps: one collective's report (report.json, index.html, the plots), or,
when the tables hold several and no collective is named, each one's report and an overview page.
`collsel report` and `collsel tune` call report(); the command prints its result."""
from __future__ import annotations

import math
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, replace

from collsel.core.evaluate import out_of_sample, probe_latency, recommend, recommendation
from collsel.core.io import values
from collsel.core.maps import decision_map, table
from collsel.core.mpi import algorithms
from collsel.core.trees import tree, treefile
from collsel.core.io.files import write_directory
from collsel.errors import InputError
from collsel.sinks.report.compute import (DEPLOY_TARGETS, MAX_THRESHOLDS, ProbePairs,
                                          Recommended, Report, ReportOptions, check_size)
from collsel.sources import launch_tables, tables as given_tables

# The names of the files a report wrote, so a rerun can remove the ones it no longer makes.
REPORT_MANIFEST = "report-files.txt"


@dataclass(frozen=True)
class ReportRequest:
    """`collsel report`'s flags, typed, with the command line's defaults
    (tests/unit/pipeline/test_pipeline.py holds them equal)."""
    tables: list[str]
    out: str
    collective: str | None = None
    z: str | None = None
    tolerance: float | None = None
    defer: bool = True
    depths: int = 6
    thresholds: str = "60,80,90,95"
    budget: float = recommend.DEFAULT_BUDGET
    criterion: str = "combined"
    model_tables: list[str] | None = None
    split: str | None = None
    leaf: str | None = None
    launches: str | None = None
    tree_dir: str | None = None
    deployed: list[str] | None = None   # ["TARGET=PATH", ...]
    png: bool = False
    quiet: bool = False

    def settings(self) -> decision_map.MapSettings:
        """How the tables become a map (also for the out-of-sample folds)."""
        return decision_map.MapSettings(self.z, self.tolerance, self.defer)


@dataclass(frozen=True)
class CollectiveReport:
    """One collective's report as written into `out`."""
    out: str
    report: Report
    files: tuple[str, ...]      # the file names written
    figures: dict               # the recommendation's figures (core.evaluate.recommend)


@dataclass(frozen=True)
class ReportResult:
    """What report() wrote: each collective's report (one, or each of an overview's, in DIR/<C>),
    and the overview document (overview.json) when the tables held several collectives."""
    out: str
    reports: tuple[CollectiveReport, ...]
    overview: dict | None = None


def report(request: ReportRequest) -> ReportResult:
    """Write the report of `request` (module docstring). Every option is checked, and the
    output directory too, before the long work: a bad one is one line and nothing written.
    Progress lines go to stderr unless `request.quiet`."""
    start = time.monotonic()
    depths = values.depths(request.depths)
    thresholds = values.thresholds(request.thresholds, MAX_THRESHOLDS)
    if not (math.isfinite(request.budget) and request.budget >= 0):
        raise InputError(f"--budget {request.budget:g} is not a percentage >= 0")
    _check_out(request.out)
    deployed(request.deployed)

    def progress(msg):
        if not request.quiet:
            print(f"collsel report: {msg} ({time.monotonic() - start:.1f} s)", file=sys.stderr)

    from collsel.sinks.report import figure_pool
    with figure_pool.pool() as workers:     # the recommendation's folds, then the figures
        per_collective, read = overview_tables(request)
        if per_collective:
            return _overview(request, per_collective, depths, thresholds, progress, workers,
                             read)
        loaded = given_tables.load(request.tables, collective=request.collective,
                                   settings=request.settings(),
                                   parts=read and [read[p] for p in request.tables])
        one = collective_report(replace(request, collective=loaded.collective), loaded,
                                depths, thresholds, progress, workers)
    write_directory(request.out, one.files, manifest=REPORT_MANIFEST)
    return ReportResult(request.out, (_written(request.out, one),))


@dataclass(frozen=True)
class _Made:
    """One collective's report in memory: the record and its files' bytes."""
    report: Report
    files: dict
    figures: dict


def _written(out, made):
    return CollectiveReport(out, made.report, tuple(made.files), made.figures)


def collective_report(request, loaded, depths, thresholds, progress, workers=None):
    """One collective's report in memory (`loaded`: its sources.tables.Loaded, the request
    naming its collective), its plots drawn by `workers` (figure_pool.pool()) when given."""
    measured, dmap = loaded.table, loaded.dmap
    tree_dir = _tree_dir(request)
    options = ReportOptions(tuple(request.tables), request.collective, request.z, depths,
                            tuple(thresholds), request.budget, tuple(request.model_tables or ()),
                            request.split, request.leaf, tree_dir,
                            os.path.isfile(os.path.join(tree_dir, "tree.json")),
                            deployed(request.deployed))
    check_size(dmap, options)
    mmap = None
    if request.model_tables:
        mmap = decision_map.build_map(model_table(request.model_tables, request.collective),
                                      request.z)
    with launch_tables.shared_parses():
        journal, launches = launch_tables.load(request.tables, request.collective,
                                               request.launches, request.z)
        probe = probe_pairs(journal, request.collective)
    recommended = recommended_tree(dmap, measured, request, journal, launches, workers)
    progress("recommended tree built and scored out of sample")
    from collsel.sinks.report import compute, page   # matplotlib only when a report is made
    made = compute.compute(dmap, table.summary(measured), options, recommended, mmap,
                           progress, probe)
    files = page.render_files(made, progress, recommended.tree_json, workers, request.png)
    return _Made(made, files, recommended.figures)


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


def _tree_dir(request):
    """The absolute directory the report's build command writes the tree to."""
    return os.path.abspath(request.tree_dir or f"tree-{request.collective}")


def deployed(given):
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


def overview_tables(request):
    """({collective: [its tables]} when the report is an overview (no --collective, and the
    tables hold several collectives) else None, {path: its table as read to find out} or None
    when --collective is given). Each collective's journal is the one beside its table
    (TABLE.launches), so --launches and --model-table, which name one file for one collective,
    are refused here; so is a collective collsel does not know."""
    if request.collective is not None:
        return None, None
    held, family, read = {}, {}, {}
    for path in request.tables:
        one = read[path] = given_tables.read_tables([path])
        for coll in sorted(set(one.collective.tolist())):
            held.setdefault(coll, []).append(path)
            family[coll] = one.family
    if len(held) < 2:
        return None, read
    for flag, given in (("--launches", request.launches),
                        ("--model-table", request.model_tables),
                        ("--tree-dir", request.tree_dir), ("--deployed", request.deployed)):
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
        values.output_directory(os.path.join(request.out, coll))
    return held, read


def _overview(request, per_collective, depths, thresholds, progress, workers=None, read=None):
    """Each collective's report in DIR/<collective>/ (as `--collective C` writes it, from the
    tables holding C and the journal beside a single one) and the overview in DIR/index.html."""
    from collsel.sinks.report import overview
    parts, made = [], {}
    for coll, paths in per_collective.items():
        one = replace(request, collective=coll, tables=paths)
        loaded = given_tables.load(paths, collective=coll, settings=one.settings(),
                                   parts=read and [read[p] for p in paths])
        made[coll] = collective_report(
            replace(one, collective=loaded.collective), loaded, depths, thresholds,
            lambda msg, coll=coll: progress(f"{coll}: {msg}"), workers)
        parts.append(overview.CollectiveReport(f"{coll}/index.html", made[coll].report,
                                               made[coll].figures))
    doc = overview.overview(parts)
    write_directory(request.out, overview.render_files(doc), manifest=REPORT_MANIFEST)
    for coll, one_made in made.items():
        write_directory(os.path.join(request.out, coll), one_made.files,
                        manifest=REPORT_MANIFEST)
    return ReportResult(request.out, tuple(_written(os.path.join(request.out, coll), m)
                                           for coll, m in made.items()), doc)


def model_table(paths, collective):
    """The predicted rows of `collective` in --model-table files; refused, naming both
    collectives, when they predict others only."""
    predicted = given_tables.read_tables(paths)
    present = sorted(set(predicted.collective.tolist()))
    if collective not in present:
        raise InputError(f"--model-table {', '.join(paths)}: predicts {', '.join(present)}, but "
                         f"the report is of {collective}; give a table predicted for "
                         f"{collective}")
    return predicted.select(collective)


def probe_pairs(journal, collective):
    """The probe-vs-latency pairs (core.evaluate.probe_latency) when the sweep's journal has a
    probe_us column (a sweep with --probe or --load-levels), else None: the report's section on
    whether the probe predicts the latency (the paper's figure 2)."""
    if journal is None:
        return None
    probed = launch_tables.read_launch_tables(journal, collective, "probe_us")
    if not probed:
        return None
    levels = launch_tables.read_launch_tables(journal, collective, "load_level")
    return ProbePairs(journal, probe_latency.from_launch_tables(probed, levels=levels))


def recommended_tree(dmap, measured, request, journal, launches, workers=None):
    """The tree `collsel build --recommend` writes for this request (core.evaluate.recommend, the
    one implementation; the same steps as pipeline/building.py), its command line and tree.json
    bytes, and its out-of-sample figures of every kind beside the MPI's default, the best fixed
    method and the exact map on the same folds (core.evaluate.out_of_sample)."""
    options = tree.BuildOptions(request.split or "balanced", request.leaf or "majority").check()
    settings = request.settings()
    t, tree_map, figures = recommend.recommend(dmap, options, launches, settings,
                                               request.criterion, workers)
    from collsel.sinks.report import figure_pool
    figure_pool.warm(workers)   # the workers are done with the folds: matplotlib, while we score
    out = _tree_dir(request)
    rebuild = recommend.fold_builder(dmap, options, figures)
    options = recommend.chosen_options(options, figures)
    # absolute paths: the page is read from anywhere, and its commands must still work
    command = recommend.build_command([os.path.abspath(t) for t in request.tables],
                                      request.collective, options,
                                      settings, journal if request.launches else None, out,
                                      request.criterion)
    recorded = recommend.recorded_options(options, t)
    beyond = treefile.beyond_of(tree_map, recommendation.beyond_decision(None, figures))
    tree_json = treefile.dumps(treefile.tree_document(tree_map, t, recorded,
                                                      beyond)).encode("utf-8")
    folds = out_of_sample.all_folds(measured, launches, settings, dmap=dmap)
    rec = out_of_sample.tree_figures(folds, rebuild, recommend.nested_builders(figures))
    exact = out_of_sample.tree_figures(folds, lambda m: tree.build_tree(m, options))
    kinds = {kind: None if rec[kind] is None else {
        "label": rec[kind]["label"], "folds": rec[kind]["folds"],
        "recommended": rec[kind]["tree"], "exact": exact[kind]["tree"],
        "default": rec[kind]["default"], "best_fixed": rec[kind]["best_fixed"]}
        for kind in out_of_sample.KINDS}
    return Recommended(t, options, figures, command, kinds, tree_json,
                       None if tree_map is dmap else tree_map)
