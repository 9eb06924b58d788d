"""Does the probe predict the collective's latency? (issue 19; the paper's figure 2.)

Pairs come from a sweep's journal: each launch of a (P, m, method) point under a load level gives
one pair (the launch's median round probe `probe_us`, the method's median time in that launch).
A launch is the unit here because the probe runs before every round and the rows keep each
launch's medians (the paper pairs one HP2P run with one bcast run the same way).

`correlations(pairs)`: per (P, m, method) group with 3+ pairs, Pearson's r and Spearman's rho
(scipy.stats) of probe vs time, with their two-sided p-values.
"""
from dataclasses import dataclass

import numpy as np

from collsel.core.mpi.algorithms import BASELINE_ALGORITHM

MIN_PAIRS = 3


@dataclass
class Pairs:
    comm_size: np.ndarray
    msg_size: np.ndarray
    algorithm: np.ndarray
    segsize: np.ndarray
    probe_us: np.ndarray
    time_us: np.ndarray
    level: np.ndarray       # the nominal load level of each pair ("" when unknown), for plots


def from_launch_tables(launch_tables, z="probe_us", levels=None):
    """Pairs of every row of every launch table (sources.launch_tables, read with z =
    probe_us); `levels`: the same tables read with z = load_level, for labels."""
    parts, names = [], []
    for k, t in sorted(launch_tables.items()):
        parts.append(t)
        lab = (levels or {}).get(k)
        names.append(np.asarray(lab.extra["load_level"], dtype=object) if lab is not None
                     else np.full(len(t), "", dtype=object))
    if not parts:
        raise ValueError("no launch rows with a probe")
    cat = lambda f: np.concatenate([f(t) for t in parts])  # noqa: E731
    return Pairs(cat(lambda t: t.comm_size.astype(np.int64)),
                 cat(lambda t: t.msg_size.astype(np.int64)),
                 cat(lambda t: t.algorithm.astype(np.int64)),
                 cat(lambda t: t.segsize.astype(np.int64)),
                 cat(lambda t: np.asarray(t.extra[z], dtype=np.float64)),
                 cat(lambda t: t.time_us.astype(np.float64)), np.concatenate(names))


def groups(pairs):
    """(keys (n, 4): P, m, algorithm, segsize; inverse index of each pair)."""
    keys = np.stack([pairs.comm_size, pairs.msg_size, pairs.algorithm, pairs.segsize], axis=1)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    return unique, inverse.reshape(-1)


def correlations(pairs):
    """One dict per (P, m, method) group with MIN_PAIRS+ pairs and a probe that varies:
    {comm_size, msg_size, algorithm, segsize, pairs, pearson, pearson_p, spearman, spearman_p}."""
    from scipy import stats     # imported here: SciPy costs every command ~1 s to load
    unique, inverse = groups(pairs)
    out = []
    for g, (p, m, alg, seg) in enumerate(unique.tolist()):
        sel = inverse == g
        x, y = pairs.probe_us[sel], pairs.time_us[sel]
        if x.size < MIN_PAIRS or np.ptp(x) == 0 or np.ptp(y) == 0:
            continue
        r = stats.pearsonr(x, y)
        rho = stats.spearmanr(x, y)
        out.append({"comm_size": p, "msg_size": m, "algorithm": alg, "segsize": seg,
                    "pairs": int(x.size), "pearson": float(r[0]), "pearson_p": float(r[1]),
                    "spearman": float(rho[0]), "spearman_p": float(rho[1])})
    return out


@dataclass
class Panel:
    """The pairs the figure-2 plot draws for one (P, m): Open MPI's default's when it was
    measured there (`row`: its correlations() entry), else every method's (`row` None)."""
    comm_size: int
    msg_size: int
    row: object
    probe_us: np.ndarray
    time_us: np.ndarray
    level: np.ndarray


def panels(pairs, rows):
    """One Panel per (P, m) that correlations() scored (`rows`), sorted by (P, m)."""
    by_cell = {(r["comm_size"], r["msg_size"]): r for r in rows
               if r["algorithm"] == BASELINE_ALGORITHM}
    out = []
    for p, m in sorted({(r["comm_size"], r["msg_size"]) for r in rows}):
        sel = (pairs.comm_size == p) & (pairs.msg_size == m)
        r = by_cell.get((p, m))
        if r is not None:
            sel &= pairs.algorithm == BASELINE_ALGORITHM
        out.append(Panel(p, m, r, pairs.probe_us[sel], pairs.time_us[sel], pairs.level[sel]))
    return out
