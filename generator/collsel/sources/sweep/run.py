"""The sweep: each (P, method) measured in `launches` separate benchmark launches, in rounds (all
methods of one P once, then again), so a point's launches are spread over minutes; a point's row
goes into the table when its last launch reports it.

Durability is the journal's (journal.py): every finished point of a launch is one appended,
fsynced line of the journal, every finished point one of the table, so `--resume` continues
where a killed sweep stopped. Failures (non-zero exit, crash, hang past the silence timeout,
wrong output; measure/supervise.py) become `# failed.K=` metadata lines and the sweep goes on with
the next point.
"""
import os
import signal
import time

from collsel import __version__
from collsel.core import intel_algorithms
from collsel.errors import CollselError, InputError
from collsel.sources.measure import benchmark_program as bench, launchers, placement
from collsel.sources.measure.machine import loadavg, machine_metadata, now_iso
from collsel.sources.measure.progress import Progress
from collsel.sources.measure.supervise import run_launch
from collsel.sources.sweep import estimate, launch_stats, lock, resume, startup
from collsel.sources.sweep.journal import (COLUMNS, JOURNAL_COLUMNS, TableFile,
                                           drop_partial_line, journal_path, load_existing,
                                           point_key)
from collsel.sources.sweep.plan import Plan, mca_settings


def _bench_argv(cfg, sizes):
    return [cfg.bench_path, "--collective", cfg.collective,
            "--sizes", ",".join(str(m) for m in sizes), *cfg.bench_args]


def grid_metadata(cfg):
    """The metadata items that describe the sweep's grid (they change when --resume grows it)."""
    return {"mapping": "; ".join(f"{s.label}: {cfg.launcher.mapping(s.p, s.ppn or None)}"
                                 for s in cfg.groups()),
            **placement_metadata(cfg),
            "options": cfg.options,
            "comm_sizes": ",".join(map(str, cfg.comm_sizes)),
            "msg_sizes": ",".join(map(str, cfg.msg_sizes)),
            "methods": " ".join(m.label(cfg.collective, cfg.family) for m in cfg.methods)}


def placement_metadata(cfg):
    """`# nodes=` and `# ranks_per_node=`: the lists of an explicit nodes x ppn sweep (its rows
    carry each launch's pair), else what the launcher does with P ranks."""
    if cfg.explicit:
        return {"nodes": ",".join(map(str, sorted({s.nodes for s in cfg.shapes}))),
                "ranks_per_node": ",".join(map(str, sorted({s.ppn for s in cfg.shapes})))}
    if cfg.launcher.name == "local":
        return {"nodes": "1", "ranks_per_node": "comm_size (every rank on this host)"}
    where = f"as {cfg.launcher.name} places comm_size ranks (see mapping)"
    return {"nodes": where, "ranks_per_node": where}


def header_metadata(cfg):
    grid = grid_metadata(cfg)
    meta = {
        "source": "collsel sweep",
        "collsel_version": __version__,
        "collective": cfg.collective,
        "statistic": launch_stats.statistic(cfg.launches),
        "statistic_detail": launch_stats.STATISTIC_DETAIL,
        "launches_per_point": cfg.launches,
        "journal": os.path.basename(journal_path(cfg.out)) + " (every launch of every point)",
        "precision_target": "each launch repeats until the 95 % CI half-width of its mean <= "
                            "rel_ci x mean (after min_reps), or max_reps, or time_cap spent on "
                            f"the point; ci_met: the CI across launches <= {cfg.rel_ci:g} x "
                            "time_us",
        "bench_options": " ".join(cfg.bench_args),
        **forcing_metadata(cfg),
        **machine_metadata(cfg.mpi_home),
        "launcher": cfg.launcher.describe(),
        "mapping": grid["mapping"],
        "nodes": grid["nodes"],
        "ranks_per_node": grid["ranks_per_node"],
        **({"links": cfg.links} if cfg.links else {}),
        "date": now_iso(),
        "command": cfg.command,
        "options": grid["options"],
        "comm_sizes": grid["comm_sizes"],
        "msg_sizes": grid["msg_sizes"],
        "methods": grid["methods"],
        "bench_source_sha256": bench.source_digest() or "unknown",
    }
    if cfg.family == "intel":
        meta.pop("ompi_version", None)          # the benchmark's mpi_library names the MPI
    return meta


def forcing_metadata(cfg):
    """How a per-method launch forces its method, and what the baseline rows are."""
    if cfg.family == "intel":
        var = intel_algorithms.forcing_variable(cfg.collective)
        return {"algorithm_family": "intel",
                "baseline": f"algorithm 0 rows = Intel MPI's own selection ({var} unset: its "
                            "tuning file), a baseline, not a candidate",
                "forcing": f"{var}=A in the launch's environment, one launch per method: Intel "
                           f"MPI reads it in MPI_Init only (its MPI_T cvar MPIR_CVAR_USE_"
                           f"{cfg.collective.upper()} accepts a write at run time, which changes "
                           "nothing), so it cannot be measured paired"}
    return {"baseline": "algorithm 0 rows = Open MPI's fixed decision (coll_tuned_use_dynamic_"
                        "rules=1, algorithm 0), a baseline, not a candidate",
            "forcing": f"--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_{cfg.collective}"
                       f"_algorithm A --mca coll_tuned_{cfg.collective}_algorithm_segmentsize S"}


def sigterm_as_interrupt():
    """A sweep stopped by `kill` (SIGTERM; background jobs also ignore SIGINT) still kills its
    running launch and closes the table: the handler turns the signal into an exception.
    Returns the previous handler, to restore."""
    def _terminate(signum, frame):
        raise KeyboardInterrupt
    return signal.signal(signal.SIGTERM, _terminate)


def start_run(table, cfg, run_no, grown, dropped, dropped_key):
    """The metadata that opens run N of a table: start, load, a grid --resume grew, and on a
    resume its command and what a killed sweep left (`dropped`: (path, bytes) pairs)."""
    table.append_meta(f"run.{run_no}.start", now_iso())
    table.append_meta(f"run.{run_no}.loadavg_start", loadavg())
    for key, value in grown.items():
        table.append_meta(key, value)
    if run_no > 1:
        table.append_meta(f"run.{run_no}.command", cfg.command)
        for _, cut in dropped:
            if cut:
                table.append_meta(f"run.{run_no}.{dropped_key}",
                                  cut.decode("utf-8", "replace")[:200])


def end_run(table, run_no, started, failures):
    table.append_meta(f"run.{run_no}.end", now_iso())
    table.append_meta(f"run.{run_no}.wall_s", f"{time.monotonic() - started:.1f}")
    table.append_meta(f"run.{run_no}.loadavg_end", loadavg())
    table.append_meta(f"run.{run_no}.failed_points", failures)


def next_index(meta, prefix):
    used = [int(k[len(prefix):].split(".")[0]) for k in meta
            if k.startswith(prefix) and k[len(prefix):].split(".")[0].isdigit()]
    return max(used, default=0) + 1


def _table_row(collective, key, stats):
    return {"collective": collective, "comm_size": key[0], "msg_size": key[1],
            "algorithm": key[2], "segsize": key[3], "faninout": 0, **stats}


def _load(path, columns, collective):
    try:
        return load_existing(path, columns, collective)
    except OSError as e:
        raise InputError(f"{path}: cannot read it to resume: {e.strerror or e}") from None


def resuming(cfg):
    """Whether this sweep continues the table at --out (refused when it exists and neither
    --resume nor --force was given)."""
    exists = os.path.exists(cfg.out)
    if exists and not (cfg.resume or cfg.force or cfg.dry_run):
        raise InputError(f"{cfg.out} exists: pass --resume to continue that sweep or "
                         "--force to start it again")
    return exists and cfg.resume


class _State:
    """The table and journal as found: what a resumed sweep keeps. Reading only: the truncated
    last lines a killed sweep left are cut off by `repair`, once the resume is known to be
    allowed (and the table locked)."""

    def __init__(self, cfg):
        self.journal_file = journal_path(cfg.out)
        done, journal_rows, self.meta, self.dropped = set(), [], {}, []
        self.grew = False
        self.resuming = resuming(cfg)
        if self.resuming:
            resume.check_mode(cfg.out, cfg.options)
            self.meta, rows, cut = _load(cfg.out, COLUMNS, cfg.collective)
            self.grew = resume.check(cfg.out, self.meta, cfg.options)
            done = {point_key(r) for r in rows}
            self.dropped.append((cfg.out, cut))
            if os.path.exists(self.journal_file):
                _, journal_rows, cut = _load(self.journal_file, JOURNAL_COLUMNS, cfg.collective)
                self.dropped.append((self.journal_file, cut))
        self.plan = Plan(cfg, done, journal_rows)

    def repair(self):
        for path, cut in self.dropped:
            drop_partial_line(path, cut)


def dry_run(cfg):
    """The launch commands a sweep would run (nothing is written), and a summary line; a
    `# note:` line first when another sweep is writing the table right now (the plan is then a
    snapshot of a growing table)."""
    note = lock.holder_note(cfg.out)
    plan = _State(cfg).plan
    lines = [f"# note: {note}"] if note else []
    for p, r, method, sizes in plan.launches:
        argv, env = cfg.launcher.command(p, mca_settings(cfg.collective, method, cfg.family),
                                         _bench_argv(cfg, sizes))
        lines.append(launchers.render(argv, env))
    lines.append(f"# {len(plan.launches)} launches, {plan.left} of {plan.total} point "
                 f"launches to measure ({cfg.launches} per point)")
    planned = [(str(p), len(sizes)) for p, _, _, sizes in plan.launches]
    lines.append("# " + estimate.estimate(planned, cfg.launcher.name, cfg.time_cap))
    return lines


def run(cfg, progress_stream):
    """Run the sweep, showing progress on `progress_stream`. Returns the exit status; raises
    CollselError when points failed (their rows are missing, --resume retries them). The
    table's lock (sweep/lock.py) is held from before anything is read until the end: a second
    sweep on the same table is refused with one line naming this one."""
    with lock.acquire(cfg.out, cfg.command):
        state = _State(cfg)
        try:
            return _run_locked(cfg, state, progress_stream)
        except startup.StartupFailure:
            if not state.resuming:          # nothing measured: leave nothing behind
                startup.discard([cfg.out, state.journal_file])
            raise


def _run_locked(cfg, state, progress_stream):
    for line in cfg.warnings:
        print(line, file=progress_stream, flush=True)
    state.repair()
    plan, meta, journal_file = state.plan, state.meta, state.journal_file
    table = TableFile(cfg.out, COLUMNS)
    journal = TableFile(journal_file, JOURNAL_COLUMNS)
    if not state.resuming:
        header = header_metadata(cfg)
        journal.create({"source": header["source"], "collective": cfg.collective,
                        "table": os.path.basename(cfg.out)})
        table.create(header)
        meta = {}
    elif not os.path.exists(journal_file):
        journal.create({"source": "collsel sweep", "collective": cfg.collective,
                        "table": os.path.basename(cfg.out)})
    # A resume that grew the grid (resume.py) records the new one: a later key overrides.
    grown = grid_metadata(cfg) if state.resuming and state.grew else {}
    run_no = next_index(meta, "run.")
    fail_no = next_index(meta, "failed.")
    table.open()
    journal.open()
    previous = sigterm_as_interrupt()
    started = time.monotonic()
    failures = 0
    progress = Progress(plan.total, plan.total - plan.left, progress_stream,
                        cfg.progress_interval)
    try:
        start_run(table, cfg, run_no, grown, state.dropped, "dropped_truncated_line")
        for key in plan.ready:
            table.append_row(_table_row(cfg.collective, key, plan.combine(key)))
        have_library = "mpi_library" in meta
        launched = 0
        for p, r, method, sizes in plan.launches:
            label = f"P={p} {method.label(cfg.collective, cfg.family)} launch {r}/{cfg.launches}"
            progress.label = label
            progress.show()
            todo = list(sizes)
            while todo:
                settings = mca_settings(cfg.collective, method, cfg.family)
                argv, env = cfg.launcher.command(p, settings, _bench_argv(cfg, todo))

                def on_point(fields, p=p, r=r, method=method):
                    key = (p, int(fields["msg_size"]), method.algorithm, method.segsize)
                    if not float(fields["median_us"]) > 0:
                        raise CollselError(f"benchmark reported a non-positive time: {fields}")
                    entry = dict(zip(("comm_size", "msg_size", "algorithm", "segsize"), key))
                    journal.append_row({"collective": cfg.collective, **entry, "launch": r,
                                        **{f: fields[f] for f in launch_stats.LAUNCH_FIELDS}})
                    combined = plan.add(key, r, fields)
                    if combined is not None:
                        table.append_row(_table_row(cfg.collective, key, combined))
                    progress.advance(1)

                def on_header(meta, label=label, p=p):
                    # Before the launch's first row is recorded: ranks where the mapping says.
                    placement.check(meta, p, cfg.launcher.expected(p), label, required=False)

                result = run_launch(argv, env, todo, cfg.silence_timeout, on_point,
                                    on_header=on_header)
                launched += 1
                startup.check(result, launched == 1, cfg.launcher, argv, env, label,
                              len(plan.launches) - 1, progress)
                if not have_library and result.meta.get("mpi_library"):
                    table.append_meta("mpi_library", result.meta["mpi_library"])
                    table.append_meta("runtime_type", result.meta.get("runtime_type", "?"))
                    table.append_meta("timer", result.meta.get("timer", "?"))
                    have_library = True
                todo = todo[result.rows:]
                if result.failure is None:
                    break
                # The point in flight failed; without even a header nothing of this launch
                # would work, so all its remaining points are given up together.
                lost = todo if not result.header_seen else todo[:1]
                todo = [] if not result.header_seen else todo[1:]
                sizes_text = (str(lost[0]) if len(lost) == 1
                              else f"{lost[0]}..{lost[-1]} ({len(lost)} sizes)")
                reason = (f"P={p} algorithm={method.algorithm} segsize={method.segsize} "
                          f"msg_size={sizes_text} launch={r}: {result.failure}; command: "
                          f"{launchers.render(argv, env)}")
                table.append_meta(f"failed.{fail_no}", reason)
                fail_no += 1
                failures += len(lost)
                progress.advance(len(lost))
                progress.message(f"collsel sweep: point failed, going on: {reason[:300]}")
    finally:
        end_run(table, run_no, started, failures)
        table.close()
        journal.close()
        progress.finish()
        signal.signal(signal.SIGTERM, previous)
    if failures:
        raise CollselError(f"{failures} point launch(es) failed, so their points have no row; "
                           f"see the failed.* lines in {cfg.out} (rerun with --resume to retry "
                           "them)")
    return 0
