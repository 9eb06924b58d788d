"""What one launch of a sweep runs on: P ranks, or, with --nodes/--ppn, P = nodes x ppn ranks
placed explicitly (ppn ranks on each of `nodes` nodes).

A sweep over --comm-sizes has one plain shape per P (nodes and ppn 0: the launcher decides the
placement); a --nodes LIST --ppn LIST sweep has one shape per pair with P >= 2. Shapes are the
sweep's unit of launching and of resuming: two shapes of one P (2 x 2 and 4 x 1) are different
points, their rows told apart by the `nodes` and `ppn` columns.

With --load-levels every shape is measured once per level (`with_levels`): the level is part of
the shape, so its launches, journal marks (`# launch.2@high.K=`), seeds and rows (column
`load_level`) are apart from the other levels' and the load is made around each of its launches
(sweep/load.py).
"""
from dataclasses import dataclass, replace

from collsel.core.io import sizes, values
from collsel.errors import InputError

# The table's and journal's columns of an explicit shape (after the mode's own columns).
COLUMNS = ("nodes", "ppn")
LOAD_COLUMN = "load_level"      # --load-levels: the level a row was measured under
LIST_LIMIT = 1000       # values in --nodes or --ppn: more is a typo


@dataclass(frozen=True, order=True)
class Shape:
    p: int
    nodes: int = 0          # 0: a plain P, placed by the launcher
    ppn: int = 0
    load: str = ""          # --load-levels: the background load's level ("": none asked)

    @property
    def explicit(self):
        return self.nodes > 0

    @property
    def mark(self):
        """The shape in the journal's `# launch.MARK.K=` keys and raw part names."""
        where = f"{self.nodes}x{self.ppn}" if self.explicit else str(self.p)
        return f"{where}@{self.load}" if self.load else where

    @property
    def label(self):
        """For people: progress and failure lines."""
        where = (f"P={self.p} ({self.nodes} node{'s' if self.nodes > 1 else ''} x {self.ppn})"
                 if self.explicit else f"P={self.p}")
        return f"{where} load {self.load}" if self.load else where

    def seed_key(self, *key):
        """The key a seed derives from: plain shapes keep the key of sweeps before shapes
        existed (P first), explicit ones append NODESxPPN, a load level appends its name."""
        base = (self.p, *key, f"{self.nodes}x{self.ppn}") if self.explicit else (self.p, *key)
        return (*base, self.load) if self.load else base

    def columns(self):
        """{nodes, ppn} for a row of an explicit shape, {load_level} under a load level."""
        return {**({"nodes": self.nodes, "ppn": self.ppn} if self.explicit else {}),
                **({LOAD_COLUMN: self.load} if self.load else {})}


def plain(comm_sizes):
    return [Shape(p) for p in comm_sizes]


def explicit(nodes_text, ppn_text):
    """The shapes of --nodes LIST --ppn LIST: every pair with P = nodes x ppn >= 2, ordered by
    P, then nodes. One line naming the flag when a list is malformed or leaves nothing."""
    if (nodes_text is None) != (ppn_text is None):
        raise InputError("--nodes and --ppn go together: give both lists (e.g. --nodes 1,2,4 "
                         "--ppn 1,2)")
    nodes = sizes.parse_comm_sizes(nodes_text, "--nodes", limit=LIST_LIMIT)
    ppns = sizes.parse_comm_sizes(ppn_text, "--ppn", limit=LIST_LIMIT)
    shapes = sorted(Shape(n * q, n, q) for n in nodes for q in ppns
                    if 2 <= n * q <= values.COMM_SIZE[1])
    if not shapes:
        raise InputError(f"--nodes {nodes_text} --ppn {ppn_text}: no pair gives P = nodes x ppn "
                         ">= 2 (a collective needs two ranks)")
    return shapes


def with_levels(groups, levels):
    """Every shape once per load level, the levels of a shape next to each other (so a round of
    launches interleaves them); `groups` unchanged without levels."""
    return [replace(g, load=level) for g in groups for level in levels] if levels else groups


def of_row(row):
    """The shape of a table or journal row (its nodes/ppn and load_level columns, when it has
    them)."""
    return Shape(row["comm_size"], row.get("nodes", 0), row.get("ppn", 0),
                 row.get(LOAD_COLUMN, ""))
