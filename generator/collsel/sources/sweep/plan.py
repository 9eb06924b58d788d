"""What a sweep measures and what is left of it: the methods of a collective, the MCA settings
forcing each, the sweep's configuration, and the launches still to run."""
from dataclasses import dataclass

from collsel.core.io import values
from collsel.core.mpi import algorithms, fallbacks, intel_algorithms
from collsel.core.mpi.algorithms import Method
from collsel.core.io.sizes import parse_size, parse_size_list
from collsel.errors import InputError
from collsel.sources.measure import benchmark_program as bench, launchers
from collsel.sources.sweep import launch_stats, racing, shapes
from collsel.sources.sweep.journal import point_key

DEFAULT_COMM_SIZES = (2, 3, 4, 6, 8, 12, 16)
DEFAULT_SEGSIZES = (0, 1024, 8192, 32768, 131072)


# MPICH algorithms left out unless asked for: `smp` needs several nodes (on one node MPICH
# refuses it, an error under MPIR_CVAR_COLLECTIVE_FALLBACK=error).
MPICH_NOT_BY_DEFAULT = ("smp",)
# ... and per collective: MPICH 4.0.2's reduce_scatter `noncommutative` asserts (pof2 ==
# comm_size, reduce_scatter_intra_noncommutative.c:55) at a P that is no power of two instead of
# refusing, which aborts the whole launch; it is meant for non-commutative operations, and the
# benchmark measures MPI_SUM.
# MPICH 5.0.2's allreduce `reduce_scatter_allgather`, forced before each call (the benchmark's
# way), segfaults at P = 2, m = 8 B even under MPIR_CVAR_COLLECTIVE_FALLBACK=error, killing the
# whole paired launch (docs/guide/more-mpis.md); forced for the whole process it fails MPI_Init's
# own small allreduce ("User set collective algorithm is not usable", P = 2, 3, 4, both sizes
# tried). Allreduce `ccl` hands the call to a GPU
# collective library (NCCL/RCCL); a build without one (build/mpis/mpich5) runs MPICH's plain
# fallback under that name, unreported even under FALLBACK=error: no measurement of `ccl`.
MPICH_NOT_BY_DEFAULT_IN = {
    "4.0": {"reduce_scatter": ("noncommutative",)},
    "5.0": {"reduce_scatter": ("noncommutative",),
            "allreduce": ("reduce_scatter_allgather", "ccl")},
}


# Collectives the paired mode cannot force per communicator, measured --mode per-method: Open
# MPI 4.1 and 5.0 expose coll_tuned_allgatherv_algorithm read-only through MPI_T, so the
# benchmark's forcing does not take (it exits 6, "forcing did not take"); the per-method mode
# forces it with --mca for the whole launch.
PER_METHOD = {"openmpi": ("allgatherv",)}
PER_METHOD_WHY = ("Open MPI exposes coll_tuned_{c}_algorithm read-only through MPI_T, so the "
                  "paired mode cannot force it per communicator")


def mode_of(collective, family):
    """The mode a sweep of `collective` under `family` takes when --mode is not given: Intel
    MPI's by size (sweep/by_size.py), else paired but where the MPI cannot force per call."""
    if family == "intel":
        return "by-size"
    return "per-method" if collective in PER_METHOD.get(family, ()) else "paired"


def refused(collective, methods, comm_sizes, msg_sizes, family):
    """[(method, why)] of the `methods` Open MPI refuses at some (P, m) of the grid (the call
    fails: core.mpi.fallbacks entries that run nothing instead)."""
    if family != "openmpi":
        return []
    found = []
    for x in methods:
        for p in comm_sizes:
            entry = next((f for m in msg_sizes for f in
                          [fallbacks.fallback(collective, x.algorithm, p, m, x.segsize)]
                          if f is not None and f.runs is None), None)
            if entry:
                name = algorithms.algorithm_name(collective, x.algorithm, family)
                found.append((x, f"{x.algorithm}:{name} refused where {entry.condition} "
                                 f"({entry.source})"))
                break
    return found


def mpich_defaults(collective, mpich_version=None):
    """The ids a sweep of the MPICH of `mpich_version` measures by default: the algorithms that
    release has, but `auto` and the ones left out above."""
    release = algorithms.mpich_release(mpich_version)
    left_out = MPICH_NOT_BY_DEFAULT + MPICH_NOT_BY_DEFAULT_IN[release].get(collective, ())
    names = algorithms.MPICH_ALGORITHMS[collective]
    return [a for a in algorithms.mpich_ids_of(collective, mpich_version)
            if a != algorithms.BASELINE_ALGORITHM and names[a] not in left_out]


def plan_methods(collective, algorithms_text=None, segsizes_text=None, baseline=True,
                 family="openmpi", mpich_version=None):
    """Methods to measure. Segmenting algorithms get every segment size; the others get 0.
    `ALG:SEG` pins one segment size. Asking for a segment size on an algorithm that ignores it
    is an error rather than a silently repeated measurement. `hier:G:INNER:OUTER` adds a
    hierarchical method (core.mpi.algorithms.hier_id; unsegmented). MPICH: its own algorithms (none
    segments), those of the release `mpich_version` names (None: MPICH 4.0), by default all but
    the ones left out above (mpich_defaults); a name that release lacks is refused."""
    segsizes = (parse_size_list(segsizes_text, "--segsizes", *values.SEGSIZE,
                                name="segment size") if segsizes_text
                else list(DEFAULT_SEGSIZES))
    methods = set()
    if algorithms_text:
        items = [x.strip() for x in algorithms_text.split(",") if x.strip()]
        if not items:
            raise InputError("--algorithms: empty list")
    else:
        ids = (mpich_defaults(collective, mpich_version) if family == "mpich"
               else sorted(algorithms.registry(family)[collective]))
        items = [str(a) for a in ids if a != algorithms.BASELINE_ALGORITHM]
    for item in items:
        if item.lower().startswith("hier:"):   # hier:G:INNER:OUTER (core.mpi.algorithms.HIER_BASE)
            try:
                methods.add(Method(algorithms.algorithm_id(collective, item, family), 0))
            except InputError as e:
                raise InputError(f"--algorithms: {e}") from None
            continue
        name, _, seg = item.partition(":")
        try:
            alg = algorithms.algorithm_id(collective, name, family)
            if family == "mpich":
                algorithms.check_mpich_has(collective, alg, mpich_version, f"'{name}'")
        except InputError as e:
            raise InputError(f"--algorithms: {e}") from None
        label = (f"{collective} algorithm {alg} "
                 f"({algorithms.algorithm_name(collective, alg, family)})")
        if seg:
            seg_v = parse_size(seg, f"--algorithms {item}", *values.SEGSIZE, "segment size")
            if seg_v and not algorithms.segments(collective, alg, family):
                raise InputError(f"--algorithms: {label} ignores the segment size; '{item}' "
                                 f"asks for {seg_v} bytes (use segment size 0)")
            methods.add(Method(alg, seg_v))
        elif alg == 0 or not algorithms.segments(collective, alg, family):
            if algorithms_text and segsizes_text and any(segsizes):
                raise InputError(f"--algorithms: {label} ignores the segment size, but --segsizes "
                                 f"{segsizes_text} was given for it; drop it from --algorithms "
                                 "or pin ALG:0")
            methods.add(Method(alg, 0))
        else:
            methods.update(Method(alg, s) for s in segsizes)
    if baseline:
        methods.add(Method(algorithms.BASELINE_ALGORITHM, 0))
    return sorted(methods)


def check_benchmark_can(mode, methods, msg_sizes, max_reps, time_cap):
    """One line, before anything is built or launched, for a sweep the benchmark would refuse
    in every launch: its limits (benchmark_program.capabilities, what it reports of itself) and
    hierarchical methods outside paired mode (per-method forces through MCA parameters, which
    name coll/tuned algorithms only)."""
    can = bench.capabilities()
    if len(msg_sizes) > can.max_sizes:
        raise InputError(f"--msg-sizes: {len(msg_sizes)} sizes; the benchmark takes at most "
                         f"{can.max_sizes} in one launch")
    if mode != "paired":
        hier = [h for h in map(algorithms.hier_parts, (m.algorithm for m in methods)) if h]
        if hier:
            raise InputError(f"--algorithms: hierarchical method hier:{hier[0].groups}:"
                             f"{hier[0].inner}:{hier[0].outer} needs "
                             "--mode paired (the per-method mode forces one coll/tuned "
                             "algorithm through MCA parameters)")
        return
    if len(methods) > can.max_methods:
        raise InputError(f"--algorithms/--segsizes: {len(methods)} methods (baseline "
                         f"included); the benchmark measures at most {can.max_methods} in one "
                         "paired launch: ask for fewer algorithms or segment sizes")
    if max_reps * len(methods) > can.max_reps:
        raise InputError(f"--max-reps {max_reps} x {len(methods)} methods exceeds the "
                         f"benchmark's {can.max_reps} repetitions per paired launch: lower "
                         "--max-reps")
    if time_cap * len(methods) > bench.TIME_CAP_S[1]:
        raise InputError(f"--time-cap {time_cap:g} x {len(methods)} methods (a paired "
                         f"launch's cap per size) exceeds the benchmark's "
                         f"{bench.TIME_CAP_S[1]:g} s: lower --time-cap")


def mca_settings(collective, method, family="openmpi"):
    """What forces `method` in a per-method launch: Open MPI's MCA parameters, or Intel MPI's
    I_MPI_ADJUST_<COLL> preset (none for 0: Intel's own selection, its tuning file included)."""
    if family == "intel":
        return ({} if method.algorithm == algorithms.BASELINE_ALGORITHM
                else {intel_algorithms.forcing_variable(collective): method.algorithm})
    prefix = f"coll_tuned_{collective}_algorithm"
    return {"coll_tuned_use_dynamic_rules": 1, prefix: method.algorithm,
            prefix + "_segmentsize": method.segsize}


@dataclass
class Config:
    collective: str
    out: str
    comm_sizes: list
    msg_sizes: list
    methods: list               # core.mpi.algorithms.Method, faninout 0
    launcher: launchers.Launcher
    bench_path: str
    bench_args: list            # options of every benchmark run but --time-cap (time_cap)
    silence_timeout: float
    resume: bool = False
    force: bool = False
    dry_run: bool = False
    command: str = ""
    options: str = ""
    progress_interval: float = 30.0
    launches: int = 3           # launches per point; the point's CI is taken across them
    rel_ci: float = 0.025       # precision target of the combined CI (ci_met)
    time_cap: float = 0.03      # seconds of repetitions per point and launch (the estimate)
    mode: str = "per-method"    # or "paired" (sweep/paired.py)
    family: str = "openmpi"     # --mpi: which MPI, and how algorithms are named
    mpi_home: str = None        # --mpi-home: the MPI's prefix (None: Debian's, on PATH)
    seed: int = 1               # paired: the launches' seeds derive from it
    refine: tuple = None        # paired: refine.parse_budget(--refine)
    confidence: float = 0.95    # paired: p_best a decided cell's best reaches
    equivalence: float = 0.05   # paired: relative difference counted as practically equal
    strategy: str = racing.DEFAULT      # paired: what --refine launches (sweep/racing.py)
    raw: str = None             # paired: --raw FILE
    shapes: list = None         # paired: --nodes x --ppn (sweep/shapes.py); None: comm_sizes
    links: str = None           # --cluster: the emulated cluster's links (Cluster.describe())
    probe: str = None           # paired: the benchmark's --probe REPS:CAP_US, None = no probe
    load_levels: list = None    # paired: --load-levels, in launch order within a round
    load: object = None         # paired: the load generator (sweep/load.py) of load_levels
    scheduler: object = None    # paired, --cluster with levels: load.SchedulerView (cluster_load)
    warnings: list = ()         # lines shown once the sweep is known to start (not refused)

    def bench_options(self, time_cap=None):
        """The benchmark's options: --time-cap (`time_cap`, a text; default the sweep's own
        time_cap: a paired launch scales it by its methods), then bench_args."""
        return ["--time-cap", str(self.time_cap) if time_cap is None else time_cap,
                *self.bench_args]

    def groups(self):
        """What each launch runs on: the explicit shapes, or one plain shape per P; each once
        per load level (shapes.with_levels)."""
        return shapes.with_levels(self.shapes or shapes.plain(self.comm_sizes),
                                  self.load_levels)

    @property
    def explicit(self):
        """Whether ranks are placed explicitly (--nodes/--ppn: rows carry nodes and ppn)."""
        return bool(self.shapes) and self.shapes[0].explicit


class Plan:
    """What is done and what is left: table rows, journal entries and the launches to run.

    Round r (1..launches) of P measures every method once; a point's row is written when its
    launches are all in the journal."""

    def __init__(self, cfg, done, journal_rows):
        self.cfg = cfg
        self.done = done                       # points with a table row
        self.partial = {}                      # point -> {launch: fields}, no row yet
        for row in journal_rows:
            key = point_key(row)
            if key not in done and 1 <= row["launch"] <= cfg.launches:
                self.partial.setdefault(key, {})[row["launch"]] = row
        # A sweep killed between a point's last journal line and its table row: write the row
        # from the journal when the sweep resumes.
        self.ready = sorted(k for k, got in self.partial.items() if len(got) == cfg.launches)
        self.launches = []                     # (P, round, method, sizes)
        for p in cfg.comm_sizes:
            for r in range(1, cfg.launches + 1):
                for method in cfg.methods:
                    sizes = [m for m in cfg.msg_sizes if self.needs(p, m, method, r)]
                    if sizes:
                        self.launches.append((p, r, method, sizes))
        self.total = len(cfg.comm_sizes) * len(cfg.methods) * len(cfg.msg_sizes) * cfg.launches
        self.left = sum(len(s) for *_, s in self.launches)

    def needs(self, p, m, method, r):
        key = (p, m, method.algorithm, method.segsize)
        return key not in self.done and r not in self.partial.get(key, {})

    def add(self, key, r, fields):
        """Record launch r of a point; returns the point's combined row once complete."""
        got = self.partial.setdefault(key, {})
        got[r] = fields
        return self.combine(key) if len(got) == self.cfg.launches else None

    def combine(self, key):
        got = self.partial.pop(key)
        self.done.add(key)
        return launch_stats.combine([got[i] for i in sorted(got)], self.cfg.rel_ci)
