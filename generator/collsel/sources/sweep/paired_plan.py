"""What a paired sweep has measured and what is left: every (P, size, method, launch) the journal
holds, the launches still to run, and the table rows of a cell (all its methods) from its launches.

Launch k of P measures every method at every size of P in one benchmark run (protocol B), with
the seed `launch_seed(sweep seed, P, k)`. A cell (P, m) is complete when every method has launches
1..N; its rows then combine all its launches (N planned, more from --refine).
"""
import numpy as np

from collsel.core import algorithms
from collsel.core.algorithms import Method
from collsel.sources.sweep import launch_stats, ties


def launch_seed(seed, collective, p, k):
    return ties.cell_seed(seed, collective, "launch", p, k)


def method_token(collective, method, family):
    """A method as the benchmark's --methods names it (A:S:F; MPICH: the cvar value name)."""
    alg = (algorithms.algorithm_name(collective, method.algorithm, family) if family == "mpich"
           else str(method.algorithm))
    return f"{alg}:{method.segsize}:{method.faninout}"


def algorithm_text(collective, alg, family):
    """The table's and journal's `algorithm`: Open MPI ids, MPICH names (interfaces A)."""
    return algorithms.algorithm_name(collective, alg, family) if family == "mpich" else alg


class PairedPlan:
    def __init__(self, cfg, journal_rows, written_cells):
        self.cfg = cfg
        self.data = {}                  # (P, m, Method) -> {launch: fields}
        for row in journal_rows:
            key = (row["comm_size"], row["msg_size"],
                   Method(row["algorithm"], row["segsize"], row["faninout"]))
            self.data.setdefault(key, {})[row["launch"]] = row
        self.written = set(written_cells)      # cells with rows in the table

    def has(self, p, m, method, k):
        return k in self.data.get((p, m, method), {})

    def missing_sizes(self, p, k, sizes=None):
        return [m for m in (sizes or self.cfg.msg_sizes)
                if any(not self.has(p, m, x, k) for x in self.cfg.methods)]

    def planned(self):
        """(P, k, sizes) of the planned launches still to run, in rounds: launch 1 of every P,
        then launch 2, ..., so the launches of a P are spread over the sweep's time."""
        return [(p, k, sizes) for k in range(1, self.cfg.launches + 1)
                for p in self.cfg.comm_sizes for sizes in [self.missing_sizes(p, k)] if sizes]

    def total(self):
        n = self.cfg.launches
        return len(self.cfg.comm_sizes) * len(self.cfg.msg_sizes) * len(self.cfg.methods) * n

    def measured(self):
        n = self.cfg.launches
        return sum(1 for got in self.data.values() for k in got if k <= n)

    def next_launch(self, p):
        return 1 + max((k for (q, _, _), got in self.data.items() if q == p for k in got),
                       default=0)

    def add(self, p, m, method, k, fields):
        self.data.setdefault((p, m, method), {})[k] = fields

    def complete(self, p, m):
        want = set(range(1, self.cfg.launches + 1))
        return all(want <= self.data.get((p, m, x), {}).keys() for x in self.cfg.methods)

    def cells(self):
        return [(p, m) for p in self.cfg.comm_sizes for m in self.cfg.msg_sizes
                if self.complete(p, m)]

    def arrays(self, p, m):
        """(launches, medians, cis): (L,) launch numbers and (L, methods) arrays, NaN where a
        method lacks a launch."""
        got = [self.data.get((p, m, x), {}) for x in self.cfg.methods]
        launches = sorted(set().union(*got))
        shape = (len(launches), len(got))
        medians, cis = np.full(shape, np.nan), np.full(shape, np.nan)
        for j, per in enumerate(got):
            for i, k in enumerate(launches):
                if k in per:
                    medians[i, j] = float(per[k]["median_us"])
                    cis[i, j] = float(per[k]["ci_halfwidth_us"])
        return launches, medians, cis

    def cell_seed(self, p, m):
        return ties.cell_seed(self.cfg.seed, self.cfg.collective, "cell", p, m)

    def decided(self, p, m):
        """Whether the cell's decision among the candidates (the baseline aside: under Open MPI
        it runs one of them, so it would tie for ever) is settled (sweep/ties.py)."""
        _, medians, cis = self.arrays(p, m)
        keep = [j for j, x in enumerate(self.cfg.methods)
                if x.algorithm != algorithms.BASELINE_ALGORITHM]
        return ties.decided(medians[:, keep], cis[:, keep], self.cell_seed(p, m),
                            self.cfg.confidence, self.cfg.equivalence)

    def cell_rows(self, p, m):
        """The table rows of a complete cell: each method's launches combined
        (launch_stats.combine), with `tied` and `p_best` (ties.verdict)."""
        _, medians, cis = self.arrays(p, m)
        _, tied, p_best = ties.verdict(medians, cis, self.cell_seed(p, m))
        rows = []
        for j, method in enumerate(self.cfg.methods):
            got = self.data[(p, m, method)]
            stats = launch_stats.combine([got[k] for k in sorted(got)], self.cfg.rel_ci)
            rows.append({"collective": self.cfg.collective, "comm_size": p, "msg_size": m,
                         "algorithm": algorithm_text(self.cfg.collective, method.algorithm,
                                                     self.cfg.family),
                         "segsize": method.segsize, "faninout": method.faninout, **stats,
                         "tied": int(tied[j]),
                         "p_best": None if p_best is None else round(float(p_best[j]), 4)})
        return rows
