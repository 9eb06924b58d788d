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
import contextlib
import os
import time
from collections import Counter

from collsel.core.io import csvfile
from collsel.core.io.files import write_file
from collsel.core.maps.table import render_table
from collsel.errors import CollselError
from collsel.sources.measure import benchmark_program as bench, launchers, placement
from collsel.sources.measure.supervise import run_launch
from collsel.sources.sweep import (engine, estimate, hygiene, load, racing, raw as raw_files,
                                   refine, shapes, ties)
from collsel.sources.sweep.journal import (UNUSABLE_KEY, LaunchLine, journal_path,
                                          paired_columns)
from collsel.sources.sweep.paired_plan import (PairedPlan, algorithm_text, launch_seed,
                                               method_token, unusable_text)
from collsel.sources.sweep.run import header_metadata

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
    # In a paired launch the time cap covers a size's rounds of all the launch's methods, so
    # each method gets what the per-method mode gives it; 15 significant digits: the product's
    # binary noise (0.03 x 11 = 0.32999999999999996) is no part of the value asked for.
    time_cap = f"{cfg.time_cap * len(methods):.15g}"
    argv = [cfg.bench_path, "--collective", cfg.collective,
            "--sizes", ",".join(str(m) for m in sizes),
            "--methods", ",".join(method_token(cfg.collective, x, cfg.family)
                                  for x in methods),
            "--seed", str(seed), *cfg.bench_options(time_cap)]
    return argv + (["--raw", raw_path] if raw_path else [])


def launch_command(cfg, shape, k, sizes, raw_path=None, methods=None):
    """(argv, environment, seed) of launch k of `shape` (sweep/shapes.py), measuring `methods`
    (default: all of the sweep's; --strategy adaptive's refinement: those still racing)."""
    mca = {"coll_tuned_use_dynamic_rules": 1} if cfg.family == "openmpi" else {}
    seed = launch_seed(cfg.seed, cfg.collective, shape, k)
    return cfg.launcher.command(shape.p, mca, _bench_argv(cfg, sizes, seed, raw_path,
                                                          methods or cfg.methods),
                                ppn=shape.ppn or None) + (seed,)


def _launch_times(log):
    """(shape mark, points, wall_s) of every launch of a journal's LaunchLog (for the
    estimate)."""
    points = Counter(log.of_row.tolist())
    return [(x.mark, points[i], x.wall_s) for i, x in enumerate(log.lines)]


class Paired(engine.Protocol):
    """The paired protocol (module docstring). Its measurement backend is three methods:
    `backend` runs one launch (supervise.run_launch), `clock` is what its wall times are read
    on, `new_watch` what watches the machine around it; a replay (replay.Replay) overrides all
    three."""
    dropped_key = "dropped_unfinished_launch"
    journal_marks = True

    def __init__(self, cfg):
        super().__init__(cfg)
        self.row_family = cfg.family
        self.columns, self.journal_columns = paired_columns(
            cfg.explicit, bool(cfg.load_levels), bool(cfg.probe), cfg.scheduler is not None)
        # --probe: every line ends with the size's median round probe
        self.fields = bench.PAIRED_OUTPUT_FIELDS + ((bench.PROBE_FIELD,) if cfg.probe else ())
        self.watch = self.new_watch()

    def backend(self, launch, argv, env, todo):
        """One run of `launch` (a _PairedLaunch) over the sizes `todo`: its lines reported to
        the launch's callbacks; a LaunchResult."""
        lines = [(str(m), *tok) for m in todo for tok in launch.tokens]
        return run_launch(argv, env, todo, self.cfg.silence_timeout, launch.on_line,
                          lines=lines, names=self.fields, on_header=launch.on_header,
                          on_meta=launch.on_meta)

    def clock(self):
        return time.monotonic()

    def new_watch(self):
        return hygiene.Watch()

    def load(self, found):
        self.launch_lines = list(found.launches.lines)     # grows with this run's launches
        self.plan = PairedPlan(self.cfg, found.journal_rows,
                               {(shapes.of_row(r), r["msg_size"]) for r in found.rows},
                               self.launch_lines)
        self.observed = _launch_times(found.launches)

    def dry_run_lines(self, found):
        cfg, plan = self.cfg, self.plan
        lines = []
        launches = plan.planned()
        for shape, k, sizes in launches:
            raw_path = (raw_files.part_path(cfg.raw, shape, k, 1, create=False) if cfg.raw
                        else None)
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
            cfg.launcher.name, cfg.time_cap, self.observed,
            os.path.basename(found.journal_file))
            + (" (--refine adds launches to this)" if cfg.refine else ""))
        return lines

    def header(self):
        return paired_header(self.cfg)

    def journal_header(self):
        common = super().journal_header()
        meta = {"source": common.pop("source"), "mode": "paired", **common}
        if self.cfg.family != "openmpi":
            meta["algorithm_family"] = self.cfg.family
        return meta

    def total(self):
        return self.plan.total()

    def measured(self):
        return self.plan.measured()

    def append_ready(self, sweep):
        self.append_complete_cells(sweep.table)

    def append_complete_cells(self, table, sizes_of=None):
        """Table rows of every complete cell not yet in the table (all of them, or those of
        {shape: sizes} just measured)."""
        cells = [(shape, m) for shape, m in self.plan.cells()
                 if (shape, m) not in self.plan.written
                 and not (sizes_of and m not in sizes_of.get(shape, ()))]
        table.append_rows([row for shape, m in cells for row in self.plan.cell_rows(shape, m)])
        self.plan.written.update(cells)

    def launches(self, sweep):
        return [_PairedLaunch(self, sweep, shape, k, sizes)
                for shape, k, sizes in self.plan.planned()]

    def more(self, sweep):
        if self.cfg.refine and not sweep.failures:
            self._refine(sweep)

    def _refine(self, sweep):
        """--refine: launches where cells are undecided, until decided or the budget is spent
        (refine.py)."""
        cfg = self.cfg
        used, seconds = refine.spent(self.launch_lines, cfg.launches)
        cells = len(self.plan.cells())
        undecided = refine.undecided(self.plan)
        while True:
            count = sum(len(v) for v in undecided.values())
            sweep.progress.message(f"collsel sweep: refine: {cells - count}/{cells} cells "
                                   f"decided, {count} undecided; spent {used} launches, "
                                   f"{seconds:.0f} s")
            target = refine.next_target(undecided)
            if target is None or not refine.left(cfg.refine, used, seconds):
                break
            if cfg.refine[0] == "seconds":
                target = refine.fitting(undecided, cfg.refine[1] - seconds, self._prefix_costs)
                if target is None:
                    sweep.progress.message(
                        f"collsel sweep: refine: stopped: no launch at an undecided cell fits "
                        f"the {cfg.refine[1] - seconds:.0f} s left (estimated on this sweep's "
                        "launches)")
                    break
            shape, sizes = target
            began = self.clock()
            methods = (racing.launch_methods(self.plan, shape, sizes)
                       if cfg.strategy == "adaptive" else None)
            sweep.launch(_PairedLaunch(self, sweep, shape, self.plan.next_launch(shape), sizes,
                                       methods))
            used += 1
            seconds += self.clock() - began
            if sweep.failures:
                break
            # a launch of `shape` changes that shape's cells only: judge them again
            undecided.pop(shape, None)
            undecided.update(refine.undecided(self.plan, [shape]))
        sweep.table.append_meta(f"run.{sweep.run_no}.refine",
                                f"{cells - count}/{cells} cells decided, {count} undecided "
                                f"after {used} refinement launches ({seconds:.0f} s)")

    def _prefix_costs(self, shape, sizes):
        """The estimated seconds (estimate.py, on this sweep's launches so far) of a refinement
        launch of `shape` at sizes[:n], n = 1 .. len(sizes): the methods it would measure there
        (under adaptive, those still in the race at any of them) at each size."""
        cfg = self.cfg
        union, costs = set(), []
        for n, m in enumerate(sizes, 1):
            union |= set(racing.in_race(self.plan, shape, m) if cfg.strategy == "adaptive"
                         else cfg.methods)
            costs.append(estimate.wall_seconds([(shape.mark, n * len(union))],
                                               cfg.launcher.name, cfg.time_cap, self.observed))
        return costs

    def closing_meta(self, sweep):
        if not self.watch.warned:
            return []
        return [(f"run.{sweep.run_no}.not_idle",
                 "busy during the run: " + " ".join(sorted(self.watch.warned)))]

    def finish(self, sweep):
        """The table from the journal, atomically (refined cells carry all their launches);
        --raw's file from its parts."""
        cfg = self.cfg
        doc = csvfile.read(cfg.out, "a sweep table")
        rows = [row for shape, m in self.plan.cells() for row in self.plan.cell_rows(shape, m)]
        write_file(cfg.out, render_table(rows, doc.metadata, columns=self.columns))
        if cfg.raw:
            raw_files.collect(cfg.raw, cfg.collective)

    def failed_text(self, failures):
        return (f"{failures} (size, method, launch) point(s) failed, so their cells have no "
                f"rows; see the failed.* lines in {self.cfg.out} (rerun with --resume to retry "
                "them)")

    def journal_launch(self, sweep, launch, wall_s, load_end):
        """The launch's rows, its unusable marks (`# unusable.SHAPE.K=`, also a table note:
        those methods have no rows in their cells) and its `# launch.` line, in one write; then
        the table rows of the cells it completed."""
        shape, k = launch.shape, launch.k
        marks = launch.unusable_marks()
        for m, method in marks:
            self.plan.mark_unusable(shape, m, method, k)
        rows = []
        for m in sorted(launch.done):
            for method, fields in launch.done[m].items():
                if self.plan.has(shape, m, method, k):
                    continue            # measured again only because a grown grid needed it
                row = self._journal_row(shape, k, launch.seed, m, method, fields,
                                        launch.scheduled)
                rows.append(row)
                self.plan.add(shape, m, method, k, row)
        text = render_table(rows, {}, columns=self.journal_columns).split("\n", 1)[1]
        if marks:
            key = f"{UNUSABLE_KEY}.{shape.mark}.{k}"
            text += f"# {key}={unusable_text(marks)}\n"
            sweep.table.append_meta(key, unusable_text(marks) + " (method unusable: its forced "
                                    "call returned an MPI error, or no call at that size; no "
                                    "rows)")
        # rank_hosts: every run of the launch (a failed size relaunches the rest), ';' apart
        # when they differ.
        mark = (f"seed={launch.seed} status={launch.status} sizes={len(launch.done)} "
                f"wall_s={wall_s:.1f} start=[{launch.load_start}] end=[{load_end}] "
                f"rank_hosts={';'.join(dict.fromkeys(launch.hosts)) or '?'}")
        sweep.journal.append(text + f"# launch.{shape.mark}.{k}={' '.join(mark.split())}\n")
        # as a resumed sweep reads it back: the line's rounded wall time
        self.launch_lines.append(LaunchLine(shape.mark, k, float(f"{wall_s:.1f}"),
                                            unusable_text(marks)))
        self.observed.append((shape.mark, len(rows), self.launch_lines[-1].wall_s))
        self.append_complete_cells(sweep.table, {shape: set(launch.done)})

    def _journal_row(self, shape, k, seed, m, method, fields, scheduled):
        cfg = self.cfg
        return {"collective": cfg.collective, "comm_size": shape.p, "msg_size": m,
                "algorithm": algorithm_text(cfg.collective, method.algorithm, cfg.family),
                "segsize": method.segsize, "faninout": method.faninout, "launch": k,
                "seed": seed, **{f: fields[f] for f in
                                 ("mean_us", "median_us", "min_us", "max_us", "stdev_us",
                                  "ci_halfwidth_us", "n", "ci_met")},
                **shape.columns(),
                **({bench.PROBE_FIELD: fields[bench.PROBE_FIELD]} if cfg.probe else {}),
                **scheduled}


class _PairedLaunch(engine.Launch):
    """Launch k of `shape` over `sizes` (again for what a failed size left, like the
    per-method mode), measuring `methods` (default all); its rows and mark, with the hosts its
    ranks ran on, go to the journal in one write at its end. Ranks placed otherwise than the
    mapping says stop the sweep (placement.PlacementError) before anything of the launch is
    recorded."""

    def __init__(self, protocol, sweep, shape, k, sizes, methods=None):
        cfg = protocol.cfg
        self.protocol, self.sweep, self.cfg = protocol, sweep, cfg
        self.shape, self.k, self.sizes = shape, k, sizes
        self.methods = methods or cfg.methods
        self.tokens = [method_token(cfg.collective, x, cfg.family).split(":")
                       for x in self.methods]
        self.name = f"{shape.label} launch {k}"
        self.label = (f"{shape.label} launch {k}/{cfg.launches}" if k <= cfg.launches
                      else f"{shape.label} refine launch {k}")
        self.counted = k <= cfg.launches      # refinement launches are beyond the total
        self.done = {}          # m -> {Method: fields} of every measured size
        self.current = {}       # Method -> fields of the size being reported
        self.unusable = {}      # m -> indices into methods the benchmark did not measure at m
        self.hosts = []         # the hosts of each run of the launch
        self.status, self.seed, self.part = "ok", None, 0
        self.load_start, self.scheduled, self.began = None, {}, None

    def around(self):
        """The launch's load level, when it has one (sweep/load.py: started before, stopped
        after)."""
        if not self.shape.load:
            return contextlib.nullcontext()
        return self.cfg.load.running(self.shape.load)

    def _sample(self):
        text, warning = self.protocol.watch.sample()
        if warning:
            self.sweep.progress.message(warning)
        return text

    def begin(self):
        cfg = self.cfg
        self.load_start = self._sample()
        # the scheduler's view, taken under the level's load as a program would before its call
        self.scheduled = ({} if cfg.scheduler is None
                          else {load.SCHEDULER_COLUMN: cfg.scheduler()})
        self.began = self.protocol.clock()

    def command(self, todo):
        cfg = self.cfg
        self.part += 1
        raw_path = raw_files.part_path(cfg.raw, self.shape, self.k, self.part) if cfg.raw else None
        if raw_path and not self.sweep.launched:
            self.protocol.made = [raw_path, os.path.dirname(raw_path)]
        argv, env, self.seed = launch_command(cfg, self.shape, self.k, todo, raw_path,
                                              self.methods)
        return argv, env

    def measure(self, argv, env, todo):
        self.current = {}
        return self.protocol.backend(self, argv, env, todo)

    def _measured(self, m):
        """The methods the benchmark reports at m (those it found unusable there left out)."""
        return [x for j, x in enumerate(self.methods) if j not in self.unusable.get(m, ())]

    def _size_done(self, m, got):
        self.done[m] = got
        if self.counted:
            self.sweep.progress.advance(len(self.methods))

    def on_line(self, fields):
        """One (size, method) line; a size is done when all its measured methods are in."""
        if not float(fields["median_us"]) > 0:
            raise CollselError(f"benchmark reported a non-positive time: {fields}")
        m = int(fields["msg_size"])
        measured = self._measured(m)
        self.current[measured[len(self.current)]] = fields
        if len(self.current) == len(measured):
            self._size_done(m, dict(self.current))
            self.current.clear()

    def on_meta(self, key, value):
        """The benchmark's unusable and skipped marks: methods it will not report at a size."""
        for m, method in bench.not_measured(key, value):
            m = int(m)
            self.unusable.setdefault(m, set()).update(
                j for j, tok in enumerate(self.tokens) if not method or tuple(tok) == method)
            if len(self.unusable[m]) == len(self.methods):     # nothing to wait for at m
                self._size_done(m, {})

    def on_header(self, meta):
        """The hosts of one run of the launch (rank order, comma-joined), checked against the
        launcher's mapping; '?' when the benchmark does not report them (only allowed
        without an explicit mapping)."""
        hosts = placement.check(meta, self.shape.p, self.cfg.launcher.expected(
            self.shape.p, self.shape.ppn or None), self.name, required=self.cfg.explicit)
        self.hosts.append(",".join(hosts) or "?")

    def settle(self, todo, result):
        if result.failure is not None:
            self.status = "failed"
        return [m for m in todo if m not in self.done]

    def gives_up(self, result):
        # Without a header, or when a method could not be forced (the benchmark refuses
        # before measuring), every size would fail alike.
        return (not result.header_seen
                or f"exited with status {bench.EXIT_FORCING_FAILED}" in result.failure)

    def points(self, sizes):
        return sizes * len(self.cfg.methods)

    def failure_text(self, lost, failure, command):
        return (f"{self.shape.label} launch={self.k} msg_size={engine.sizes_text(lost)} "
                f"(all methods): {failure}; command: {command}")

    def unusable_marks(self):
        """[(m, Method)] the benchmark found unusable, at the sizes the launch measured."""
        return [(m, self.methods[j]) for m in sorted(self.unusable) if m in self.done
                for j in sorted(self.unusable[m])]

    def end(self):
        load_end = self._sample()
        wall_s = self.protocol.clock() - self.began
        self.protocol.journal_launch(self.sweep, self, wall_s, load_end)

