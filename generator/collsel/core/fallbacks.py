"""Open MPI 4.1.4's silent fallbacks: the (method, P, m) at which a forced coll/tuned algorithm
runs another algorithm (or refuses the call), read from ompi/mca/coll/base/coll_base_<coll>.c.

A measurement of such a method there is the other algorithm's time under the method's name, so
the performance table drops those rows (core.table.read_table), per method and cell, never the
whole size. Conditions are written for the benchmark's calls: 1-byte elements (MPI_BYTE /
MPI_UNSIGNED_CHAR, so the element count is m), a commutative op (MPI_SUM), equal counts, root 0.
tests/forcing/test_forcing.py checks every entry against the library with an LD_PRELOAD probe."""
from dataclasses import dataclass
from typing import Callable, Optional

from collsel.core.algorithms import HIER_BASE

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


FALLBACKS = (
    Fallback("allgather", 3, "P not a power of two",
             lambda p, m, s: p & (p - 1) != 0, 2, _BASE + "coll_base_allgather.c:275-282"),
    Fallback("allgather", 5, "P odd",
             lambda p, m, s: p % 2 == 1, 4, _BASE + "coll_base_allgather.c:499-506"),
    Fallback("allgather", 6, "P != 2 (MPI_ERR_UNSUPPORTED_OPERATION)",
             lambda p, m, s: p != 2, None, _BASE + "coll_base_allgather.c:614-616"),
    Fallback("allgatherv", 4, "P odd",
             lambda p, m, s: p % 2 == 1, 3, _BASE + "coll_base_allgatherv.c:365-372"),
    Fallback("allgatherv", 5, "P != 2 (MPI_ERR_UNSUPPORTED_OPERATION)",
             lambda p, m, s: p != 2, None, _BASE + "coll_base_allgatherv.c:510-512"),
    Fallback("allreduce", 4, "m < P",
             lambda p, m, s: m < p, 3, _BASE + "coll_base_allreduce.c:371-376"),
    Fallback("allreduce", 5, "m < P * segcount (segcount = s if 1 <= s < m, else m: always "
             "when s = 0)",
             lambda p, m, s: m < p * _ring_segcount(m, s), 4,
             _BASE + "coll_base_allreduce.c:650-660"),
    Fallback("allreduce", 6, "m < largest power of two <= P",
             lambda p, m, s: m < _pof2_floor(p), 1, _BASE + "coll_base_allreduce.c:983-994"),
    Fallback("alltoall", 5, "P != 2 (MPI_ERR_UNSUPPORTED_OPERATION)",
             lambda p, m, s: p != 2, None, _BASE + "coll_base_alltoall.c:540-542"),
    Fallback("barrier", 5, "P != 2 (MPI_ERR_UNSUPPORTED_OPERATION)",
             lambda p, m, s: p != 2, None, _BASE + "coll_base_barrier.c:299-301"),
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
