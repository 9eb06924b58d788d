"""What emitters write of a tree: numbers re-rendered from checked Python ints, names checked
against strict patterns, and every free text escaped for the comment syntax of its target.

A loaded tree.json is already checked (core.trees.treefile); these checks hold the emitters to their
own targets' limits too, for trees made in memory, and name what does not fit:

    --target c: ppn cut 1180591620717411303424 out of range [-9223372036854775807, ...]

Free text (a category label, the third axis' column name) never reaches generated code except
inside a comment, through `c_comment` or `line_comment`, which keep printable ASCII and write
anything else as a \\xNN escape, so no text can end a comment, start a line or a nested comment.
The Jinja2 environment (collsel.sinks.emit) has them as the filters `c_comment`, `line_comment`
and `json` (a JSON string literal).
"""
import json
import re

import numpy as np

from collsel.core.io import values
from collsel.core.mpi import algorithms, fallbacks
from collsel.core.trees import extrapolation
from collsel.core.io.names import COLLECTIVE_NAME
from collsel.errors import InputError

INT64_MIN = -2**63
# The C type each axis is compared in, its value range in a tree (a cut is the smallest value of
# a cell above the first, so it is above the type's minimum), and the literal suffix.
C_AXES = (("comm_size", "int", (2, 2**31 - 1), ""),
          ("msg_size", "uint64", (1, 2**64 - 1), "u"),
          ("z", "int64", (INT64_MIN + 1, 2**63 - 1), "LL"))


def collective(loaded, target):
    """The tree's collective name, which generated identifiers and comments are made from."""
    name = loaded.collective
    if not isinstance(name, str) or not COLLECTIVE_NAME.fullmatch(name):
        raise InputError(f"--target {target}: collective {str(name)[:40]!r} is not a collective "
                         "name (lowercase letters, digits and _, at most 24)")
    return name


def method(loaded, index, target):
    """(algorithm, segsize, faninout, name) of a method: each number checked for a C int, the
    name derived from them (core.mpi.algorithms.describe), never read from the file."""
    m = loaded.methods[index]
    where = f"--target {target}: methods[{index}]"
    alg = values.integer(m.algorithm, "algorithm", *values.ALGORITHM_ID, where)
    seg = values.integer(m.segsize, "segsize", *values.SEGSIZE, where)
    fan = values.integer(m.faninout, "faninout", *values.FANINOUT, where)
    family = getattr(loaded, "family", algorithms.DEFAULT_FAMILY)   # in-memory trees: openmpi
    return alg, seg, fan, algorithms.describe(loaded.collective, algorithms.Method(alg, seg, fan),
                                              family)


DEFER_NAME = "defer: no override, the MPI's own decision"


def methods(loaded, target):
    """[{algorithm, segsize, faninout, name}] of every method, checked (see `method`).
    Algorithm 0 is the MPI's own decision: a leaf holding it defers to the MPI (DEFER_NAME)."""
    out = []
    for i in range(len(loaded.methods)):
        alg, seg, fan, name = method(loaded, i, target)
        out.append({"algorithm": alg, "segsize": seg, "faninout": fan,
                    "name": DEFER_NAME if alg == 0 else name})
    return out


def defer_cells(loaded):
    """(grid cells where the tree defers to the MPI (algorithm 0), grid cells)."""
    shape = tuple(len(a.values) for a in loaded.axes)
    grid = loaded.tree.method_grid(shape)
    defer = [i for i, m in enumerate(loaded.methods) if int(m.algorithm) == 0]
    return int(np.isin(grid, defer).sum()), int(grid.size)


def defer_notes(loaded, mpi, meaning):
    """[one line each] naming the defer region of a tree (grid cells, and beyond the measured P
    with tree.json's `beyond`) and what the target makes of it; [] when the tree never defers.
    `mpi` names the MPI ("Open MPI"), `meaning` what algorithm 0 becomes."""
    n, total = defer_cells(loaded)
    notes = [] if not n else [f"{loaded.collective}: defer to {mpi}'s default on {n} of {total} "
                              f"grid cells ({100.0 * n / total:.1f}%): {meaning}"]
    if loaded.beyond is not None:
        notes.append(f"{loaded.collective}: defer to {mpi}'s default beyond the measured P, at "
                     f"comm_size > {loaded.beyond.above} (tree.json `beyond`): {meaning}")
    return notes + refusal_notes(loaded, meaning)


def refusal_notes(loaded, meaning):
    """[one line per method of the tree Open MPI refuses at some P] (core.mpi.fallbacks: two_proc at
    P != 2): the decision defers there, as `collsel query` does."""
    if not getattr(loaded, "refusable", False):
        return []
    picked = set(loaded.tree.method[loaded.tree.is_leaf()].tolist())
    out = []
    for i in sorted(picked):
        entry = fallbacks.refusable(loaded.collective, loaded.methods[i].algorithm)
        if entry is not None:
            out.append(f"{loaded.collective}: {loaded.method_names[i]} (alg {entry.algorithm}) "
                       f"defers where Open MPI fails it, at {entry.condition} "
                       f"({entry.source}): {meaning}")
    return out


def region_text(axes):
    """Describe a box of cells by the values it covers, e.g. 'P 4..6, m >= 2049' (cuts are
    checked ints; category labels are free text, escaped by the templates)."""
    short = {"comm_size": "P", "msg_size": "m"}

    def describe(box):
        parts = []
        for axis, (lo, hi) in zip(axes, box):
            name = short.get(axis.name, axis.name)
            n = len(axis.values)
            if axis.kind == "category":
                labels = axis.labels[lo:hi]
                parts.append(f"{name} in {{{','.join(labels)}}}" if hi - lo < n else "")
                continue
            low = axis.cuts[lo - 1] if lo > 0 else None
            high = axis.cuts[hi - 1] - 1 if hi < n else None
            if low is None and high is None:
                continue
            parts.append(f"{name} <= {high}" if low is None else f"{name} >= {low}"
                         if high is None else f"{name} {low}..{high}")
        return ", ".join(p for p in parts if p) or "everywhere"
    return describe


def cuts(axis, low, high, target, why=""):
    """The cuts of `axis` as ints in [low, high], strictly increasing; `why` ends a refusal."""
    out = []
    for k, cut in enumerate(axis.cuts):
        try:
            value = values.integer(cut, f"{axis.name} cut", low, high, f"--target {target}")
        except InputError as e:
            raise InputError(f"{e}{'; ' + why if why else ''}") from None
        if out and value <= out[-1]:
            raise InputError(f"--target {target}: {axis.name} cut {value} is not above the cut "
                             f"before it ({out[-1]})")
        out.append(value)
    return out


def c_literal(value, ctype):
    """C literal of an int already checked for `ctype` (int, uint64 or int64)."""
    if ctype == "int64":
        # -9223372036854775808LL would be unary minus on a constant too large for long long
        return "(-9223372036854775807LL - 1)" if value == INT64_MIN else f"{value}LL"
    return f"{value}u" if ctype == "uint64" else str(value)


def c_axis_cuts(axes, target):
    """Per axis, {cut: C literal}: every cut checked for the C type the axis is compared in."""
    out = []
    for axis, (_, ctype, (low, high), _) in zip(axes, C_AXES):
        out.append({c: c_literal(c, ctype) for c in cuts(axis, low, high, target)})
    return out


_PLAIN = set(map(chr, range(0x20, 0x7f))) - set("\\")


def _ascii(text):
    """Printable ASCII but the backslash kept, everything else as \\xNN / \\uNNNN / \\UNNNNNNNN."""
    out = []
    for ch in str(text):
        if ch in _PLAIN:
            out.append(ch)
        else:
            o = ord(ch)
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000
                       else f"\\U{o:08x}")
    return "".join(out)


def c_comment(text):
    """`text` safe inside a C /* */ comment: ASCII, no `*/` or `/*` (a `*` beside a `/` is
    written \\x2a), no trigraph (`??` is written ?\\x3f)."""
    s = _ascii(text)
    s = re.sub(r"(?<=/)\*|\*(?=/)", r"\\x2a", s)
    return s.replace("??", "?\\x3f")


def line_comment(text):
    """`text` safe in a comment that runs to the end of the line (# in a rules file)."""
    return _ascii(text)


def json_string(value):
    """A JSON string literal (ASCII) of `value`."""
    return json.dumps(str(value))


def measured_p(loaded):
    """The measured P and what the tree does outside them, for the emitted files' comments
    (core.trees.extrapolation: the text build, query and the report print)."""
    p_values = [int(v) for v in loaded.axes[0].values]
    return extrapolation.tree_note(p_values, None if loaded.beyond is None
                                   else loaded.beyond.above)
