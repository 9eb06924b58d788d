"""The per-method sweep (--mode per-method), a protocol of the sweep engine (engine.py): each
(P, method) measured in `launches` separate benchmark launches, in rounds (all methods of one P
once, then again), so a point's launches are spread over minutes; a point's row goes into the
table when its last launch reports it.

Durability is the journal's (journal.py): every finished point of a launch is one appended,
fsynced line of the journal, every finished point one of the table, so `--resume` continues
where a killed sweep stopped. Failures (non-zero exit, crash, hang past the silence timeout,
wrong output; measure/supervise.py) become `# failed.K=` metadata lines and the sweep goes on with
the next point.
"""
import os

from collsel import __version__
from collsel.core.mpi import intel_algorithms
from collsel.errors import CollselError
from collsel.sources.measure import benchmark_program as bench, launchers, placement
from collsel.sources.measure.machine import machine_metadata, now_iso
from collsel.sources.measure.supervise import run_launch
from collsel.sources.sweep import engine, estimate, launch_stats
from collsel.sources.sweep.engine import grid_metadata
from collsel.sources.sweep.journal import COLUMNS, JOURNAL_COLUMNS, journal_path, point_key
from collsel.sources.sweep.plan import Plan, mca_settings


def bench_argv(cfg, sizes):
    return [cfg.bench_path, "--collective", cfg.collective,
            "--sizes", ",".join(str(m) for m in sizes), *cfg.bench_options()]


def header_metadata(cfg):
    grid = grid_metadata(cfg)
    meta = {
        "source": "collsel sweep",
        "mode": cfg.mode,
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
        "bench_options": " ".join(cfg.bench_options()),
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
        baseline = (f"algorithm 0 rows = Intel MPI's own selection ({var} unset: its tuning "
                    "file), a baseline, not a candidate")
        if cfg.mode == "by-size":
            return {"algorithm_family": "intel", "baseline": baseline + ", in launches of its own",
                    "forcing": "I_MPI_TUNING=TABLE.forcing/P<P>-launch<r>-part<i>.json, every "
                               "forced method of a P in one launch, method k of K (in the "
                               "methods' order) at m + k bytes in odd launches and m + K-1-k in "
                               "even ones, each of those sizes its own msg_size entry; rows name "
                               "the grid's m"}
        return {"algorithm_family": "intel",
                "baseline": baseline,
                "forcing": f"{var}=A in the launch's environment, one launch per method: Intel "
                           f"MPI reads it in MPI_Init only (its MPI_T cvar MPIR_CVAR_USE_"
                           f"{cfg.collective.upper()} accepts a write at run time, which changes "
                           "nothing), so it cannot be measured paired"}
    return {"baseline": "algorithm 0 rows = Open MPI's fixed decision (coll_tuned_use_dynamic_"
                        "rules=1, algorithm 0), a baseline, not a candidate",
            "forcing": f"--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_{cfg.collective}"
                       f"_algorithm A --mca coll_tuned_{cfg.collective}_algorithm_segmentsize S"}


def _table_row(collective, key, stats):
    return {"collective": collective, "comm_size": key[0], "msg_size": key[1],
            "algorithm": key[2], "segsize": key[3], "faninout": 0, **stats}




def record(protocol, sweep, key, r, fields):
    """Point `key` (P, m, algorithm, segsize) measured by launch r: its journal line, and its
    table row once its launches are all in."""
    collective = protocol.cfg.collective
    if not float(fields["median_us"]) > 0:
        raise CollselError(f"benchmark reported a non-positive time: {fields}")
    entry = dict(zip(("comm_size", "msg_size", "algorithm", "segsize"), key))
    sweep.journal.append_row({"collective": collective, **entry, "launch": r,
                              **{f: fields[f] for f in launch_stats.LAUNCH_FIELDS}})
    combined = protocol.plan.add(key, r, fields)
    if combined is not None:
        sweep.table.append_row(_table_row(collective, key, combined))
    sweep.progress.advance(1)


class PerMethod(engine.Protocol):
    """The per-method protocol: launch r of (P, method) measures one forced method at the
    sizes left; a point's launches go to the journal as they come, its table row (the launches
    combined, launch_stats) once the last is in."""
    columns, journal_columns = COLUMNS, JOURNAL_COLUMNS
    dropped_key = "dropped_truncated_line"

    def load(self, found):
        self.plan = Plan(self.cfg, {point_key(r) for r in found.rows}, found.journal_rows)

    def dry_run_lines(self, found):
        """The launch commands a sweep would run and a summary line, the estimate last."""
        cfg, plan = self.cfg, self.plan
        lines = []
        for p, r, method, sizes in plan.launches:
            argv, env = cfg.launcher.command(p, mca_settings(cfg.collective, method, cfg.family),
                                             bench_argv(cfg, sizes))
            lines.append(launchers.render(argv, env))
        lines.append(f"# {len(plan.launches)} launches, {plan.left} of {plan.total} point "
                     f"launches to measure ({cfg.launches} per point)")
        planned = [(str(p), len(sizes)) for p, _, _, sizes in plan.launches]
        lines.append("# " + estimate.estimate(planned, cfg.launcher.name, cfg.time_cap))
        return lines

    def header(self):
        return header_metadata(self.cfg)

    def total(self):
        return self.plan.total

    def measured(self):
        return self.plan.total - self.plan.left

    def append_ready(self, sweep):
        for key in self.plan.ready:
            sweep.table.append_row(_table_row(self.cfg.collective, key, self.plan.combine(key)))

    def launches(self, sweep):
        return [MethodLaunch(self, sweep, p, r, method, sizes)
                for p, r, method, sizes in self.plan.launches]

    def failed_text(self, failures):
        return (f"{failures} point launch(es) failed, so their points have no row; see the "
                f"failed.* lines in {self.cfg.out} (rerun with --resume to retry them)")


class MethodLaunch(engine.Launch):
    """Launch r of one (P, method), through the launcher with the method's forcing settings."""
    unit = "point"

    def __init__(self, protocol, sweep, p, r, method, sizes):
        self.protocol, self.sweep, self.cfg = protocol, sweep, protocol.cfg
        self.p, self.r, self.method, self.sizes = p, r, method, sizes
        self.label = self.name = (f"P={p} {method.label(self.cfg.collective, self.cfg.family)} "
                                  f"launch {r}/{self.cfg.launches}")

    def command(self, todo):
        cfg = self.cfg
        return cfg.launcher.command(self.p, mca_settings(cfg.collective, self.method, cfg.family),
                                    bench_argv(cfg, todo))

    def measure(self, argv, env, todo):
        return run_launch(argv, env, todo, self.cfg.silence_timeout, self.on_point,
                          on_header=self.on_header)

    def on_point(self, fields):
        record(self.protocol, self.sweep, (self.p, int(fields["msg_size"]), self.method.algorithm,
                                           self.method.segsize), self.r, fields)

    def on_header(self, meta):
        # Before the launch's first row is recorded: ranks where the mapping says.
        placement.check(meta, self.p, self.cfg.launcher.expected(self.p), self.label,
                        required=False)

    def settle(self, todo, result):
        return todo[result.rows:]

    def failure_text(self, lost, failure, command):
        return (f"P={self.p} algorithm={self.method.algorithm} segsize={self.method.segsize} "
                f"msg_size={engine.sizes_text(lost)} launch={self.r}: {failure}; command: "
                f"{command}")

