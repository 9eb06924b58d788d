"""What a paired sweep has measured and what is left: every (shape, size, method, launch) the
journal holds, the launches still to run, and the table rows of a cell (all its methods) from its
launches.

A shape (sweep/shapes.py) is a P, or with --nodes/--ppn a P = nodes x ppn placed explicitly.
Launch k of a shape measures every method at every size in one benchmark run (protocol B), with
the seed `launch_seed(sweep seed, shape, k)`. A cell (shape, m) is complete when every method has
launches 1..N; its rows then combine all its launches (N planned, more from --refine).

A method the benchmark reports unusable at a size in a launch (`#@unusable.M=`: its forced call
returned an MPI error), or every method at a size the collective has no call for
(`#@skipped=`), counts as measured there (no relaunch) and is left out of the cell's rows; the
journal keeps these as `# unusable.SHAPE.K=M:A:S:F,...` lines (journal.UNUSABLE_KEY), read
back with their launch (journal.LaunchLine.unusable).
"""
import numpy as np

from collsel.core.mpi import algorithms
from collsel.core.mpi.algorithms import Method
from collsel.sources.measure.benchmark_program import PROBE_FIELD
from collsel.sources.sweep import launch_stats, shapes, ties
from collsel.sources.sweep.load import SCHEDULER_COLUMN


def launch_seed(seed, collective, shape, k):
    return ties.cell_seed(seed, collective, "launch", *shape.seed_key(k))


def method_token(collective, method, family):
    """A method as the benchmark's --methods names it (A:S:F; MPICH: the cvar value name)."""
    alg = (algorithms.algorithm_name(collective, method.algorithm, family) if family == "mpich"
           else str(method.algorithm))
    return f"{alg}:{method.segsize}:{method.faninout}"


def algorithm_text(collective, alg, family):
    """The table's and journal's `algorithm`: Open MPI ids, MPICH names (interfaces A)."""
    return algorithms.algorithm_name(collective, alg, family) if family == "mpich" else alg



def unusable_text(marks):
    """The journal's value of one launch's unusable marks: [(m, Method)] as M:A:S:F,..."""
    return ",".join(f"{m}:{x.algorithm}:{x.segsize}:{x.faninout}" for m, x in marks)


class PairedPlan:
    def __init__(self, cfg, journal_rows, written_cells, launches=()):
        self.cfg = cfg
        self.groups = cfg.groups()      # the shapes, in launch order
        self.data = {}                  # (shape, m, Method) -> {launch: fields}
        self.unusable = {}              # (shape, m, Method) -> {launches it was unusable in}
        for row in journal_rows:
            key = (shapes.of_row(row), row["msg_size"],
                   Method(row["algorithm"], row["segsize"], row["faninout"]))
            self.data.setdefault(key, {})[row["launch"]] = row
        self._read_unusable(launches)
        self.written = set(written_cells)      # cells with rows in the table

    def _read_unusable(self, launches):
        """The unusable marks of the journal's launches ([journal.LaunchLine])."""
        by_mark = {shape.mark: shape for shape in self.groups}
        by_token = {unusable_text([(0, x)]).split(":", 1)[1]: x for x in self.cfg.methods}
        for launch in launches:
            if not launch.unusable or launch.mark not in by_mark:
                continue
            for item in launch.unusable.split(","):
                m, _, token = item.partition(":")
                if m.isdigit() and token in by_token:
                    self.mark_unusable(by_mark[launch.mark], int(m), by_token[token], launch.k)

    def mark_unusable(self, shape, m, method, k):
        self.unusable.setdefault((shape, m, method), set()).add(k)

    def has(self, shape, m, method, k):
        return (k in self.data.get((shape, m, method), {})
                or k in self.unusable.get((shape, m, method), ()))

    def usable(self, shape, m):
        """The methods of a cell that no launch found unusable (its rows' methods)."""
        return [x for x in self.cfg.methods if (shape, m, x) not in self.unusable]

    def missing_sizes(self, shape, k, sizes=None):
        return [m for m in (sizes or self.cfg.msg_sizes)
                if any(not self.has(shape, m, x, k) for x in self.cfg.methods)]

    def planned(self):
        """(shape, k, sizes) of the planned launches still to run, in rounds: launch 1 of
        every shape, then launch 2, ..., so the launches of a shape are spread over the sweep's
        time."""
        return [(shape, k, sizes) for k in range(1, self.cfg.launches + 1)
                for shape in self.groups for sizes in [self.missing_sizes(shape, k)] if sizes]

    def total(self):
        n = self.cfg.launches
        return len(self.groups) * len(self.cfg.msg_sizes) * len(self.cfg.methods) * n

    def measured(self):
        n = self.cfg.launches
        return sum(1 for got in (*self.data.values(), *self.unusable.values()) for k in got
                   if k <= n)

    def next_launch(self, shape):
        return 1 + max((k for (q, _, _), got in self.data.items() if q == shape for k in got),
                       default=0)

    def add(self, shape, m, method, k, fields):
        self.data.setdefault((shape, m, method), {})[k] = fields

    def complete(self, shape, m):
        want = set(range(1, self.cfg.launches + 1))
        return all(want <= (self.data.get((shape, m, x), {}).keys()
                            | self.unusable.get((shape, m, x), set()))
                   for x in self.cfg.methods)

    def cells(self, shapes=None):
        """[(shape, m)] of the complete cells (of `shapes` only, when given)."""
        return [(shape, m) for shape in (self.groups if shapes is None else shapes)
                for m in self.cfg.msg_sizes if self.complete(shape, m)]

    def arrays(self, shape, m):
        """(launches, medians, cis): (L,) launch numbers and (L, methods) arrays, NaN where a
        method lacks a launch."""
        got = [self.data.get((shape, m, x), {}) for x in self.usable(shape, m)]
        launches = sorted(set().union(*got))
        size = (len(launches), len(got))
        medians, cis = np.full(size, np.nan), np.full(size, np.nan)
        for j, per in enumerate(got):
            for i, k in enumerate(launches):
                if k in per:
                    medians[i, j] = float(per[k]["median_us"])
                    cis[i, j] = float(per[k]["ci_halfwidth_us"])
        return launches, medians, cis

    def cell_seed(self, shape, m):
        return ties.cell_seed(self.cfg.seed, self.cfg.collective, "cell", *shape.seed_key(m))

    def decided(self, shape, m):
        """Whether the cell's decision among the candidates (the baseline aside: under Open MPI
        it runs one of them, so it would tie for ever) is settled (sweep/ties.py)."""
        _, medians, cis = self.arrays(shape, m)
        keep = [j for j, x in enumerate(self.usable(shape, m))
                if x.algorithm != algorithms.BASELINE_ALGORITHM]
        if len(keep) < 2:
            return True             # nothing left to choose between
        return ties.decided(medians[:, keep], cis[:, keep], self.cell_seed(shape, m),
                            self.cfg.confidence, self.cfg.equivalence)

    def cell_rows(self, shape, m):
        """The table rows of a complete cell: each method's launches combined
        (launch_stats.combine), with `tied` and `p_best` (ties.verdict)."""
        methods = self.usable(shape, m)
        if not methods:
            return []
        _, medians, cis = self.arrays(shape, m)
        _, tied, p_best = ties.verdict(medians, cis, self.cell_seed(shape, m))
        probe = {**self.probe_us(shape, m), **self.cluster_load(shape, m)}
        rows = []
        for j, method in enumerate(methods):
            got = self.data[(shape, m, method)]
            stats = launch_stats.combine([got[k] for k in sorted(got)], self.cfg.rel_ci)
            rows.append({"collective": self.cfg.collective, "comm_size": shape.p, "msg_size": m,
                         "algorithm": algorithm_text(self.cfg.collective, method.algorithm,
                                                     self.cfg.family),
                         "segsize": method.segsize, "faninout": method.faninout, **stats,
                         "tied": int(tied[j]),
                         "p_best": None if p_best is None else round(float(p_best[j]), 4),
                         **shape.columns(), **probe})
        return rows

    def probe_us(self, shape, m):
        """{probe_us: the median over the cell's launches of each launch's median round
        probe} of a probing sweep (every method of a launch shares its rounds, so one value per
        cell), {} otherwise."""
        if not self.cfg.probe:
            return {}
        per_launch = {}
        for x in self.usable(shape, m):
            for k, row in self.data[(shape, m, x)].items():
                per_launch.setdefault(k, float(row[PROBE_FIELD]))
        return {PROBE_FIELD: round(float(np.median(list(per_launch.values()))), 3)}

    def cluster_load(self, shape, m):
        """{cluster_load: the median over the cell's launches of Slurm's busy nodes, rounded
        down (an integer third axis)} of a sweep that samples the scheduler, {} otherwise."""
        if self.cfg.scheduler is None:
            return {}
        per_launch = {}
        for x in self.usable(shape, m):
            for k, row in self.data[(shape, m, x)].items():
                per_launch.setdefault(k, int(row[SCHEDULER_COLUMN]))
        return {SCHEDULER_COLUMN: int(np.floor(np.median(list(per_launch.values()))))}
