"""tree.json: the versioned file every emitter and the runtime read.

It holds the axes (measured values and integer cuts), the method table and the TreeArrays
columns, and nothing from the benchmark table. Written deterministically (same tree, same bytes).
"""
import json

import numpy as np

from collsel.core import decision_map
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
                     "name": decision_map.describe(dmap.collective, m)} for m in dmap.methods],
        "nodes": {"first_child": tree.first_child.tolist(),
                  "split": tree.split.T.tolist(),
                  "method": tree.method.tolist(),
                  "depth": tree.depth.tolist()},
    }


def dumps(document):
    return json.dumps(document, indent=1, separators=(",", ": ")) + "\n"


class LoadedTree:
    """A tree.json read back: axes, methods and TreeArrays."""

    def __init__(self, document, path):
        try:
            if document.get("format") != FORMAT:
                raise ValueError(f"not a {FORMAT} file")
            if document.get("version") != VERSION:
                raise ValueError(f"version {document.get('version')} unsupported "
                                 f"(this collsel reads version {VERSION})")
            self.collective = document["collective"]
            self.build = document["build"]
            self.axes = [decision_map.Axis(a["name"], a["kind"], a["values"], a["labels"],
                                           a["cuts"]) for a in document["axes"]]
            self.methods = [decision_map.Method(m["algorithm"], m["segsize"], m["faninout"])
                            for m in document["methods"]]
            self.method_names = [str(m["name"]) for m in document["methods"]]
            nodes = document["nodes"]
            self.tree = TreeArrays(np.array(nodes["first_child"], dtype=np.int32),
                                   np.array(nodes["split"], dtype=np.int32).T.reshape(
                                       -1, len(self.axes)),
                                   np.array(nodes["method"], dtype=np.int32),
                                   np.array(nodes["depth"], dtype=np.int32))
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(f"{path}: not a valid tree file: {e}") from None
        self._validate(path)

    def _validate(self, path):
        t, n = self.tree, self.tree.node_count
        internal = t.first_child != LEAF
        children = 1 << (t.split != UNDEFINED).sum(axis=1)
        ok = (n > 0 and len(t.method) == n and len(t.depth) == n
              and np.all(t.first_child[internal] > np.flatnonzero(internal))
              and np.all(t.first_child[internal] + children[internal] <= n)
              and np.all((t.method[~internal] >= 0) & (t.method[~internal] < len(self.methods))))
        if not ok:
            raise InputError(f"{path}: tree arrays are inconsistent (corrupted file?)")

    def decide(self, values):
        """(method index array) for query values, one array per axis."""
        return self.tree.method[self.tree.leaf_of_cells(cells_of_values(self.axes, values))]


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: not JSON: {e}") from None
    if not isinstance(document, dict):
        raise InputError(f"{path}: not a tree file")
    return LoadedTree(document, path)
