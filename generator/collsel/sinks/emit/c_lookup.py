"""Target `c-fast` of `collsel emit`: decision.c / decision.h with the same <prefix>_decide() as
target `c`, answered by table lookups instead of an if/else ladder.

The tree is constant on every cell of its axis grid (splits fall on cell boundaries), so the
emitted function finds the comm_size and msg_size cells in O(1) and reads the method from a
dense cell table computed here from the tree (TreeArrays.method_grid, the same descent
`collsel query` uses), so it answers exactly as the tree on every point:
  comm_size cell: a direct table below SMALL_P, else the bucket of its bit length;
  msg_size cell: the bucket of its bit length (0 and 1 share bucket 1).
A bucket L holds the cuts of bit length L: every smaller cut is <= the value and every larger
one is greater, so cell = START[L] + (number of cuts in row L that are <= the value), counted by
a fixed number of branch-free compares (the largest bucket population). Rows hold cut - 1,
padded with the all-ones value, which no query value exceeds, and the compare is cut - 1 < v.
2-axis trees only (comm_size linear, msg_size log2). Knows nothing of benchmark tables.
"""
import numpy as np

from collsel.errors import InputError
from collsel.sinks.emit import render, text
from collsel.sinks.emit.c_ladder import C_DEFER, decision_context
from collsel.sinks.emit.targets import Emitted, one_tree

SMALL_P = 64
MAX_TABLE = 1 << 20     # cells; a larger tree is better served by --target c
U32, U64 = 2**32 - 1, 2**64 - 1


def _bit_length(v):
    return int(v | 1).bit_length()


def _buckets(cuts, n_buckets, pad, first=0):
    """START[0..n_buckets] and rows [n_buckets][scan] of cut - 1 (padded), for sorted cuts;
    rows below bucket `first` are never read (left as padding)."""
    lengths = [_bit_length(c) for c in cuts]
    start = [sum(1 for b in lengths if b < L) for L in range(n_buckets + 1)]
    rows = [[c - 1 for c, b in zip(cuts, lengths) if b == L] if L >= first else []
            for L in range(n_buckets)]
    scan = max([len(r) for r in rows] + [1])
    return start, [r + [pad] * (scan - len(r)) for r in rows], scan


def _index_type(largest):
    """The smallest unsigned C type that holds every value up to `largest`."""
    return ("unsigned char" if largest <= 0xFF else "unsigned short" if largest <= 0xFFFF
            else "unsigned int")


def emit(trees, options):
    loaded = one_tree(trees, "c-fast")
    axes = loaded.axes
    if len(axes) != 2 or axes[0].kind != "linear" or axes[1].kind != "log2":
        raise InputError("--target c-fast takes 2-axis trees (comm_size linear, msg_size log2); "
                         "use --target c")
    ctx = decision_context(loaded, options.prefix, "c-fast")   # checks cuts, methods, prefix
    ctx.pop("steps")
    p_cuts = text.cuts(axes[0], 2, 2**31 - 1, "c-fast")
    m_cuts = text.cuts(axes[1], 1, U64, "c-fast")
    n0, n1 = len(p_cuts) + 1, len(m_cuts) + 1
    if n0 * n1 > MAX_TABLE:
        raise InputError(f"--target c-fast: {n0} x {n1} cells exceed {MAX_TABLE}; use --target c")
    cell_method = loaded.tree.method_grid((n0, n1)).ravel()
    if (cell_method < 0).any():
        raise InputError("--target c-fast: the tree leaves a cell without a method")
    p_small = np.searchsorted(np.asarray(p_cuts, dtype=np.int64), np.arange(SMALL_P),
                              side="right").tolist()
    p_start, p_rows, p_scan = _buckets(p_cuts, 33, U32, first=_bit_length(SMALL_P))
    m_start, m_rows, m_scan = _buckets(m_cuts, 65, U64)
    n_methods = len(ctx["methods"])
    guard = ctx["prefix"].upper() + "_DECISION_H"
    notes = text.defer_notes(loaded, "the MPI", C_DEFER)
    return Emitted({"decision.h": render("decision.h.j2", guard=guard, **ctx),
                    "decision.c": render(
                "decision_fast.c.j2", header="decision.h", small_p=SMALL_P, p_small=p_small,
                p_start=p_start, p_rows=p_rows, p_scan=p_scan, m_start=m_start, m_rows=m_rows,
                m_scan=m_scan, n0=n0, n1=n1, cells=[int(x) for x in cell_method],
                p_index_type=_index_type(n0 - 1), m_index_type=_index_type(n1 - 1),
                cell_type=_index_type(n_methods - 1), **ctx)}, notes)
