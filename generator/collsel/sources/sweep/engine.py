"""The one sweep engine: what every sweep does the same way, whatever it measures.

The engine owns the table's lock (sweep/lock.py), reading the table and journal a --resume
continues (and cutting off what a killed sweep left), the dry run's framing, creating the table
and journal and their `# run.N.*` lines, the launch loop (a launch run again over the sizes a
failure left), failures as `# failed.K=` lines, the `mpi_library` lines, progress, and SIGTERM as
an interrupt.

What a mode measures is its protocol (a Protocol: run.PerMethod, by_size.BySize, paired.Paired,
replay.Replay): its columns and headers, its plan, its launches (Launch: the command, the
backend call and its callbacks, what a failure costs) and what follows the planned launches. A
replay is the paired protocol over another measurement backend (Replay overrides
Paired.backend, clock and new_watch).
"""
import contextlib
import os
import signal
import time

from collsel.errors import CollselError, InputError
from collsel.sources.measure import launchers
from collsel.sources.measure.machine import loadavg, now_iso
from collsel.sources.measure.progress import Progress
from collsel.sources.sweep import lock, resume, startup
from collsel.sources.sweep.journal import (LaunchLog, TableFile, drop_partial_line,
                                           journal_path, load_existing)


class PointsFailed(CollselError):
    """Points of the sweep failed: their rows are missing, the rest was measured and written
    (exit status 1; --resume retries them)."""


class Launch:
    """One planned launch as a protocol runs it. `sizes`: what it measures; `label`: its
    progress label; `name`: how a failed start names it; `unit`: what a failure line says failed
    ('point' or 'launch'); `counted`: whether its points are part of the progress total."""
    unit = "launch"
    counted = True

    def around(self):
        """What runs around the whole launch, all its attempts (a load level)."""
        return contextlib.nullcontext()

    def begin(self):
        """Before the first attempt."""

    def end(self):
        """After the last attempt (a failed one too)."""

    def command(self, todo):
        """(argv, env) of one attempt over the sizes `todo`."""
        raise NotImplementedError

    def measure(self, argv, env, todo):
        """Run one attempt; returns the backend's LaunchResult (supervise.run_launch's)."""
        raise NotImplementedError

    def settle(self, todo, result):
        """Take in an attempt's `result`; returns the sizes of `todo` it left unmeasured (the
        failed one first when it failed)."""
        raise NotImplementedError

    def gives_up(self, result):
        """Whether a failed attempt gives up all the sizes it left (every attempt would fail
        alike), not only the one in flight."""
        return not result.header_seen

    def points(self, sizes):
        """The points a failure of `sizes` (a count) costs."""
        return sizes

    def failure_text(self, lost, failure, command):
        """The `# failed.K=` value of the sizes `lost` (sizes_text) and the `command` run."""
        raise NotImplementedError


class Protocol:
    """What a mode tells the engine (the module docstring). `cfg`: the sweep's plan.Config;
    `columns`, `journal_columns`: the table's and journal's; `row_family`: how their rows name
    algorithms (journal.load_existing's family); `journal_marks`: the journal marks each
    complete launch with a `# launch.` line; `dropped_key`: the `# run.N.<key>=` line naming
    what a killed sweep left; `made`: files this run made besides table and journal (removed
    with them when its first launch fails to start)."""
    row_family = "openmpi"
    journal_marks = False
    dropped_key = ""

    def __init__(self, cfg):
        self.cfg = cfg
        self.made = []

    def load(self, found):
        """Plan from what the table and journal hold (a Found)."""
        raise NotImplementedError

    def dry_run_lines(self, found):
        raise NotImplementedError

    def header(self):
        """The table's metadata when the sweep starts it."""
        raise NotImplementedError

    def journal_header(self):
        """The journal's metadata when the sweep starts it: whose journal it is."""
        return {"source": "collsel sweep", "collective": self.cfg.collective,
                "table": os.path.basename(self.cfg.out)}

    def total(self):
        """Points of the whole sweep (progress)."""
        raise NotImplementedError

    def measured(self):
        """Points already measured when the run starts (progress)."""
        raise NotImplementedError

    def append_ready(self, sweep):
        """Table rows of what an earlier run measured completely but did not write."""

    def launches(self, sweep):
        """[Launch] of the planned launches still to run."""
        raise NotImplementedError

    def more(self, sweep):
        """After the planned launches (paired: --refine)."""

    def closing_meta(self, sweep):
        """[(key, value)] of the table's metadata after `# run.N.*`, also when interrupted."""
        return []

    def finish(self, sweep):
        """After the table and journal are closed, when the run was not interrupted."""

    def failed_text(self, failures):
        """The error line when `failures` points failed."""
        raise NotImplementedError


def resuming(cfg):
    """Whether this sweep continues the table at --out (refused when it exists and neither
    --resume nor --force was given)."""
    exists = os.path.exists(cfg.out)
    if exists and not (cfg.resume or cfg.force or cfg.dry_run):
        raise InputError(f"{cfg.out} exists: pass --resume to continue that sweep or "
                         "--force to start it again")
    return exists and cfg.resume


def _load(path, columns, collective, family, launches):
    try:
        return load_existing(path, columns, collective, family=family, launches=launches)
    except OSError as e:
        raise InputError(f"{path}: cannot read it to resume: {e.strerror or e}") from None


class Found:
    """The table and journal as found: what a resumed sweep keeps (metadata and rows of each).
    Reading only: the truncated last lines a killed sweep left are cut off by `repair`, once
    the resume is known to be allowed (and the table locked)."""

    def __init__(self, cfg, protocol):
        self.journal_file = journal_path(cfg.out)
        self.meta, self.dropped, self.grew = {}, [], False
        self.launches = LaunchLog()     # a paired journal's launches
        self.rows, self.journal_rows = [], []
        self.resuming = resuming(cfg)
        if not self.resuming:
            return
        resume.check_mode(cfg.out, cfg.options)
        self.meta, self.rows, cut, _ = _load(cfg.out, protocol.columns, cfg.collective,
                                          protocol.row_family, False)
        self.grew = resume.check(cfg.out, self.meta, cfg.options)
        self.dropped.append((cfg.out, cut))
        if os.path.exists(self.journal_file):
            _, self.journal_rows, cut, self.launches = _load(
                self.journal_file, protocol.journal_columns, cfg.collective,
                protocol.row_family, protocol.journal_marks)
            self.dropped.append((self.journal_file, cut))

    def repair(self):
        for path, cut in self.dropped:
            drop_partial_line(path, cut)


def sizes_text(sizes):
    """Sizes given up together, as a failure line names them."""
    return (str(sizes[0]) if len(sizes) == 1
            else f"{sizes[0]}..{sizes[-1]} ({len(sizes)} sizes)")


def next_index(meta, prefix):
    used = [int(k[len(prefix):].split(".")[0]) for k in meta
            if k.startswith(prefix) and k[len(prefix):].split(".")[0].isdigit()]
    return max(used, default=0) + 1


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


def dry_run(protocol):
    """The protocol's dry-run lines (nothing is written); a `# note:` line first when another
    sweep is writing the table right now (the plan is then a snapshot of a growing table)."""
    note = lock.holder_note(protocol.cfg.out)
    found = Found(protocol.cfg, protocol)
    protocol.load(found)
    return ([f"# note: {note}"] if note else []) + protocol.dry_run_lines(found)


def run(protocol, progress_stream):
    """Run the sweep, showing progress on `progress_stream`. Returns the exit status; raises
    CollselError when points failed (their rows are missing, --resume retries them). The
    table's lock is held from before anything is read until the end: a second sweep on the same
    table is refused with one line naming this one."""
    cfg = protocol.cfg
    with lock.acquire(cfg.out, cfg.command):
        found = Found(cfg, protocol)
        protocol.load(found)
        sweep = Sweep(protocol, found, progress_stream)
        try:
            return sweep.run()
        except startup.StartupFailure:
            if not found.resuming:          # nothing measured: leave nothing behind
                startup.discard([cfg.out, found.journal_file, *protocol.made])
            raise


class Sweep:
    """One run of a sweep under its lock: the open table and journal, progress and the
    counters the protocol's launches report to."""

    def __init__(self, protocol, found, progress_stream):
        self.cfg, self.protocol, self.found = protocol.cfg, protocol, found
        self.table = TableFile(self.cfg.out, protocol.columns)
        self.journal = TableFile(found.journal_file, protocol.journal_columns)
        self.progress = Progress(protocol.total(), protocol.measured(), progress_stream,
                                 self.cfg.progress_interval)
        # a run that starts the table has no metadata of earlier runs (found.meta is empty)
        self.run_no = next_index(found.meta, "run.")
        self.fail_no = next_index(found.meta, "failed.")
        self.have_library = "mpi_library" in found.meta
        self.failures = 0           # points given up
        self.launched = 0           # benchmark runs started (the first one may stop the sweep)
        self.after_first = 0        # planned launches after the first

    def run(self):
        cfg, found = self.cfg, self.found
        for line in cfg.warnings:
            self.progress.message(line)
        found.repair()
        self._create()
        # A resume that grew the grid (resume.py) records the new one: a later key overrides.
        grown = grid_metadata(cfg) if found.resuming and found.grew else {}
        self.table.open()
        self.journal.open()
        previous = sigterm_as_interrupt()
        started = time.monotonic()
        try:
            start_run(self.table, cfg, self.run_no, grown, found.dropped,
                      self.protocol.dropped_key)
            self.protocol.append_ready(self)
            planned = self.protocol.launches(self)
            self.after_first = max(len(planned) - 1, 0)
            for launch in planned:
                self.launch(launch)
            self.protocol.more(self)
        finally:
            end_run(self.table, self.run_no, started, self.failures)
            for key, value in self.protocol.closing_meta(self):
                self.table.append_meta(key, value)
            self.table.close()
            self.journal.close()
            self.progress.finish()
            signal.signal(signal.SIGTERM, previous)
        self.protocol.finish(self)
        if self.failures:
            raise PointsFailed(self.protocol.failed_text(self.failures))
        return 0

    def _create(self):
        """A new sweep's table and journal; a resumed one's journal when it has none."""
        if not self.found.resuming:
            header = self.protocol.header()
            self.journal.create(self.protocol.journal_header())
            self.table.create(header)
        elif not os.path.exists(self.found.journal_file):
            self.journal.create(self.protocol.journal_header())

    def launch(self, launch):
        """Run `launch`, again over the sizes a failed attempt left (the failed size is given
        up, or all of them when the launch says every attempt would fail alike)."""
        with launch.around():
            launch.begin()
            todo = list(launch.sizes)
            while todo:
                todo = self._attempt(launch, todo)
            launch.end()

    def _attempt(self, launch, todo):
        """One benchmark run of `launch` over `todo`; returns the sizes left to run."""
        argv, env = launch.command(todo)
        self.progress.label = launch.label
        self.progress.show()
        result = launch.measure(argv, env, todo)
        self.launched += 1
        gone = self._gone() if result.failure is not None else ""
        if not gone:        # a lost node is no start-up problem: the launches without it run
            startup.check(result, self.launched == 1, self.cfg.launcher, argv, env,
                          launch.name, self.after_first, self.progress)
        self._library(result.meta)
        todo = launch.settle(todo, result)
        if result.failure is None:
            return []
        lost = todo if launch.gives_up(result) else todo[:1]
        self._failed(launch, lost, f"{gone}: {result.failure}" if gone else result.failure,
                     launchers.render(argv, env))
        return todo[len(lost):]

    def _gone(self):
        """What a failed launch says first when nodes of the emulated cluster it ran on are
        gone (cluster.Cluster.lost_text), else ''."""
        cluster = self.cfg.launcher.cluster
        return cluster.lost_text() if cluster is not None else ""

    def _library(self, meta):
        """The MPI the benchmark reports, once per table."""
        if not self.have_library and meta.get("mpi_library"):
            for key in ("mpi_library", "runtime_type", "timer"):
                self.table.append_meta(key, meta.get(key, "?"))
            self.have_library = True

    def _failed(self, launch, lost, failure, command):
        reason = launch.failure_text(lost, failure, command)
        self.table.append_meta(f"failed.{self.fail_no}", reason)
        self.fail_no += 1
        points = launch.points(len(lost))
        self.failures += points
        if launch.counted:
            self.progress.advance(points)
        self.progress.message(f"collsel sweep: {launch.unit} failed, going on: {reason[:300]}")
