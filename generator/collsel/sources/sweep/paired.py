"""The paired sweep (--mode paired): one benchmark launch per (P, launch number) measures every
method of P, interleaved in rounds shuffled by the launch's seed (protocol B), so the launch
effect cancels in each launch's comparison and launches are the independent replications.

The launch is the unit of completion: its rows (one per size and method) and a `# launch.P.K=`
line (seed, wall time, the machine's load before and after) go into the journal in one fsynced
write; a cell's table rows (all its methods, with `tied` and `p_best`) are appended when its last
planned launch is in. --refine adds launches where decisions are uncertain (refine.py); at the
end the table is rewritten atomically from the journal, so refined cells carry all their
launches. A killed sweep loses at most the launch in flight; --resume continues.
"""
import os
import re
import signal
import time
from collections import Counter

from collsel.core import csvfile
from collsel.core.files import write_file
from collsel.core.table import render_table
from collsel.errors import CollselError, InputError
from collsel.sources.measure import benchmark_program as bench, launchers, placement
from collsel.sources.measure.progress import Progress
from collsel.sources.sweep import (estimate, load, lock, racing, raw as raw_files, refine,
                                   resume, shapes, startup, ties)
from collsel.sources.sweep.journal import (TableFile, drop_partial_line, journal_path,
                                           load_existing, paired_columns)
from collsel.sources.sweep.paired_plan import (UNUSABLE_KEY, PairedPlan, algorithm_text,
                                               launch_seed, method_token, unusable_text)
from collsel.sources.sweep.run import (end_run, grid_metadata, header_metadata, next_index,
                                       resuming, sigterm_as_interrupt, start_run)

STATISTIC_DETAIL = ("time_us = mean over launches of each launch's median per-repetition "
                    "runtime of one call (µs), every method of a P measured in the same launch "
                    "in rounds shuffled by the launch's seed, each call after MPI_Barrier, the "
                    "slowest rank's time; ci_halfwidth_us is the 95 % Student-t half-width of "
                    "that mean across launches; tied and p_best: see tie_rule")


def paired_header(cfg):
    meta = header_metadata(cfg)
    meta.update({
        "mode": "paired",
        "statistic_detail": STATISTIC_DETAIL,
        "launches_per_point": f"{cfg.launches} planned per {'shape' if cfg.explicit else 'P'} "
                              "(more where --refine added them: see the launches column)",
        "journal": os.path.basename(journal_path(cfg.out)) + " (every launch: one row per size "
                   f"and method, then a '# launch.{'NODESxPPN' if cfg.explicit else 'P'}.K=' "
                   "line with the hosts its ranks ran on)",
        "seed": f"{cfg.seed} (launch K of P uses sha256(seed:collective:launch:P:K"
                f"{':NODESxPPN' if cfg.explicit else ''}), recorded in the journal)",
        "tie_rule": ties.RULE,
        "forcing": ("in the benchmark, through MPI_T: one communicator per method (Open MPI "
                    "coll_tuned_* cvars, then MPI_Comm_dup), --mca coll_tuned_use_dynamic_rules 1"
                    if cfg.family == "openmpi" else
                    f"in the benchmark, through MPI_T: MPIR_CVAR_{cfg.collective.upper()}_INTRA_"
                    "ALGORITHM before each call; MPIR_CVAR_COLLECTIVE_FALLBACK=error"),
        "baseline": ("algorithm 0 rows = the MPI's own decision (forcing off), measured in the "
                     "same launches"),
    })
    if cfg.family != "openmpi":
        meta["algorithm_family"] = cfg.family
        meta.pop("ompi_version", None)          # the benchmark's mpi_library names the MPI
    if cfg.probe:
        meta["probe"] = (f"benchmark --probe {cfg.probe} (collsel_probe, runtime/collsel_probe.c)"
                         ": before every round, 4096-byte ping-pongs between rank pairs, at "
                         "most REPS per pair and none after CAP_US us, the mean half round trip "
                         "per pair, the max over pairs; probe_us = the median over launches of "
                         "each launch's median round probe (the same for every method of a "
                         "cell); the journal keeps each launch's")
    if cfg.load_levels:
        meta["load"] = cfg.load.describe()
        if cfg.scheduler is not None:
            meta[load.SCHEDULER_COLUMN] = (
                "Slurm's view (squeue -t R): nodes allocated to running jobs other than the "
                "sweep's own, sampled under the level's load before each launch; the row's "
                "value is the median over its launches, rounded down")
        meta["load_levels"] = (",".join(cfg.load_levels) + ": every level of a shape in each "
                               "round of launches, in this order; load_level is experiment "
                               "control only, a decision may use probe_us (what the probe sees "
                               "at run time)")
    return meta


def _bench_argv(cfg, sizes, seed, raw_path, methods):
    argv = [cfg.bench_path, "--collective", cfg.collective,
            "--sizes", ",".join(str(m) for m in sizes),
            "--methods", ",".join(method_token(cfg.collective, x, cfg.family)
                                  for x in methods),
            "--seed", str(seed), *_scaled_time_cap(cfg, len(methods))]
    return argv + (["--raw", raw_path] if raw_path else [])


def _scaled_time_cap(cfg, count):
    """The benchmark options, --time-cap times the number of methods (`count`, the launch's):
    in a paired launch the cap covers a size's rounds of all methods, so each method gets what
    the per-method mode gives it."""
    args = list(cfg.bench_args)
    at = args.index("--time-cap") + 1
    # 15 significant digits: the product's binary noise (0.03 x 11 = 0.32999999999999996)
    # is no part of the value asked for
    args[at] = f"{float(args[at]) * count:.15g}"
    return args


def launch_command(cfg, shape, k, sizes, raw_path=None, methods=None):
    """(argv, environment, seed) of launch k of `shape` (sweep/shapes.py), measuring `methods`
    (default: all of the sweep's; --strategy adaptive's refinement: those still racing)."""
    mca = {"coll_tuned_use_dynamic_rules": 1} if cfg.family == "openmpi" else {}
    seed = launch_seed(cfg.seed, cfg.collective, shape, k)
    return cfg.launcher.command(shape.p, mca, _bench_argv(cfg, sizes, seed, raw_path,
                                                          methods or cfg.methods),
                                ppn=shape.ppn or None) + (seed,)


def _load(path, columns, cfg, launches=False):
    try:
        return load_existing(path, columns, cfg.collective, family=cfg.family,
                             launches=launches)
    except OSError as e:
        raise InputError(f"{path}: cannot read it to resume: {e.strerror or e}") from None


class _State:
    """The table and journal as found (reading only; `repair` cuts what a kill left)."""

    def __init__(self, cfg):
        self.journal_file = journal_path(cfg.out)
        self.meta, self.journal_meta, self.dropped, self.grew = {}, {}, [], False
        rows, journal_rows = [], []
        self.columns, self.journal_columns = paired_columns(cfg.explicit, bool(cfg.load_levels),
                                                            bool(cfg.probe),
                                                            cfg.scheduler is not None)
        self.resuming = resuming(cfg)
        if self.resuming:
            resume.check_mode(cfg.out, cfg.options)
            self.meta, rows, cut = _load(cfg.out, self.columns, cfg)
            self.grew = resume.check(cfg.out, self.meta, cfg.options)
            self.dropped.append((cfg.out, cut))
            if os.path.exists(self.journal_file):
                self.journal_meta, journal_rows, cut = _load(
                    self.journal_file, self.journal_columns, cfg, launches=True)
                self.dropped.append((self.journal_file, cut))
        self.plan = PairedPlan(cfg, journal_rows,
                               {(shapes.of_row(r), r["msg_size"]) for r in rows},
                               self.journal_meta)
        self.observed = _launch_times(self.journal_meta, journal_rows)

    def repair(self):
        for path, cut in self.dropped:
            drop_partial_line(path, cut)


def _launch_times(journal_meta, journal_rows):
    """(shape mark, points, wall_s) of every launch the journal records (for the estimate)."""
    points = Counter((shapes.of_row(r).mark, r["launch"]) for r in journal_rows)
    found = []
    for key, mark_text in journal_meta.items():
        wall = re.search(r"\bwall_s=([0-9.]+)", mark_text)
        mark, _, k = key[len("launch."):].rpartition(".")
        if key.startswith("launch.") and wall and k.isdigit():
            found.append((mark, points[(mark, int(k))], float(wall.group(1))))
    return found


def dry_run(cfg):
    note = lock.holder_note(cfg.out)
    state = _State(cfg)
    plan = state.plan
    lines = [f"# note: {note}"] if note else []
    launches = plan.planned()
    for shape, k, sizes in launches:
        raw_path = raw_files.part_path(cfg.raw, shape, k, 1, create=False) if cfg.raw else None
        argv, env, _ = launch_command(cfg, shape, k, sizes, raw_path)
        if shape.load:
            lines.append(f"# load {shape.load}: "
                         + ("; ".join(cfg.load.commands_text(shape.load)) or "nothing"))
        lines.append(launchers.render(argv, env))
    lines.append(f"# {len(launches)} paired launches, {plan.total() - plan.measured()} of "
                 f"{plan.total()} (size, method, launch) points to measure ({cfg.launches} "
                 f"launches per {'shape' if cfg.explicit else 'P'}"
                 f"{', then --refine' if cfg.refine else ''})")
    lines.append("# " + estimate.estimate(
        [(shape.mark, len(sizes) * len(cfg.methods)) for shape, _, sizes in launches],
        cfg.launcher.name, cfg.time_cap, state.observed, os.path.basename(state.journal_file))
        + (" (--refine adds launches to this)" if cfg.refine else ""))
    return lines


def run(cfg, progress_stream):
    with lock.acquire(cfg.out, cfg.command):
        sweep = _Sweep(cfg, progress_stream)
        try:
            return sweep.run()
        except startup.StartupFailure:
            if not sweep.state.resuming:     # nothing measured: leave nothing behind
                startup.discard([cfg.out, sweep.state.journal_file, *sweep.raw_made])
            raise


class _Sweep:
    def __init__(self, cfg, progress_stream):
        self.cfg = cfg
        self.state = _State(cfg)
        self.state.repair()
        self.plan = self.state.plan
        self.table = TableFile(cfg.out, self.state.columns)
        self.journal = TableFile(self.state.journal_file, self.state.journal_columns)
        self.watch = cfg.watch()
        self.failures = 0
        self.launched = 0           # benchmark runs started (the first one may stop the sweep)
        self.after_first = 0        # planned launches after the first
        self.raw_made = []          # --raw parts and their directory, made by this run
        # --probe: every line ends with the size's median round probe
        self._fields = bench.PAIRED_OUTPUT_FIELDS + ((bench.PROBE_FIELD,) if cfg.probe else ())
        self.progress = Progress(self.plan.total(), self.plan.measured(), progress_stream,
                                 cfg.progress_interval)

    def _create(self):
        cfg = self.cfg
        journal_meta = {"source": "collsel sweep", "mode": "paired", "collective": cfg.collective,
                        "table": os.path.basename(cfg.out)}
        if cfg.family != "openmpi":
            journal_meta["algorithm_family"] = cfg.family
        if not self.state.resuming:
            self.journal.create(journal_meta)
            self.table.create(paired_header(cfg))
            self.state.meta = {}
        elif not os.path.exists(self.state.journal_file):
            self.journal.create(journal_meta)

    def run(self):
        cfg, state = self.cfg, self.state
        for line in cfg.warnings:
            self.progress.message(line)
        self._create()
        grown = grid_metadata(cfg) if state.resuming and state.grew else {}
        self.run_no = next_index(state.meta, "run.")
        self.fail_no = next_index(state.meta, "failed.")
        self.have_library = "mpi_library" in state.meta
        self.table.open()
        self.journal.open()

        previous = sigterm_as_interrupt()
        started = time.monotonic()
        try:
            start_run(self.table, cfg, self.run_no, grown, state.dropped,
                      "dropped_unfinished_launch")
            self._append_complete_cells()
            planned = self.plan.planned()
            self.after_first = max(len(planned) - 1, 0)
            for shape, k, sizes in planned:
                self._launch(shape, k, sizes)
            if cfg.refine and not self.failures:
                self._refine()
        finally:
            end_run(self.table, self.run_no, started, self.failures)
            if self.watch.warned:
                self.table.append_meta(f"run.{self.run_no}.not_idle",
                                       "busy during the run: " + " ".join(sorted(
                                           self.watch.warned)))
            self.table.close()
            self.journal.close()
            self.progress.finish()
            signal.signal(signal.SIGTERM, previous)
        self._rewrite_table()
        if cfg.raw:
            raw_files.collect(cfg.raw, cfg.collective)
        if self.failures:
            raise CollselError(f"{self.failures} (size, method, launch) point(s) failed, so "
                               f"their cells have no rows; see the failed.* lines in {cfg.out} "
                               "(rerun with --resume to retry them)")
        return 0

    def _append_complete_cells(self, sizes_of=None):
        """Table rows of every complete cell not yet in the table (all of them, or those of
        {shape: sizes} just measured)."""
        for shape, m in self.plan.cells():
            if (shape, m) in self.plan.written or (sizes_of and m not in sizes_of.get(shape, ())):
                continue
            for row in self.plan.cell_rows(shape, m):
                self.table.append_row(row)
            self.plan.written.add((shape, m))

    def _rewrite_table(self):
        """The table from the journal, atomically: refined cells carry all their launches."""
        doc = csvfile.read(self.cfg.out, "a sweep table")
        rows = [row for shape, m in self.plan.cells() for row in self.plan.cell_rows(shape, m)]
        write_file(self.cfg.out, render_table(rows, doc.metadata, columns=self.state.columns))

    def _launch(self, shape, k, sizes, methods=None):
        """Launch k of `shape` under its load level, when it has one (sweep/load.py: started
        before, stopped after)."""
        if not shape.load:
            return self._measure(shape, k, sizes, methods)
        with self.cfg.load.running(shape.load):
            return self._measure(shape, k, sizes, methods)

    def _measure(self, shape, k, sizes, methods=None):
        """Launch k of `shape` over `sizes` (again for what a failed size left, like the
        per-method mode); its rows and mark, with the hosts its ranks ran on, go to the journal
        in one write. Ranks placed otherwise than the mapping says stop the sweep
        (placement.PlacementError) before anything of the launch is recorded."""
        cfg = self.cfg
        methods = methods or cfg.methods
        tokens = [method_token(cfg.collective, x, cfg.family).split(":") for x in methods]
        load_start, warning = self.watch.sample()
        if warning:
            self.progress.message(warning)
        # the scheduler's view, taken under the level's load as a program would before its call
        scheduled = ({} if cfg.scheduler is None
                     else {load.SCHEDULER_COLUMN: cfg.scheduler()})
        began = cfg.clock()
        done, todo, status, seed, part, hosts = {}, list(sizes), "ok", None, 0, []
        unusable = {}       # m -> indices into methods the benchmark did not measure at m
        while todo:
            part += 1
            raw_path = raw_files.part_path(cfg.raw, shape, k, part) if cfg.raw else None
            if raw_path and not self.launched:
                self.raw_made = [raw_path, os.path.dirname(raw_path)]
            argv, env, seed = launch_command(cfg, shape, k, todo, raw_path, methods)
            self.progress.label = (f"{shape.label} launch {k}/{cfg.launches}"
                                   if k <= cfg.launches else f"{shape.label} refine launch {k}")
            self.progress.show()
            lines = [(str(m), *tok) for m in todo for tok in tokens]
            current = {}

            def measured(m):
                return [x for j, x in enumerate(methods) if j not in unusable.get(m, ())]

            def on_line(fields):
                if not float(fields["median_us"]) > 0:
                    raise CollselError(f"benchmark reported a non-positive time: {fields}")
                m = int(fields["msg_size"])
                current[measured(m)[len(current)]] = fields
                if len(current) == len(measured(m)):
                    done[m] = dict(current)
                    current.clear()
                    if k <= cfg.launches:
                        self.progress.advance(len(methods))

            def on_meta(key, value):
                for m, method in bench.not_measured(key, value):
                    m = int(m)
                    unusable.setdefault(m, set()).update(
                        j for j, tok in enumerate(tokens) if not method or tuple(tok) == method)
                    if len(unusable[m]) == len(methods):    # nothing to wait for at m
                        done[m] = {}
                        if k <= cfg.launches:
                            self.progress.advance(len(methods))

            def on_header(meta):
                hosts.append(self._placement(shape, k, meta))

            result = cfg.measure(argv, env, todo, cfg.silence_timeout, on_line, lines=lines,
                                 names=self._fields, on_header=on_header, on_meta=on_meta)
            self.launched += 1
            startup.check(result, self.launched == 1, cfg.launcher, argv, env,
                          f"{shape.label} launch {k}", self.after_first, self.progress)
            self._library(result.meta)
            todo = [m for m in todo if m not in done]
            if result.failure is None:
                break
            status = "failed"
            # Without a header, or when a method could not be forced (the benchmark refuses
            # before measuring), every size would fail alike: give the launch up.
            whole = (not result.header_seen or f"exited with status {bench.EXIT_FORCING_FAILED}"
                     in result.failure)
            lost = todo if whole else todo[:1]
            todo = [] if whole else todo[1:]
            self._failed(shape, k, lost, result.failure, argv, env)
        load_end, warning = self.watch.sample()
        if warning:
            self.progress.message(warning)
        marks = [(m, methods[j]) for m in sorted(unusable) if m in done
                 for j in sorted(unusable[m])]
        self._journal(shape, k, seed, done, status, cfg.clock() - began, load_start,
                      load_end, hosts, scheduled, marks)

    def _placement(self, shape, k, meta):
        """The hosts of one run of launch k (rank order, comma-joined), checked against the
        launcher's mapping; '?' when the benchmark does not report them (only allowed
        without an explicit mapping)."""
        label = f"{shape.label} launch {k}"
        hosts = placement.check(meta, shape.p, self.cfg.launcher.expected(
            shape.p, shape.ppn or None), label, required=self.cfg.explicit)
        return ",".join(hosts) or "?"

    def _library(self, meta):
        if not self.have_library and meta.get("mpi_library"):
            for key in ("mpi_library", "runtime_type", "timer"):
                self.table.append_meta(key, meta.get(key, "?"))
            self.have_library = True

    def _failed(self, shape, k, lost, failure, argv, env):
        sizes_text = (str(lost[0]) if len(lost) == 1
                      else f"{lost[0]}..{lost[-1]} ({len(lost)} sizes)")
        reason = (f"{shape.label} launch={k} msg_size={sizes_text} (all methods): "
                  f"{failure}; command: {launchers.render(argv, env)}")
        self.table.append_meta(f"failed.{self.fail_no}", reason)
        self.fail_no += 1
        self.failures += len(lost) * len(self.cfg.methods)
        if k <= self.cfg.launches:
            self.progress.advance(len(lost) * len(self.cfg.methods))
        self.progress.message(f"collsel sweep: launch failed, going on: {reason[:300]}")

    def _journal(self, shape, k, seed, done, status, wall_s, load_start, load_end, hosts,
                 scheduled, marks):
        """The launch's rows, its unusable marks (`# unusable.SHAPE.K=`, also a table note: those
        methods have no rows in their cells) and its `# launch.` line, in one write."""
        cfg = self.cfg
        rows = []
        for m, method in marks:
            self.plan.mark_unusable(shape, m, method, k)
        for m in sorted(done):
            for method, fields in done[m].items():
                if self.plan.has(shape, m, method, k):
                    continue            # measured again only because a grown grid needed it
                row = {"collective": cfg.collective, "comm_size": shape.p, "msg_size": m,
                       "algorithm": algorithm_text(cfg.collective, method.algorithm, cfg.family),
                       "segsize": method.segsize, "faninout": method.faninout, "launch": k,
                       "seed": seed, **{f: fields[f] for f in
                                        ("mean_us", "median_us", "min_us", "max_us", "stdev_us",
                                         "ci_halfwidth_us", "n", "ci_met")},
                       **shape.columns(),
                       **({bench.PROBE_FIELD: fields[bench.PROBE_FIELD]} if cfg.probe else {}),
                       **scheduled}
                rows.append(row)
                self.plan.add(shape, m, method, k, row)
        text = render_table(rows, {}, columns=self.state.journal_columns).split("\n", 1)[1]
        if marks:
            key = f"{UNUSABLE_KEY}.{shape.mark}.{k}"
            text += f"# {key}={unusable_text(marks)}\n"
            self.state.journal_meta[key] = unusable_text(marks)
            self.table.append_meta(key, unusable_text(marks) + " (method unusable: its forced "
                                   "call returned an MPI error, or no call at that size; no rows)")
        # rank_hosts: every run of the launch (a failed size relaunches the rest), ';' apart
        # when they differ.
        mark = (f"seed={seed} status={status} sizes={len(done)} wall_s={wall_s:.1f} "
                f"start=[{load_start}] end=[{load_end}] "
                f"rank_hosts={';'.join(dict.fromkeys(hosts)) or '?'}")
        self.journal.append(text + f"# launch.{shape.mark}.{k}={' '.join(mark.split())}\n")
        self.state.journal_meta[f"launch.{shape.mark}.{k}"] = mark
        self._append_complete_cells({shape: set(done)})

    def _refine(self):
        cfg = self.cfg
        used, seconds = refine.spent(self.state.journal_meta, cfg.launches)
        cells = len(self.plan.cells())
        while True:
            undecided = refine.undecided(self.plan)
            count = sum(len(v) for v in undecided.values())
            self.progress.message(f"collsel sweep: refine: {cells - count}/{cells} cells "
                                  f"decided, {count} undecided; spent {used} launches, "
                                  f"{seconds:.0f} s")
            target = refine.next_target(undecided)
            if target is None or not refine.left(cfg.refine, used, seconds):
                break
            shape, sizes = target
            began = cfg.clock()
            methods = (racing.launch_methods(self.plan, shape, sizes)
                       if cfg.strategy == "adaptive" else None)
            self._launch(shape, self.plan.next_launch(shape), sizes, methods)
            used += 1
            seconds += cfg.clock() - began
            if self.failures:
                break
        self.table.append_meta(f"run.{self.run_no}.refine",
                               f"{cells - count}/{cells} cells decided, {count} undecided after "
                               f"{used} refinement launches ({seconds:.0f} s)")
