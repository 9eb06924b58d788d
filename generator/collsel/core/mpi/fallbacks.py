"""Open MPI 4.1.4's silent fallbacks: the (method, P, m) at which a forced coll/tuned algorithm
runs another algorithm (or refuses the call), read from ompi/mca/coll/base/coll_base_<coll>.c.

A measurement of such a method there is the other algorithm's time under the method's name, so
the performance table drops those rows (core.maps.table.read_table), per method and cell, never the
whole size. Conditions are written for the benchmark's calls: 1-byte elements (MPI_BYTE /
MPI_UNSIGNED_CHAR, so the element count is m), a commutative op (MPI_SUM), equal counts, root 0.
tests/forcing/test_forcing.py checks every entry against the library with an LD_PRELOAD probe.

Refusals (`runs` None: the two_proc algorithms, MPI_ERR_UNSUPPORTED_OPERATION at any P but 2)
are the one rule every deployed decision follows: a method the MPI refuses at this P defers
there (algorithm 0, the MPI's own decision) instead of failing the call. A tree measured at
P = 2, 4, 8 spans P = 3 with its P = 2 cell and may pick two_proc there. `refused` (vectorised)
and `refusal` (the entry, for messages) say where; core.trees.treefile's decide and every emitter
apply them. A refusal reads P alone, so `runs_only` gives its P range for emitters that write blocks
or C conditions. The C runtimes (libcollsel, coll/collsel) apply OMPI_RELEASE_REFUSALS through
the generated runtime/collsel_mpi_table.h (tests/unit/sinks/emit/test_mpi_table.py).
"""
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from collsel.core.mpi.algorithms import HIER_BASE

_BASE = "ompi/mca/coll/base/"


def _pof2_floor(p):
    return 1 << (p.bit_length() - 1)


def _ring_segcount(m, segsize):
    """COLL_BASE_COMPUTED_SEGCOUNT (coll_base_functions.h:407-415) for 1-byte elements."""
    return segsize if 1 <= segsize < m else m


@dataclass(frozen=True)
class Fallback:
    collective: str
    algorithm: int          # the forced coll/tuned id
    condition: str          # in the terms of the docs: P ranks, m bytes, s the segment size
    applies: Callable       # (nprocs, m, segsize) -> bool
    runs: Optional[int]     # the coll/tuned id that runs instead; None: the call fails
    source: str
    runs_only: Optional[tuple] = None   # a refusal's P range [lo, hi): the call runs there only


# The P range two_proc algorithms run at: P = 2 (any other P fails the call).
TWO_PROCS = (2, 3)


def _two_procs(collective, algorithm, source):
    """The refusal of a two_proc algorithm: MPI_ERR_UNSUPPORTED_OPERATION outside TWO_PROCS
    (`applies` works on ints and numpy arrays alike)."""
    lo, hi = TWO_PROCS
    return Fallback(collective, algorithm, "P != 2 (MPI_ERR_UNSUPPORTED_OPERATION)",
                    lambda p, m, s: (p < lo) | (p >= hi), None, source, runs_only=TWO_PROCS)


FALLBACKS = (
    Fallback("allgather", 3, "P not a power of two",
             lambda p, m, s: p & (p - 1) != 0, 2, _BASE + "coll_base_allgather.c:275-282"),
    Fallback("allgather", 5, "P odd",
             lambda p, m, s: p % 2 == 1, 4, _BASE + "coll_base_allgather.c:499-506"),
    _two_procs("allgather", 6, _BASE + "coll_base_allgather.c:614-616"),
    Fallback("allgatherv", 4, "P odd",
             lambda p, m, s: p % 2 == 1, 3, _BASE + "coll_base_allgatherv.c:365-372"),
    _two_procs("allgatherv", 5, _BASE + "coll_base_allgatherv.c:510-512"),
    Fallback("allreduce", 4, "m < P",
             lambda p, m, s: m < p, 3, _BASE + "coll_base_allreduce.c:371-376"),
    Fallback("allreduce", 5, "m < P * segcount (segcount = s if 1 <= s < m, else m: always "
             "when s = 0)",
             lambda p, m, s: m < p * _ring_segcount(m, s), 4,
             _BASE + "coll_base_allreduce.c:650-660"),
    Fallback("allreduce", 6, "m < largest power of two <= P",
             lambda p, m, s: m < _pof2_floor(p), 1, _BASE + "coll_base_allreduce.c:983-994"),
    _two_procs("alltoall", 5, _BASE + "coll_base_alltoall.c:540-542"),
    _two_procs("barrier", 5, _BASE + "coll_base_barrier.c:299-301"),
    Fallback("bcast", 4, "m < 2, or s > 0 and max(s, 1) > floor(m / 2)",
             lambda p, m, s: m < 2 or (s > 0 and max(s, 1) > m // 2), 2,
             _BASE + "coll_base_bcast.c:395-425"),
    Fallback("bcast", 8, "m < P",
             lambda p, m, s: m < p, 1, _BASE + "coll_base_bcast.c:794-800"),
    Fallback("bcast", 9, "m < P",
             lambda p, m, s: m < p, 1, _BASE + "coll_base_bcast.c:971-977"),
    Fallback("reduce", 7, "m < largest power of two <= P",
             lambda p, m, s: m < _pof2_floor(p), 1, _BASE + "coll_base_reduce.c:807-817"),
    Fallback("reduce_scatter_block", 2, "P * m > INT_MAX",
             lambda p, m, s: p * m > 2**31 - 1, 1,
             _BASE + "coll_base_reduce_scatter_block.c:217-226"),
)


def fallback(collective, algorithm, nprocs, m, segsize=0):
    """The entry that applies to this method at (P, m), or None when the method runs as
    forced (also for algorithm 0, the MPI's own choice, and hierarchical methods)."""
    if algorithm == 0 or algorithm >= HIER_BASE:
        return None
    for entry in FALLBACKS:
        if (entry.collective == collective and entry.algorithm == algorithm
                and entry.applies(nprocs, m, segsize)):
            return entry
    return None


def usable(collective, algorithm, nprocs, m, segsize=0):
    """True when the forced method runs its own algorithm at P ranks and m bytes."""
    return fallback(collective, algorithm, nprocs, m, segsize) is None


REFUSALS = tuple(f for f in FALLBACKS if f.runs is None)

# The refusals of each Open MPI release collsel states them for, "major.minor" -> entries. The C
# runtimes take them from runtime/collsel_mpi_table.h (generated from this, sinks/emit/mpi_table.py)
# for the release they are compiled against (the newest listed one not newer than it), so a
# release's refusals are a fact written here, never inherited from another's by a decoder.
# 5.0: coll/base's two_procs functions keep 4.1's check (2 != comm size:
# MPI_ERR_UNSUPPORTED_OPERATION). The Python decisions (decide, emitters) use REFUSALS, 4.1.4's.
OMPI_RELEASE_REFUSALS = {"4.1": REFUSALS, "5.0": REFUSALS}


def refusal(collective, algorithm, nprocs, m=0, segsize=0):
    """The entry under which the forced call of this method fails at P ranks (and m bytes), or
    None where it runs: then a deployed decision names the method, else it defers."""
    entry = refusable(collective, algorithm)
    return entry if entry is not None and entry.applies(nprocs, m, segsize) else None


def refused(collective, algorithms, nprocs, m=0, segsize=0):
    """The rule on many points: a bool array, True where the forced method (algorithms[i], an
    Open MPI id) fails at nprocs[i] (and m[i]), so the decision there is algorithm 0 (defer).
    Arguments broadcast as numpy arrays."""
    algorithms, nprocs, m, segsize = np.broadcast_arrays(
        np.asarray(algorithms, dtype=np.int64), np.asarray(nprocs, dtype=np.int64),
        np.asarray(m, dtype=np.uint64), np.asarray(segsize, dtype=np.int64))
    out = np.zeros(algorithms.shape, dtype=bool)
    for f in REFUSALS:
        if f.collective == collective:
            out |= (algorithms == f.algorithm) & f.applies(nprocs, m, segsize)
    return out


def refusable(collective, algorithm):
    """The refusal entry of this method when it has one (the call fails at some P), else None."""
    return next((f for f in REFUSALS if f.collective == collective and f.algorithm == algorithm),
                None)


def refusal_edges(collective, algorithms):
    """The P values at which the rule's answer may change for these methods, ascending: where a
    block of communicator sizes must split so that each block is refused or run throughout."""
    entries = [refusable(collective, a) for a in algorithms]
    return sorted({p for f in entries if f is not None for p in f.runs_only})
