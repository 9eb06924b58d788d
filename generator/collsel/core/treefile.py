"""tree.json: the versioned file every emitter and the runtime read.

It holds the axes (measured values and integer cuts), the method table and the TreeArrays
columns, and nothing from the benchmark table. Written deterministically (same tree, same bytes).
"""
import json

import numpy as np

from collsel.core import algorithms, decision_map, schemas
from collsel.errors import InputError
from collsel.core.tree import LEAF, UNDEFINED, TreeArrays, cells_of_values

FORMAT = "collsel-tree"
VERSION = 1


def tree_document(dmap, tree, options):
    return {
        "format": FORMAT,
        "version": VERSION,
        "collective": dmap.collective,
        "build": options.as_dict(),
        "axes": [{"name": a.name, "kind": a.kind, "values": list(a.values),
                  "labels": list(a.labels), "cuts": list(a.cuts)} for a in dmap.axes],
        "methods": [{"algorithm": m.algorithm, "segsize": m.segsize, "faninout": m.faninout,
                     "name": algorithms.describe(dmap.collective, m)} for m in dmap.methods],
        "nodes": {"first_child": tree.first_child.tolist(),
                  "split": tree.split.T.tolist(),
                  "method": tree.method.tolist(),
                  "depth": tree.depth.tolist()},
    }


def dumps(document):
    return json.dumps(document, indent=1, separators=(",", ": ")) + "\n"


class LoadedTree:
    """A tree.json read back: axes, methods and TreeArrays.

    The document is checked against schemas/tree.schema.json first (types, required keys,
    integer bounds), then against what a schema cannot say (_validate: lengths that must agree,
    node links in range), so a corrupted file is one located error, never a crash later.
    """

    def __init__(self, document, path):
        _check_header(document, path)
        schemas.check(document, "tree", path)
        _check_consistent(document, path)
        self.collective = document["collective"]
        self.build = document["build"]
        self.axes = [decision_map.Axis(a["name"], a["kind"], a["values"], a["labels"], a["cuts"])
                     for a in document["axes"]]
        self.methods = [algorithms.Method(m["algorithm"], m["segsize"], m["faninout"])
                        for m in document["methods"]]
        self.method_names = [m["name"] for m in document["methods"]]
        nodes = document["nodes"]
        self.tree = TreeArrays(np.array(nodes["first_child"], dtype=np.int32),
                               np.array(nodes["split"], dtype=np.int32).T.reshape(
                                   -1, len(self.axes)),
                               np.array(nodes["method"], dtype=np.int32),
                               np.array(nodes["depth"], dtype=np.int32))
        self._validate(path)

    def _validate(self, path):
        t, n = self.tree, self.tree.node_count
        internal = t.first_child != LEAF
        children = 1 << (t.split != UNDEFINED).sum(axis=1)
        first = t.first_child.astype(np.int64)
        bad = np.flatnonzero(internal & ((first <= np.arange(n)) | (first + children > n)))
        if bad.size:
            i = int(bad[0])
            raise InputError(f"{path}: nodes.first_child[{i}]: {first[i]} does not link node {i} "
                             f"to {children[i]} later node(s) of the {n}")
        bad = np.flatnonzero(~internal & ((t.method < 0) | (t.method >= len(self.methods))))
        if bad.size:
            i = int(bad[0])
            raise InputError(f"{path}: nodes.method[{i}]: leaf method {t.method[i]} is not an "
                             f"index of the {len(self.methods)} methods")
        for d, axis in enumerate(self.axes):
            s = t.split[:, d]
            bad = np.flatnonzero((s != UNDEFINED) & ((s < 0) | (s > len(axis.values))))
            if bad.size:
                i = int(bad[0])
                raise InputError(f"{path}: nodes.split[{d}][{i}]: {s[i]} is neither -2 nor a "
                                 f"cell boundary of axis {axis.name} (0..{len(axis.values)})")

    def decide(self, values):
        """(method index array) for query values, one array per axis."""
        return self.tree.method[self.tree.leaf_of_cells(cells_of_values(self.axes, values))]


def _check_header(document, path):
    """Format and version first: they say which schema applies."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InputError(f"{path}: not a {FORMAT} file (\"format\": \"{FORMAT}\" missing)")
    if document.get("version") != VERSION:
        raise InputError(f"{path}: version {document.get('version')!r} unsupported "
                         f"(this collsel reads version {VERSION})")


def _check_consistent(document, path):
    """What the schema cannot state: lengths that must agree, cuts in order."""
    for d, axis in enumerate(document["axes"]):
        where = f"{path}: axes[{d}]"
        cells = len(axis["values"])
        if len(axis["labels"]) != cells:
            raise InputError(f"{where}.labels: {len(axis['labels'])} labels for {cells} values")
        if len(axis["cuts"]) != cells - 1:
            raise InputError(f"{where}.cuts: {len(axis['cuts'])} cuts for {cells} values "
                             f"(needs {cells - 1})")
        cuts = axis["cuts"]
        for k in range(1, len(cuts)):
            if cuts[k] < cuts[k - 1]:
                raise InputError(f"{where}.cuts[{k}]: {cuts[k]} is below the cut before it "
                                 f"({cuts[k - 1]}); cuts must not decrease")
    nodes = document["nodes"]
    n = len(nodes["first_child"])
    if len(nodes["split"]) != len(document["axes"]):
        raise InputError(f"{path}: nodes.split: {len(nodes['split'])} rows for "
                         f"{len(document['axes'])} axes")
    for name, column in [("method", nodes["method"]), ("depth", nodes["depth"])] + [
            (f"split[{d}]", row) for d, row in enumerate(nodes["split"])]:
        if len(column) != n:
            raise InputError(f"{path}: nodes.{name}: {len(column)} entries for {n} nodes "
                             "(nodes.first_child)")


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}: not JSON: {e.msg}") from None
    except (ValueError, RecursionError) as e:   # UnicodeDecodeError is a ValueError
        raise InputError(f"{path}: not JSON: {e}") from None
    return LoadedTree(document, path)
