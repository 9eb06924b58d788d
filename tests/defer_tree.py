"""A small hand-made tree.json whose leaves defer to the MPI (algorithm 0) in two of four
blocks, for the tests of what every emit target makes of "defer" (test_emit_defer.py and the
integration tests on real and patched Open MPI). Hand-made, so it does not depend on when the
builder picks "defer".

Axes: P in {2, 4, 8, 16} (cuts 3, 6, 12), m in {1, 4, ..., 4^10} (cuts 2, 8, ..., 524288); one
balanced split at P cell 2 (P >= 6) and m cell 6 (m >= 2048) into four leaves:
    P <= 5, m < 2048: defer        P <= 5, m >= 2048: FORCED[collective][0]
    P >= 6, m < 2048: FORCED[...][1]  P >= 6, m >= 2048: defer
With `beyond` (an int, tree.json's `beyond.above`), every P > beyond defers too: the tree's
choice at P = beyond is FORCED[...][1] for m < 2048, at beyond + 1 the defer.
"""
import json

from collsel.core.mpi import algorithms

P_VALUES = [2, 4, 8, 16]
M_VALUES = [4**k for k in range(11)]
P_SPLIT, M_SPLIT = 6, 2048         # the first P and m of the upper halves
# Open MPI ids of the two forced leaves: bcast linear (1), binomial (6); reduce linear (1),
# binomial (5); allreduce basic linear (1), recursive doubling (3).
FORCED = {"bcast": (1, 6), "reduce": (1, 5), "allreduce": (1, 3)}


def _cuts(values, log2):
    if log2:   # the ceiling of the geometric mean of neighbours (collsel's log2 cuts)
        return [int(-(-((a * b) ** 0.5) // 1)) for a, b in zip(values, values[1:])]
    return [(a + b + 1) // 2 for a, b in zip(values, values[1:])]


def document(collective="bcast", beyond=None):
    low_p, high_p = FORCED[collective]
    methods = [(0, 0, 0), (low_p, 0, 0), (high_p, 0, 0)]
    return {**({} if beyond is None else {"beyond": {"above": beyond, "method": "defer"}}),
        "format": "collsel-tree", "version": 1, "collective": collective,
        "build": {"split": "balanced", "leaf": "majority", "max_depth": 1, "threshold": None},
        "axes": [{"name": "comm_size", "kind": "linear", "values": P_VALUES,
                  "labels": [str(v) for v in P_VALUES], "cuts": _cuts(P_VALUES, False)},
                 {"name": "msg_size", "kind": "log2", "values": M_VALUES,
                  "labels": [str(v) for v in M_VALUES], "cuts": _cuts(M_VALUES, True)}],
        "methods": [{"algorithm": a, "segsize": s, "faninout": f,
                     "name": algorithms.describe(collective, algorithms.Method(a, s, f))}
                    for a, s, f in methods],
        # children in order (P low, m low), (P low, m high), (P high, m low), (P high, m high)
        "nodes": {"first_child": [1, -1, -1, -1, -1],
                  "split": [[2, -2, -2, -2, -2], [6, -2, -2, -2, -2]],
                  "method": [-2, 0, 1, 2, 0], "depth": [0, 1, 1, 1, 1]},
    }


def write(path, collective="bcast", beyond=None):
    path.write_text(json.dumps(document(collective, beyond)))
    return path


def expected(collective, p, m, beyond=None):
    """(algorithm, segsize, faninout) the tree decides at (P, m); algorithm 0 = defer."""
    if beyond is not None and p > beyond:
        return (0, 0, 0)
    low_p, high_p = FORCED[collective]
    high_m = m >= M_SPLIT
    if p < P_SPLIT:
        return (low_p, 0, 0) if high_m else (0, 0, 0)
    return (0, 0, 0) if high_m else (high_p, 0, 0)
