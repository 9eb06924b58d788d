"""`collsel sweep`'s steps: measure every forced MPI algorithm of one collective into a
performance table (sources/sweep runs it), or plan it (--dry-run), or write the batch script
that runs it (--emit-sbatch). `collsel sweep` and `collsel tune` call sweep(); the command
prints its result. Every option is checked, each named by its flag, before anything is built,
launched, read or written."""
from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import dataclass, replace

from collsel.core.io import names, sizes, values
from collsel.core.mpi import algorithms
from collsel.core.io.files import write_file
from collsel.errors import InputError
from collsel.sources.measure import benchmark_program as bench, launchers, mpi_home
from collsel.sources.sweep import (by_size, engine, launch_stats, load, paired, plan, racing,
                                   refine, replay, run, shapes)
from collsel.sources.sweep.sbatch import sbatch_script


@dataclass
class SweepRequest:
    """One sweep: every `collsel sweep` flag (its dest name), with the command line's defaults
    (tests/unit/pipeline/test_pipeline.py holds them equal). A number may be given as the text
    of its flag, a LIST as its text (ranges 2-16, K/M suffixes): sweep() checks and converts a
    copy, each value named by its flag, so a bad one is the command's one line."""
    collective: str
    out: str
    # what to measure
    mpi: str = "openmpi"
    mpi_home: str | None = None
    mode: str | None = None             # None: paired, or per-method where it must be
    algorithms: str | None = None       # LIST of ids or names, ALG:SEG, hier:G:INNER:OUTER
    segsizes: str | None = None         # LIST
    no_baseline: bool = False
    comm_sizes: str | None = None       # LIST of P, ranges allowed
    msg_sizes: str | None = None        # LIST of bytes, K/M suffixes allowed
    nodes: str | None = None            # LIST
    ppn: str | None = None              # LIST
    probe: str | None = None            # REPS:CAP_US
    load_levels: str | None = None      # LIST of sources/sweep/load.LEVELS
    load: str | None = None             # a sources/sweep/load.GENERATORS
    # statistics
    launches: int | str | None = None   # None: 5 paired, 3 per-method
    time_cap: float | str = 0.03
    rel_ci: float | str = 0.025
    min_reps: int | str = 5
    max_reps: int | str = 300
    warmup: int | str = 2
    seed: int | str = 1
    refine: str | None = None           # BUDGET: '600s' or a launch count
    strategy: str = racing.DEFAULT
    confidence: float | str = 0.95
    equivalence: float | str = 5.0      # percent
    # where to run
    launcher: str | None = None
    srun_mpi: str | None = None
    cluster: str | None = None          # "": the default state directory
    hostfile: str | None = None
    map_by: str = "core"
    mpirun: str | None = None
    launcher_args: str = ""
    bench: str | None = None
    mpicc: str | None = None
    timeout: float | str = 120.0
    emit_sbatch: str | None = None
    sbatch_time: str = "04:00:00"
    sbatch_nodes: str | None = None
    sbatch_args: str = ""
    replay: str | None = None
    fault: str | None = None            # a test hook, passed to the benchmark
    # output
    raw: str | None = None
    resume: bool = False
    force: bool = False
    dry_run: bool = False
    progress_interval: float | str = 30.0


@dataclass(frozen=True)
class SweepResult:
    """What sweep() did. `options`: the sweep as explicit options (its table records them; a
    resume must match them). With --dry-run, `plan` holds its lines (the launches, their count
    and the estimate) and `warnings` what to say first on stderr (a run says them itself);
    with --emit-sbatch, `sbatch` names the script written."""
    status: int
    options: str
    warnings: tuple[str, ...] = ()
    plan: tuple[str, ...] | None = None
    sbatch: str | None = None


def collectives(family=None):
    """The collectives the sweep can measure: the benchmark's own (what it reports of itself),
    of those the MPI family (all families when None) has algorithms for."""
    families = [family] if family else algorithms.FAMILIES
    return [c for c in bench.capabilities().collectives
            if any(c in algorithms.registry(f) for f in families)]


# --probe's default: 8 exchanges per pair, none started after 200 us; the probe's own limits
# (include/collsel_probe.h: COLLSEL_PROBE_MAX_REPS, COLLSEL_PROBE_MAX_TIME_CAP_US).
PROBE_DEFAULT = "8:200"
PROBE_REPS_MAX = 100000
PROBE_CAP_US_MAX = 1e9
# Flag ranges that are not the benchmark's own (benchmark_program.py holds those).
TIMEOUT_S = (0.0, 7 * 86400.0)          # --timeout: open below, a week above
PROGRESS_S = (0.0, 86400.0)             # --progress-interval: open below, a day above
SBATCH_TIME = re.compile(r"\d+(:\d{1,2}){0,2}|\d+-\d{1,2}(:\d{1,2}){0,2}")


def _check_numbers(flags):
    """Every numeric flag, checked and converted in place (core.io.values ranges; the benchmark's
    own option ranges from benchmark_program.py); one line naming the flag. Returns (the note
    on a collective measured per method, or None; --refine's budget)."""
    apart = flags.collective in plan.PER_METHOD.get(flags.mpi, ())
    why = plan.PER_METHOD_WHY.format(c=flags.collective)
    mode_note = None
    if flags.mode is None:
        flags.mode = plan.mode_of(flags.collective, flags.mpi)
        if apart:
            mode_note = f"note: {flags.collective} is measured --mode per-method: {why}"
    if apart and flags.mode == "paired":
        raise InputError(f"--collective {flags.collective} --mode paired: {why}; measure it with "
                         "--mode per-method (its default: leave --mode out)")
    if flags.mpi == "intel" and flags.mode == "paired":
        raise InputError("--mpi intel --mode paired: Intel MPI reads I_MPI_ADJUST_* in MPI_Init "
                         "only (its MPI_T cvars take no effect at run time); use --mode by-size "
                         "(its default) or per-method")
    if flags.mpi != "intel" and flags.mode == "by-size":
        raise InputError(f"--mode by-size is Intel MPI's (its tuning file forces a preset per "
                         f"message size); --mpi {flags.mpi} pairs methods per call: use --mode "
                         "paired")
    if flags.launches is None:
        flags.launches = 5 if flags.mode == "paired" else 3
    flags.launches = values.integer(flags.launches, "--launches", *launch_stats.LAUNCHES)
    flags.seed = values.integer(flags.seed, "--seed", 0, 2**64 - 1)
    flags.confidence = values.number(flags.confidence, "--confidence", 0.0, 1.0)
    flags.equivalence = values.number(flags.equivalence, "--equivalence", 0.0, 100.0) / 100.0
    refine_budget = refine.parse_budget(flags.refine)
    if flags.mode in ("per-method", "by-size"):
        for flag, given in (("--mpi mpich", flags.mpi == "mpich"),
                            ("--refine", flags.refine is not None), ("--raw", flags.raw),
                            ("--strategy adaptive", flags.strategy != racing.DEFAULT),
                            ("--nodes/--ppn", flags.nodes or flags.ppn),
                            ("--cluster", flags.cluster is not None),
                            ("--probe", flags.probe), ("--load-levels", flags.load_levels)):
            if given and apart:
                raise InputError(f"{flag}: --collective {flags.collective} is measured --mode "
                                 f"per-method ({why}), which takes no {flag}")
            if given:
                raise InputError(f"{flag} needs --mode paired (--mode {flags.mode} measures "
                                 + ("Open MPI and Intel MPI only, one method per launch)"
                                    if flags.mode == "per-method" else
                                    "Intel MPI only, whole grids of plain P)"))
    flags.load_levels = (load.parse_levels(flags.load_levels) if flags.load_levels is not None
                        else None)
    if flags.load is not None and not flags.load_levels:
        raise InputError(f"--load {flags.load} needs --load-levels (the levels to make)")
    flags.load = flags.load or load.GENERATORS[0]
    if flags.load_levels and flags.probe is None:
        flags.probe = PROBE_DEFAULT
    if flags.probe is not None:
        flags.probe = _probe(flags.probe)
    if flags.load_levels and flags.raw:
        raise InputError("--raw with --load-levels: not supported yet (the raw parts are named "
                         "by P and launch, not by level)")
    flags.time_cap = values.number(flags.time_cap, "--time-cap", *bench.TIME_CAP_S)
    flags.rel_ci = values.number(flags.rel_ci, "--rel-ci", *bench.REL_CI)
    flags.min_reps = values.integer(flags.min_reps, "--min-reps", *bench.REPS)
    flags.max_reps = values.integer(flags.max_reps, "--max-reps", flags.min_reps, bench.REPS[1])
    flags.warmup = values.integer(flags.warmup, "--warmup", *bench.WARMUP)
    flags.timeout = values.number(flags.timeout, "--timeout", *TIMEOUT_S, low_open=True)
    flags.progress_interval = values.number(flags.progress_interval, "--progress-interval",
                                    *PROGRESS_S, low_open=True)
    if flags.sbatch_nodes is not None:
        low, _, high = str(flags.sbatch_nodes).partition("-")
        first = values.integer(low, "--sbatch-nodes", *values.COMM_SIZE)
        if high:
            values.integer(high, "--sbatch-nodes (the maximum of MIN-MAX)", first,
                           values.COMM_SIZE[1])
    if not SBATCH_TIME.fullmatch(flags.sbatch_time.strip()):
        raise InputError(f"--sbatch-time {flags.sbatch_time!r} is not a Slurm time (MINUTES, "
                         "H:MM:SS, D-HH, D-HH:MM:SS, ...)")
    for flag, text in (("--sbatch-args", flags.sbatch_args), ("--launcher-args",
                                                             flags.launcher_args)):
        try:
            shlex.split(text or "")
        except ValueError as e:
            raise InputError(f"{flag} {text!r}: {e} (one string of shell words)") from None
        values.one_line(text, flag)

    return mode_note, refine_budget

def _probe(text):
    """--probe REPS[:CAP_US], checked against the probe's limits, as 'REPS:CAP_US'."""
    reps, _, cap = str(text).strip().partition(":")
    reps = values.integer(reps, "--probe (REPS)", 1, PROBE_REPS_MAX)
    cap = values.number(cap or PROBE_DEFAULT.split(":")[1], "--probe (CAP_US)", 0.0,
                        PROBE_CAP_US_MAX)
    return f"{reps}:{cap:g}"


def _canonical(flags, cfg, launcher_name, program=("collsel",), cluster=None):
    """The sweep as explicit options, so a batch script or a log reproduces it exactly."""
    if cfg.explicit:
        grid = ["--nodes", ",".join(map(str, sorted({s.nodes for s in cfg.shapes}))),
                "--ppn", ",".join(map(str, sorted({s.ppn for s in cfg.shapes})))]
    else:
        grid = ["--comm-sizes", ",".join(map(str, cfg.comm_sizes))]
    parts = [*program, "sweep", "--mode", cfg.mode, "--mpi", cfg.family, "--collective",
             cfg.collective, "--out", os.path.abspath(cfg.out), *grid,
             "--msg-sizes", ",".join(map(str, cfg.msg_sizes)),
             "--algorithms", ",".join(f"{m.algorithm}:{m.segsize}" for m in cfg.methods
                                      if m.algorithm != algorithms.BASELINE_ALGORITHM),
             "--launches", str(flags.launches),
             "--time-cap", str(flags.time_cap), "--rel-ci", str(flags.rel_ci),
             "--min-reps", str(flags.min_reps), "--max-reps", str(flags.max_reps),
             "--warmup", str(flags.warmup), "--timeout", str(flags.timeout),
             "--launcher", launcher_name]
    if flags.mpi_home:
        parts += ["--mpi-home", os.path.abspath(flags.mpi_home)]
    if cluster is not None:
        parts += ["--cluster", cluster.state_dir]
    if cfg.mode == "paired":
        parts += ["--seed", str(cfg.seed), "--confidence", str(cfg.confidence),
                  "--equivalence", f"{100 * cfg.equivalence:g}"]
        if cfg.strategy != racing.DEFAULT:
            parts += ["--strategy", cfg.strategy]
        if flags.refine:
            parts += ["--refine", flags.refine.strip()]
        if flags.raw:
            parts += ["--raw", os.path.abspath(flags.raw)]
        if flags.probe:
            parts += ["--probe", flags.probe]
        if flags.load_levels:
            parts += ["--load-levels", ",".join(flags.load_levels), "--load", flags.load]
    if flags.no_baseline:
        parts.append("--no-baseline")
    if flags.mpi_home:
        parts += ["--mpi-home", flags.mpi_home]
    if launcher_name == "srun":
        parts += ["--srun-mpi", cfg.launcher.mpi_plugin]
    if flags.launcher_args:
        parts += ["--launcher-args", flags.launcher_args]
    if flags.bench:
        parts += ["--bench", os.path.abspath(flags.bench)]
    if flags.fault:
        parts += ["--fault", flags.fault]
    if flags.replay:
        parts += ["--replay", os.path.abspath(flags.replay)]
    return shlex.join(parts)


def sweep(request: SweepRequest) -> SweepResult:
    """Run, plan or script the sweep of `request` (module docstring): the table and its
    journal, progress on stderr. Returns the exit status with what the command prints;
    raises CollselError when points failed (--resume retries them), KeyboardInterrupt with the
    command that continues the sweep."""
    flags = replace(request)        # checked and converted here; the caller's is left as given
    for flag in ("out", "emit_sbatch", "bench", "hostfile", "mpirun", "mpicc", "mpi_home",
                 "map_by",
                 "collective", "algorithms", "segsizes", "comm_sizes", "msg_sizes", "fault",
                 "raw", "refine", "nodes", "ppn", "cluster", "probe", "load_levels", "replay"):
        values.one_line(getattr(flags, flag), "--" + flag.replace("_", "-"))
    recording = _replayed(flags)
    values.output_file(flags.out, "--out")
    if flags.raw is not None:
        values.output_file(flags.raw, "--raw")
    if flags.emit_sbatch is not None:
        values.output_file(flags.emit_sbatch, "--emit-sbatch")
    install = mpi_home.resolve(flags.mpi, flags.mpi_home)
    collective = check_collective(flags.collective, flags.mpi)
    flags.mpicc = flags.mpicc or install.mpicc
    mode_note, refine_budget = _check_numbers(flags)
    methods = plan.plan_methods(collective, flags.algorithms, flags.segsizes,
                                baseline=not flags.no_baseline, family=flags.mpi,
                                mpich_version=(mpi_home.mpich_version(install)
                                               if flags.mpi == "mpich" and not recording
                                               else None))
    groups = _shapes(flags)
    cluster = _cluster(flags)
    name = flags.launcher or ("hostfile" if cluster is not None else "local")
    comm_sizes = sorted({s.p for s in groups}) if groups else launchers.within_slots(
        sizes.parse_comm_sizes(flags.comm_sizes) if flags.comm_sizes
        else list(plan.DEFAULT_COMM_SIZES),
        *launchers.host_slots(cluster, flags.hostfile if name == "hostfile" else None),
        bool(flags.comm_sizes))
    msg_sizes = (sizes.parse_size_list(flags.msg_sizes, "--msg-sizes", *bench.MSG_SIZE,
                                       name="message size (an int count in the benchmark)")
                 if flags.msg_sizes else sizes.default_msg_sizes())
    if collective in bench.capabilities().sizeless:
        if flags.msg_sizes and msg_sizes != [0]:
            raise InputError(f"--msg-sizes: {collective} has no message size; leave "
                             "--msg-sizes out (or give 0)")
        msg_sizes = [0]
    if flags.resume and flags.force:
        raise InputError("--resume and --force contradict each other")
    left_out = []
    if flags.mode == "per-method" and not flags.algorithms:
        # a refused call ends a per-method launch: by default such a method is left out (as
        # tune does), said; --algorithms naming it measures it anyway
        left_out = plan.refused(collective, methods, comm_sizes, msg_sizes, flags.mpi)
        methods = [m for m in methods if m not in {x for x, _ in left_out}]
    plan.check_benchmark_can(flags.mode, methods, msg_sizes, flags.max_reps, flags.time_cap)
    if flags.mode == "by-size":
        by_size.check_grid(msg_sizes, by_size.forced_methods_of(methods))

    sbatch = flags.emit_sbatch is not None
    if flags.srun_mpi is not None and not (name == "srun" or sbatch):
        raise InputError(f"--srun-mpi {flags.srun_mpi} is for --launcher srun (or "
                         f"--emit-sbatch), not --launcher {name}")
    launcher = (replay.ReplayLauncher(recording, flags.seed, collective, flags.mpi, flags.time_cap,
                                      flags.min_reps, flags.max_reps, flags.warmup) if recording
                else launchers.make("srun" if sbatch else name, flags.mpirun or install.mpirun,
                                    flags.launcher_args, flags.hostfile, flags.map_by,
                                    for_script=sbatch, family=flags.mpi, cluster=cluster,
                                    mpi_plugin=flags.srun_mpi, env=install.env))
    if not sbatch:
        launcher.check()
    for shape in groups or ():
        launcher.check_shape(shape.nodes, shape.ppn)
    # --time-cap is Config.time_cap (Config.bench_options puts it first)
    bench_args = ["--rel-ci", str(flags.rel_ci),
                  "--min-reps", str(flags.min_reps), "--max-reps", str(flags.max_reps),
                  "--warmup", str(flags.warmup)]
    if flags.fault:
        bench_args += ["--fault", flags.fault]
    if flags.probe:
        bench_args += ["--probe", flags.probe]
    bench_args += _runtime(cluster, groups)
    # A batch script for a real cluster builds the benchmark where it runs; the emulated
    # cluster's nodes share this machine's files, so it is built now.
    bench_path = "collsel_bench" if recording else _locate_bench(
        flags, install.env, build=not (flags.dry_run or (sbatch and cluster is None)))
    if cluster is not None and launcher.name == "srun":
        _visible_on_the_nodes(flags, bench_path, whole_sweep=sbatch)
    argv0 = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "collsel"
    argv0 = "collsel" if argv0 in ("collsel", "__main__.py", "cli.py") else argv0
    cfg = plan.Config(
        collective=collective, out=flags.out, comm_sizes=comm_sizes, msg_sizes=msg_sizes,
        methods=methods, launcher=launcher, bench_path=bench_path, bench_args=bench_args,
        silence_timeout=flags.timeout, resume=flags.resume, force=flags.force,
        dry_run=flags.dry_run,
        command=shlex.join([argv0] + sys.argv[1:]),
        progress_interval=flags.progress_interval, launches=flags.launches, rel_ci=flags.rel_ci,
        time_cap=flags.time_cap,
        mode=flags.mode, family=flags.mpi, mpi_home=install.home, seed=flags.seed,
        refine=refine_budget,
        confidence=flags.confidence, equivalence=flags.equivalence, strategy=flags.strategy,
        raw=flags.raw,
        shapes=groups, links=cluster.describe() if cluster is not None else None,
        probe=flags.probe, load_levels=flags.load_levels,
        load=_load_generator(flags, cluster, bench_path, check=not (flags.dry_run or sbatch)),
        scheduler=(load.SchedulerView(cluster)
                   if cluster is not None and flags.load_levels else None),
        warnings=[line for line in (_oversubscribed(launcher, groups or shapes.plain(comm_sizes)),
                                    _emulated_without_cluster(flags, launcher),
                                    mode_note) if line]
        + [f"note: left out {why_out}: the per-method mode cannot mark it unusable per cell; "
           "name it in --algorithms to measure it anyway" for _, why_out in left_out])
    cfg.options = _canonical(flags, cfg, launcher.name, cluster=cluster)

    if sbatch:
        # On the emulated cluster the script runs inside node n1's namespace: this Python and
        # the package it imports (outside /tmp) rather than whatever `collsel` PATH finds.
        program = (sys.executable, "-m", "collsel.cli") if cluster is not None else ("collsel",)
        inner = _canonical(flags, cfg, "srun", program, cluster) + " --resume"
        text = sbatch_script(cfg, inner, flags.sbatch_time, flags.sbatch_nodes, flags.sbatch_args,
                             partition=cluster.partition if cluster is not None else None)
        write_file(flags.emit_sbatch, text)
        os.chmod(flags.emit_sbatch, 0o755)
        return SweepResult(0, cfg.options, sbatch=flags.emit_sbatch)
    protocol = (replay.Replay if recording else paired.Paired if flags.mode == "paired"
                else by_size.BySize if flags.mode == "by-size" else run.PerMethod)(cfg)
    if flags.dry_run:
        return SweepResult(0, cfg.options, tuple(cfg.warnings),
                           tuple(engine.dry_run(protocol)))
    try:
        return SweepResult(engine.run(protocol, sys.stderr), cfg.options)
    except KeyboardInterrupt:
        # the sweep's explicit options (the table records them): a resume must match them
        raise KeyboardInterrupt(f"continue with: {cfg.options} --resume") from None


def _replayed(flags):
    """The replay.Recording of --replay (None without it); the grid, the algorithms and the MPI
    not given default to the recording's. Refused with what a replay cannot answer."""
    if flags.replay is None:
        return None
    for flag, given in (("--mode per-method", flags.mode == "per-method"), ("--raw", flags.raw),
                        ("--nodes/--ppn", flags.nodes or flags.ppn), ("--probe", flags.probe),
                        ("--cluster", flags.cluster is not None),
                        ("--load-levels", flags.load_levels),
                        ("--emit-sbatch", flags.emit_sbatch)):
        if given:
            raise InputError(f"--replay with {flag}: a replay answers paired launches of plain "
                             "P from the recorded table only")
    recording = replay.load(flags.replay)
    if names.canonical(flags.collective, collectives()) != recording.collective:
        raise InputError(f"--collective {flags.collective}: --replay {flags.replay} records "
                         f"{recording.collective}")
    flags.mpi = recording.family
    flags.comm_sizes = flags.comm_sizes or ",".join(map(str, recording.comm_sizes))
    flags.msg_sizes = flags.msg_sizes or ",".join(map(str, recording.msg_sizes))
    forced = [x for x in recording.methods if x.algorithm != algorithms.BASELINE_ALGORITHM]
    flags.algorithms = flags.algorithms or ",".join(f"{x.algorithm}:{x.segsize}" for x in forced)
    if len(forced) == len(recording.methods):
        flags.no_baseline = True         # the recording has no default to replay
    return recording


def check_collective(collective, family):
    """The --collective, if the benchmark runs it under `family`; one line otherwise."""
    if family not in algorithms.FAMILIES:
        raise InputError(f"--mpi {family}: collsel knows no {mpi_home.TITLE[family]} "
                         "algorithms yet (core.mpi.algorithms has no catalogue of them)")
    known = collectives(family)
    collective = names.canonical(collective, collectives())     # 'MPI_Allreduce' (core.io.names)
    if collective in known:
        return collective
    measures = f"the sweep's benchmark, collsel_bench, measures {', '.join(known)}"
    if collective in collectives():
        raise InputError(f"--collective {collective}: with --mpi {family} {measures} only "
                         f"(collsel knows no {family} {collective} algorithms)")
    if collective in algorithms.registry(family):
        raise InputError(f"--collective {collective}: {measures} only ({collective} tables can "
                         "be read by collsel ingest)")
    raise InputError(f"--collective: unknown collective '{collective}'"
                     f"{names.did_you_mean(collective, collectives())} ({measures})")


def _oversubscribed(launcher, groups):
    """One warning line when some launch puts more ranks on a machine than it has cores (the
    emulated cluster's nodes all share this one), or None."""
    over, cores = [], None
    for shape in groups:
        sharing = launcher.sharing(shape.p, shape.ppn or None)
        if sharing and sharing[0] > sharing[1]:
            where = f"{shape.nodes}x{shape.ppn}" if shape.explicit else ""
            per_node = launcher.name == "srun" and not launcher.shares_this_machine
            over.append(f"P={shape.p}" + (f" ({where})" if where else ""))
            cores = f"{sharing[1]} cores" + (" per node" if per_node else "")
    if not over:
        return None
    why = (" (the emulated nodes share this machine's cores)" if launcher.shares_this_machine
           else "")
    return (f"warning: {', '.join(dict.fromkeys(over))} on {cores}: oversubscribed{why}; "
            "times include time-sharing of the cores between ranks, not what dedicated cores "
            "would give")


def _emulated_without_cluster(flags, launcher):
    """A note when srun runs on the emulated cluster (SLURM_CONF is its slurm.conf) without
    --cluster: the sweep works, but without the cluster's settings; None otherwise."""
    conf = os.environ.get("SLURM_CONF")
    if flags.cluster is not None or launcher.name != "srun" or not conf:
        return None
    from collsel import cluster
    try:
        emulated = cluster.load()
    except InputError:
        return None
    if os.path.realpath(emulated.slurm_conf) != os.path.realpath(conf):
        return None
    return (f"note: this allocation is on the emulated cluster ({emulated.state_dir}); "
            "--cluster would add its settings: ranks unbound and yielding the shared cores, "
            "one clock (--runtime global), the links in the table")


def _load_generator(flags, cluster, bench_path, check):
    """The --load generator of --load-levels (sweep/load.py), its program checked when the sweep
    runs here; None without levels."""
    if not flags.load_levels:
        return None
    generator = load.make(flags.load, cluster, bench_path)
    if check:
        generator.check()
    return generator


def _runtime(cluster, groups):
    """The benchmark's --runtime when one table mixes one-node and multi-node launches, so
    every row has one meaning. The emulated nodes share this machine's clock: the global
    runtime (latest end - earliest start; right when ranks share cores, see
    docs/formats/benchmark-output.md).
    Real nodes have their own clocks: the slowest rank's local time, on one node too.
    Otherwise the benchmark decides (global on one node)."""
    if cluster is not None:
        return ["--runtime", "global"]
    if groups and any(s.nodes > 1 for s in groups):
        return ["--runtime", "local"]
    return []


def _shapes(flags):
    """The explicit nodes x ppn shapes of --nodes/--ppn, or None (a --comm-sizes sweep)."""
    if flags.nodes is None and flags.ppn is None:
        return None
    if flags.comm_sizes:
        raise InputError("--comm-sizes cannot be given with --nodes/--ppn: P is nodes x ppn "
                         "for every pair (drop --comm-sizes)")
    if flags.sbatch_nodes is not None:
        raise InputError("--sbatch-nodes cannot be given with --nodes/--ppn: the batch script "
                         "asks for max(--nodes) nodes")
    return shapes.explicit(flags.nodes, flags.ppn)


def _cluster(flags):
    """The emulated cluster of --cluster (collsel.cluster.load), or None."""
    if flags.cluster is None:
        return None
    from collsel import cluster
    return cluster.load(flags.cluster or None)


# Each emulated node mounts its own directory over /tmp (cluster): a batch script
# running on a node cannot see this machine's /tmp.
PRIVATE_ON_NODES = "/tmp"


def _visible_on_the_nodes(flags, bench_path, whole_sweep):
    """One line when what srun starts on a node of the emulated cluster could not reach a file
    it needs: the benchmark and its --raw parts; for the batch script (`whole_sweep`, the
    sweep itself runs on a node) also the directory, --out, this Python and collsel."""
    import collsel
    paths = [("the benchmark", bench_path), ("--raw", flags.raw)]
    if whole_sweep:
        paths += [("the current directory", os.getcwd()), ("--out", flags.out),
                  ("this Python", sys.executable),
                  ("the collsel package", os.path.dirname(collsel.__file__))]
    for what, path in paths:
        if path is None:
            continue
        # The path as the node uses it, and where its links lead (a venv's python under /tmp
        # links to /usr/bin, yet the node cannot reach the link itself).
        for full in dict.fromkeys((os.path.abspath(path), os.path.realpath(path))):
            if full == PRIVATE_ON_NODES or full.startswith(PRIVATE_ON_NODES + "/"):
                how = "--emit-sbatch" if whole_sweep else "--launcher srun"
                raise InputError(f"{how} on the emulated cluster: {what} ({full}) is under "
                                 f"{PRIVATE_ON_NODES}, which every node of the emulated "
                                 "cluster replaces by its own: use a directory outside /tmp")


def _locate_bench(flags, env, build):
    """The benchmark binary, built with --mpicc (the --mpi installation's compiler wrapper
    unless given) in the installation's environment `env`."""
    return bench.locate(flags.bench, flags.mpicc, build=build, env=env)
