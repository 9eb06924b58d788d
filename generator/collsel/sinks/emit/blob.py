"""Binary tree blob (format version 2: hierarchical methods and the algorithm family; 3: also
tree.json's `beyond`) for the C runtime, and the same bytes as a C array.

The byte layout is documented in include/collsel_tree.h (the C runtime's public header) and in
docs/formats/blob.md. Split positions are not stored: the runtime derives each node's split from
its box of cells, as `collsel build` chooses it. `encode` checks the tree's splits and node
layout against that derivation (core.trees.treefile.layout_error, which loading a tree.json runs
too), and refuses (InputError) any tree it could not encode exactly, so a blob always answers as
`collsel query` on the same tree.json.

Knows nothing of benchmark tables: it reads a loaded tree.json only.
"""
import re
import struct
import zlib

import numpy as np

from collsel import __version__
from collsel.errors import InputError
from collsel.core.io import values
from collsel.core.mpi import algorithms
from collsel.core.trees import treefile
from collsel.core.trees.tree import LEAF
from collsel.sinks.emit import render, text
from collsel.sinks.emit.targets import Emitted, one_tree

MAGIC = b"CSLT"
VERSION = 2
BEYOND_VERSION = 3     # VERSION + u32 beyond_above after the header (tree.json `beyond`)
FAMILIES = {"openmpi": 0, "mpich": 1}      # byte 14: the runtime refuses another MPI's tree
KINDS = {"linear": 0, "log2": 1, "category": 2}
SPLIT_MODES = {"balanced": 0, "replicate": 1}
U16, U32, INT_MAX = 2**16 - 1, 2**32 - 1, 2**31 - 1


def _fail(what):
    raise InputError(f"cannot encode this tree as a blob: {what}")


def _axes_bytes(axes):
    if len(axes) not in (2, 3):
        _fail(f"{len(axes)} axes (the blob holds 2 or 3)")
    if axes[0].kind != "linear" or axes[1].kind != "log2" or (
            len(axes) == 3 and axes[2].kind not in ("linear", "category")):
        _fail("axes must be comm_size (linear), msg_size (log2)[, z (linear or category)]")
    records, cuts = b"", b""
    for d, axis in enumerate(axes):
        n = len(axis.cuts) + 1
        if not 1 <= n <= U16:
            _fail(f"axis {axis.name} has {n} cells (at most {U16})")
        records += struct.pack("<BBH", KINDS[axis.kind], 0, n)
        values = [int(c) for c in axis.cuts]
        if any(b <= a for a, b in zip(values, values[1:])):
            _fail(f"axis {axis.name} cuts are not strictly increasing")
        if axis.kind == "category":
            if values != list(range(1, n)):
                _fail(f"category axis {axis.name} cuts must be 1..{n - 1}")
            continue
        fmt, low, high = (("<I", 0, U32) if d == 0 else ("<Q", 0, 2**64 - 1) if d == 1
                          else ("<q", -2**63, 2**63 - 1))
        if values and not (low <= values[0] and values[-1] <= high):
            _fail(f"axis {axis.name} cut out of range [{low}, {high}]")
        cuts += b"".join(struct.pack(fmt, v) for v in values)
    return records, cuts


def _methods_bytes(methods, family):
    """12 bytes a method: u16 algorithm, u16 faninout, u32 segsize, u16 groups, u8 inner,
    u8 outer; a hierarchical method (core.mpi.algorithms.hier_parts) is algorithm 0 with groups."""
    out = b""
    for i, m in enumerate(methods):
        h = algorithms.hier_parts(m.algorithm) if family == "openmpi" else None
        if h:
            out += struct.pack("<HHIHBB", 0, 0, 0, h.groups, h.inner, h.outer)
            continue
        if not (0 <= m.algorithm <= U16 and 0 <= m.faninout <= U16 and 0 <= m.segsize <= INT_MAX):
            _fail(f"method {i} (algorithm {m.algorithm}, segsize {m.segsize}, faninout "
                  f"{m.faninout}) out of range (u16, int, u16)")
        out += struct.pack("<HHIHBB", m.algorithm, m.faninout, m.segsize, 0, 0, 0)
    return out


def encode(loaded, node_width=None):
    """The blob of a loaded tree.json, as bytes; nodes of 2 bytes when they fit, else 4."""
    tree, axes, methods = loaded.tree, loaded.axes, loaded.methods
    mode = loaded.build.get("split") if isinstance(loaded.build, dict) else None
    if mode not in SPLIT_MODES:
        _fail(f"unknown split mode {mode!r}")
    name = str(loaded.collective)
    name = algorithms.BLOB_NAMES.get(name, name)
    if not re.fullmatch(r"[\x21-\x7e]{1,16}", name):
        _fail(f"collective name {name!r} is not 1-16 printable ASCII characters")
    records, cuts = _axes_bytes(axes)
    n, m = tree.node_count, len(methods)
    width = node_width or (2 if n <= 2**15 and m <= 2**15 else 4)
    if width == 2 and not (n <= 2**15 and m <= 2**15):
        _fail(f"{n} nodes, {m} methods do not fit 2-byte nodes (at most 32768 each)")
    if not 1 <= m <= U16 or n > 2**31:
        _fail(f"{m} methods, {n} nodes (at most {U16} methods and 2^31 nodes)")
    # the runtime derives every split from the node's box: the tree must be the builder's
    error = treefile.layout_error(tree, [len(a.cuts) + 1 for a in axes], mode,
                                  [a.name for a in axes])
    if error:
        _fail(error)
    internal = tree.first_child != LEAF
    leaf_bit = 1 << (8 * width - 1)
    words = np.where(internal, tree.first_child, tree.method.astype(np.int64) | leaf_bit)
    nodes = words.astype("<u2" if width == 2 else "<u4").tobytes()
    family = getattr(loaded, "family", algorithms.DEFAULT_FAMILY)
    if family not in FAMILIES:
        _fail(f"unknown algorithm family {family!r}")
    beyond = getattr(loaded, "beyond", None)
    head = MAGIC + struct.pack("<BBBBIHBB16s", VERSION if beyond is None else BEYOND_VERSION,
                               len(axes), SPLIT_MODES[mode], width, n, m, FAMILIES[family], 0,
                               name.encode("ascii"))
    if beyond is not None:
        head += struct.pack("<I", beyond.above)
    body = head + records + cuts + _methods_bytes(methods, family) + nodes
    return body + struct.pack("<I", zlib.crc32(body))


# Algorithm 0 in the blob: collsel_tree_decide returns it for a leaf deferring to the MPI.
BLOB_DEFER = "collsel_tree_decide returns algorithm 0 = no override, let the MPI decide"


def emit_blob(trees, options):
    loaded = one_tree(trees, "blob")
    return Emitted({"tree.bin": encode(loaded, options.node_width)},
                   text.defer_notes(loaded, "the MPI", BLOB_DEFER))


def emit_c_array(trees, options):
    loaded = one_tree(trees, "c-array")
    blob = encode(loaded, options.node_width)
    name = values.identifier(options.array_name or
                             f"collsel_{text.collective(loaded, 'c-array')}_tree",
                             "--array-name")
    rows = [", ".join(f"0x{b:02x}" for b in blob[i:i + 12]) for i in range(0, len(blob), 12)]
    return Emitted({f"{name}.c": render("tree_blob.c.j2", name=name, rows=rows, size=len(blob),
                                        collective=loaded.collective, version=__version__,
                                        nodes=loaded.tree.node_count, axes=len(loaded.axes))},
                   text.defer_notes(loaded, "the MPI", BLOB_DEFER))
