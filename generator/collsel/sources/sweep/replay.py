"""Replay: the sweep engine measuring a recorded table instead of an MPI (`collsel sweep
--replay TABLE`, `collsel tune --replay TABLE`).

The paired sweep runs exactly as it does live; only its measurement backend is swapped (Replay:
the paired protocol, paired.Paired, with its backend, clock and watch overridden): a launch's
request for (P, sizes, methods, seed) is answered from the recording, and the launch is charged
what measuring it took on the real machine, on a simulated clock that the journal's `wall_s`
records (so --refine's and collsel tune's budgets, read from the journal, spend simulated
seconds).

What a launch returns, per (size, method):
- the table has a journal (TABLE.launches, a paired sweep's): the row of one recorded launch of
  that P, the same recorded launch for every method and size of the replayed launch (the launch
  effect stays paired). Replayed launch k of P takes the k-th of a seeded permutation of P's
  recorded launches, beyond their number a seeded draw among them (with replacement);
- no journal, but `ci_halfwidth_us` and `launches` columns: time_us times a seeded log-normal
  factor whose spread is the recorded across-launch CI turned back into a standard deviation;
- neither: the recorded time_us itself (every launch alike: a replay without noise).
A method the recording lacks at (P, m) is reported unusable there, as the benchmark reports a
method whose call failed; a size or P it lacks altogether, as skipped.

What a launch costs: START_S, plus per (size, method) point (warm-up + repetitions) x the
replayed time. Repetitions: the recorded launch's `n` (journal), else the table's n / launches,
else the benchmark's own rule with its CI target unknown: as many as the per-method time cap
allows, between --min-reps and --max-reps.

What recording the full table cost (the measure of --budget N%): the same charge for every point
it holds, and START_S for every launch that recorded it. With a journal, that is the journal's
launches: a paired sweep measures every method in one launch. Without one, it is a launch per
method and recorded launch at each P: such tables come from benchmarks that force one algorithm
for a whole run (OSU with `--mca coll_tuned_<coll>_algorithm N`, as every table of the corpus
was recorded: ../shared/corpus/README.md), so a method at P was a launch of its own.
"""
import functools
import math
import os

import numpy as np

from collsel.core.io import csvfile
from collsel.core.maps import table as table_io
from collsel.core.mpi import algorithms
from collsel.core.mpi.algorithms import Method
from collsel.errors import InputError
from collsel.sources.measure import benchmark_program as bench
from collsel.sources.measure.supervise import LaunchResult
from collsel.sources.sweep import estimate, journal, launch_stats, ties
from collsel.sources.sweep.paired import Paired
from collsel.sources.sweep.paired_plan import method_token

# Seconds one replayed launch costs beyond its measuring (measured: sweep/estimate.py)
START_S = estimate.STARTUP_S["replay"]

STAT_FIELDS = bench.PAIRED_OUTPUT_FIELDS[4:]       # mean_us .. ci_met, as a launch prints them


@functools.lru_cache(maxsize=4)
def _read(path, stamp):
    """The Recording of `path` (cached by its size and modification time: collsel tune replays
    one table in several sweeps of one process)."""
    return Recording(path)


def load(path):
    """The Recording of the table at `path` (and its journal beside it, when there is one)."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise InputError(f"--replay {path}: cannot read it: {e.strerror or e}") from None
    return _read(os.path.abspath(path), (st.st_size, st.st_mtime_ns))


def _texts(doc, name):
    """One column's field texts of a CSV document read by csvfile (plain or row by row; the
    rows' field counts checked by _check_rows)."""
    j = doc.header.index(name)
    if doc.columns is not None:
        return list(doc.columns[j].texts())
    return [fields[j].strip() for _, fields in doc.rows]


def _check_rows(doc):
    """A document read row by row: each row has the header's number of fields."""
    for lineno, fields in doc.rows:
        if len(fields) != len(doc.header):
            raise InputError(f"{doc.path}:{lineno}: {len(fields)} fields, header has "
                             f"{len(doc.header)}")


def _numbers(doc, name, integer):
    """One number column (int64 where `integer`, else float64) of a CSV document read by
    csvfile: parsed by NumPy from a column-wise document's bytes when its fields are plain
    (csvfile.FieldTexts.digits / floats), else from the field texts."""
    if doc.columns is not None:
        column = doc.columns[doc.header.index(name)]
        got = column.digits() if integer else column.floats()
        if got is not None:
            return got
    texts = _texts(doc, name)
    try:
        return (np.array([int(x) for x in texts], dtype=np.int64) if integer
                else np.array(texts, dtype=float))
    except ValueError as e:
        kind = "an integer" if integer else "a number"
        raise InputError(f"--replay: {doc.path}: column {name}: not {kind} ({e})") from None


class Recording:
    """A recorded table as a replay answers from it: per (P, m, Method) the recorded launches'
    statistics ((launches, fields) float arrays in STAT_FIELDS order) and the launch numbers of
    each P; or, without a journal, one row per point and the spread to resample it with."""

    def __init__(self, path):
        self.path = path
        t = table_io.read_table(path, measured=True)
        collectives = sorted(set(t.collective.tolist()))
        if len(collectives) != 1:
            raise InputError(f"--replay {path}: a replay takes a table of one collective "
                             f"(this one has {', '.join(collectives)})")
        self.collective, self.family = collectives[0], t.family
        self.comm_sizes = sorted(set(t.comm_size.tolist()))
        self.msg_sizes = sorted(set(int(m) for m in t.msg_size.tolist()))
        keys = [(int(p), int(m), Method(int(a), int(s), int(f))) for p, m, a, s, f in zip(
            t.comm_size, t.msg_size, t.algorithm, t.segsize, t.faninout)]
        self.methods = sorted(set(k[2] for k in keys))
        self.points = {}            # (P, m, Method) -> (launches, fields) array
        self.launch_ids = {}        # P -> recorded launch numbers
        self.spread = {}            # (P, m, Method) -> sd of ln(time) across launches
        journal_file = journal.journal_path(path)
        self.has_journal = os.path.isfile(journal_file)
        if self.has_journal:
            self._read_journal(journal_file)
        else:
            self._read_rows(t, keys)
        self.full_launches = {p: len(ids) for p, ids in self.launch_ids.items()}

    def _read_journal(self, path):
        lines = csvfile.read_lines(path, "a sweep journal")
        doc = csvfile.parse_plain(path, lines) or csvfile.parse(path, lines)
        if doc.header is None or not {"launch", "median_us", "comm_size"} <= set(doc.header):
            raise InputError(f"--replay: {path} is not a paired sweep's journal (no launch, "
                             "comm_size, median_us columns)")
        if doc.columns is None:
            _check_rows(doc)
        p, m, s, k = (_numbers(doc, name, integer=True) for name in ("comm_size", "msg_size",
                                                                      "segsize", "launch"))
        f = (_numbers(doc, "faninout", integer=True) if "faninout" in doc.header
             else np.zeros_like(p))
        names_of_algorithms, alg_index = np.unique(_texts(doc, "algorithm"), return_inverse=True)
        alg_ids = np.array([algorithms.algorithm_id(self.collective, a, self.family)
                            for a in names_of_algorithms.tolist()], dtype=np.int64)
        a = alg_ids[alg_index]
        stats = np.array([_numbers(doc, name, integer=False) for name in STAT_FIELDS]).T
        # the rows of one (P, m, method) together, in launch order
        order = np.lexsort((k, f, s, a, m, p))
        keys = np.stack([p, m, a, s, f])[:, order]
        starts = np.flatnonzero(np.concatenate(
            ([order.size > 0], (keys[:, 1:] != keys[:, :-1]).any(axis=0))))
        ends = np.append(starts[1:], order.size)
        for (pi, mi, ai, si, fi), lo, hi in zip(keys[:, starts].T.tolist(), starts.tolist(),
                                                ends.tolist()):
            rows = order[lo:hi]
            self.points[(pi, mi, Method(ai, si, fi))] = (k[rows], stats[rows])
        self.launch_ids = {int(q): np.unique(k[p == q]).tolist() for q in np.unique(p)}

    def _read_rows(self, t, keys):
        def column(name, default):
            got = t.extra.get(name)
            if got is None:
                return np.full(len(t), default)
            return np.array([float(x) if x not in ("", None) else default for x in got])
        times = t.time_us
        ci = column("ci_halfwidth_us", np.nan)
        launches = column("launches", 1.0)
        n = column("n", np.nan)
        for i, key in enumerate(keys):
            reps = n[i] / launches[i] if np.isfinite(n[i]) else np.nan
            fields = np.array([[times[i], times[i], times[i], times[i], 0.0,
                                ci[i] if np.isfinite(ci[i]) else 0.0, reps, 1.0]])
            self.points[key] = (np.array([1]), fields)
            if np.isfinite(ci[i]) and launches[i] >= 2 and times[i] > 0:
                sd = ci[i] * math.sqrt(launches[i]) / launch_stats.t975(launches[i] - 1)
                self.spread[key] = sd / times[i]
        self.launch_ids = {p: [1] for p in self.comm_sizes}
        recorded = {}
        for (p, _, _), k in zip(keys, launches):
            recorded[p] = max(recorded.get(p, 1), int(k))
        self.table_launches = recorded

    def launches_of(self, p):
        """How many recorded launches of P a point of the table stands for (the journal's
        launches of P; without a journal, the table's `launches` column, each method's own)."""
        if self.has_journal:
            return len(self.launch_ids.get(p, ()))
        return self.table_launches.get(p, 1)

    @functools.cached_property
    def recorded_starts(self):
        """How many launches recorded the whole table (module docstring): the journal's, else
        one per method and recorded launch at each P."""
        if self.has_journal:
            return sum(len(ids) for ids in self.launch_ids.values())
        methods_at = {}
        for p, _, method in self.points:
            methods_at.setdefault(p, set()).add(method)
        return sum(self.launches_of(p) * len(methods_at.get(p, ())) for p in self.comm_sizes)

    def full_cost(self, time_cap, min_reps, max_reps, warmup):
        """Simulated seconds of measuring the whole recorded table, as replay charges them:
        every launch that recorded it (START_S each) and every point of it."""
        seconds = START_S * self.recorded_starts
        times, recorded, weight = self._flat
        reps = _repetitions(recorded, times, time_cap, min_reps, max_reps)
        return seconds + float((weight * (warmup + reps) * times * 1e-6).sum())

    @functools.cached_property
    def _flat(self):
        """(times, recorded repetitions, weight) of every recorded launch of every point, one
        array each; without a journal, a row's weight is the launches it stands for."""
        fields = [f for _, f in self.points.values()]
        if not fields:
            return np.zeros(0), np.zeros(0), np.zeros(0)
        stacked = np.concatenate(fields)
        weight = np.ones(len(stacked)) if self.has_journal else np.repeat(
            [float(self.launches_of(p)) for p, _, _ in self.points], [len(f) for f in fields])
        return stacked[:, 1], stacked[:, 6], weight

    def mean_point_seconds(self, time_cap, min_reps, max_reps, warmup):
        """The average simulated seconds of one (size, method) point of one launch: the time
        of a point in the sweep's estimate (sweep/estimate.py) for a replayed grid."""
        points = sum(self.launches_of(q) for (q, _, _) in self.points)
        spent = (self.full_cost(time_cap, min_reps, max_reps, warmup)
                 - START_S * self.recorded_starts)
        return spent / max(points, 1)


def _repetitions(recorded, times, cap_s, min_reps, max_reps):
    """Repetitions per point: the recorded count where there is one, else the benchmark's rule
    with the CI target unknown (the per-method cap spent, within [min_reps, max_reps])."""
    rule = np.clip(np.ceil(cap_s / np.maximum(times * 1e-6, 1e-12)), min_reps, max_reps)
    return np.where(np.isfinite(recorded) & (recorded > 0), recorded, rule)


class ReplayLauncher:
    """The launcher and measurement backend of a replayed sweep: `command` names a launch as
    the benchmark's own argv (P first; what the dry run and failure lines show), `measure`
    answers the launch Replay asks for from the Recording, `clock` is the simulated wall time
    its launches have cost so far."""
    name = "replay"
    shares_this_machine = False
    cluster = None

    def __init__(self, recording, seed, collective, family, time_cap, min_reps, max_reps,
                 warmup):
        self.recording = recording
        self.program = "replay"
        self.seed, self.collective, self.family = seed, collective, family
        # the benchmark's options a replayed launch is charged by (--time-cap: per method)
        self.time_cap, self.min_reps, self.max_reps = time_cap, min_reps, max_reps
        self.warmup = warmup
        self.now = 0.0
        self._order = {}            # P -> seeded permutation of its recorded launches

    def describe(self):
        return f"replay of {self.recording.path} (no MPI: recorded times, simulated clock)"

    def check(self):
        return None

    def check_shape(self, nodes, ppn):
        raise InputError("--replay replays a table of plain P (--comm-sizes), not --nodes/--ppn")

    def mapping(self, nprocs, ppn=None):
        return "as recorded"

    def expected(self, nprocs, ppn=None):
        return None         # the replayed header names no hosts: placement is not checked

    def sharing(self, nprocs, ppn=None):
        return None

    def command(self, nprocs, mca, bench_argv, ppn=None):
        return ["replay", "-np", str(nprocs), *bench_argv[1:]], {}

    def clock(self):
        return self.now

    def _recorded_launch(self, p, k, seed):
        """The index (into P's recorded launches) that replayed launch k of P answers with."""
        ids = self.recording.launch_ids.get(p, [1])
        if p not in self._order:
            rng = np.random.default_rng(ties.cell_seed(self.seed, self.collective, "replay", p))
            self._order[p] = rng.permutation(len(ids))
        if k <= len(ids):
            return int(self._order[p][k - 1])
        return int(np.random.default_rng(seed).integers(len(ids)))

    def measure(self, p, k, seed, sizes, methods, on_point, names=bench.PAIRED_OUTPUT_FIELDS,
                on_header=None, on_meta=None):
        """Replayed launch k of P (its `seed`, paired_plan.launch_seed) over `sizes` and
        `methods`: supervise.run_launch's callbacks and result, answered from the recording;
        the simulated clock advances by what the launch cost."""
        tokens = [method_token(self.collective, x, self.family) for x in methods]
        which = self._recorded_launch(p, k, seed)
        result = LaunchResult()
        result.header_seen = True
        result.meta = {"mpi_library": f"replay of {self.recording.path}",
                       "runtime_type": "recorded", "timer": "simulated"}
        for key, value in result.meta.items():
            if on_meta is not None:
                on_meta(key, value)
        spent = START_S
        rng = np.random.default_rng(seed)
        for m in sizes:
            got = [(token, x, self.recording.points.get((p, m, x)))
                   for token, x in zip(tokens, methods)]
            gone = [token for token, _, point in got if point is None]
            if len(gone) == len(got):
                if on_meta is not None:
                    on_meta(bench.SKIPPED_KEY, str(m))
                continue
            if gone and on_meta is not None:
                on_meta(f"{bench.UNUSABLE_PREFIX}{m}", ",".join(gone))
            for token, x, point in got:
                if point is None:
                    continue
                fields = self._fields(p, m, x, point, which, rng)
                reps = _repetitions(np.array([fields[6]]), np.array([fields[1]]), self.time_cap,
                                    self.min_reps, self.max_reps)[0]
                fields[6] = reps
                spent += (self.warmup + reps) * fields[1] * 1e-6
                if on_header is not None and result.rows == 0:
                    on_header(result.meta)
                on_point(dict(zip(names, [str(m), *token.split(":"),
                                          *(_text(v) for v in fields)])))
                result.rows += 1
        self.now += spent
        return result

    def _fields(self, p, m, x, point, which, rng):
        """The statistics (STAT_FIELDS order) replayed launch `which` returns for a point."""
        launch_numbers, stats = point
        if self.recording.has_journal:
            ids = self.recording.launch_ids[p]
            row = np.flatnonzero(launch_numbers == ids[which])
            # a point the recorded launch lacks (it failed there): its nearest recorded launch
            return stats[row[0] if row.size else min(which, len(stats) - 1)].copy()
        fields = stats[0].copy()
        sd = self.recording.spread.get((p, m, x))
        if sd:
            factor = math.exp(rng.normal(0.0, sd))
            fields[:4] *= factor
        return fields


class Replay(Paired):
    """The paired protocol answered from a recording: cfg.launcher is a ReplayLauncher, which
    names each launch as the benchmark's argv (`command`, for the dry run and failure lines)
    and answers the launch it is asked for (`measure`) on its simulated clock."""

    def backend(self, launch, argv, env, todo):
        return self.cfg.launcher.measure(launch.shape.p, launch.k, launch.seed, todo,
                                         launch.methods, launch.on_line, names=self.fields,
                                         on_header=launch.on_header, on_meta=launch.on_meta)

    def clock(self):
        return self.cfg.launcher.clock()

    def new_watch(self):
        return Unwatched()


class Unwatched:
    """hygiene.Watch of a replay: there is no machine to watch, nothing is ever busy."""

    def __init__(self):
        self.warned = set()

    def sample(self):
        return "replayed", None


def _text(value):
    value = float(value)
    return str(int(value)) if value.is_integer() else f"{value:.9g}"

