"""tree.json: the versioned file every emitter and the runtime read.

It holds the axes (measured values and integer cuts), the method table and the TreeArrays
columns, and nothing from the benchmark table. Written deterministically (same tree, same bytes).
`algorithm_family` says whose algorithm ids the methods hold (core.mpi.algorithms: openmpi or
mpich); a file without it (written before families existed) is openmpi. An optional `beyond` says
what the tree decides past the measured P: {"above": P, "method": "defer"} defers to the MPI's own
decision (algorithm 0) wherever comm_size > P (Beyond; absent, the edge decision holds).
A method Open MPI refuses at a P (two_proc at P != 2, core.mpi.fallbacks.refused) defers there too:
LoadedTree.decide applies both, and every emitter writes what it decides.
"""
import json
from dataclasses import dataclass

import numpy as np

from collsel.core import schemas
from collsel.core.io import jsonfile
from collsel.core.maps import decision_map
from collsel.core.mpi import algorithms, fallbacks
from collsel.errors import InputError
from collsel.core.trees.tree import (LEAF, UNDEFINED, TreeArrays, cells_of_values,
                                     replicated_boundary, replicated_size, split_point)

FORMAT = "collsel-tree"
VERSION = 1


@dataclass(frozen=True)
class Beyond:
    """tree.json's `beyond`: comm_size > above defers to the MPI's default (method "defer",
    the only one: "keep the edge decision" is a tree without `beyond`)."""
    above: int
    method: str = "defer"

    def as_dict(self) -> dict:
        return {"above": self.above, "method": self.method}


def beyond_of(dmap, decision):
    """The Beyond of a tree built on `dmap` for the decision "defer" (above its largest
    measured P), None for "keep"."""
    return Beyond(int(dmap.axes[0].values[-1])) if decision == "defer" else None


def tree_document(dmap, tree, options, beyond=None) -> dict:
    """The tree.json document; `beyond` (a Beyond or None) adds the optional field."""
    document = {
        "format": FORMAT,
        "version": VERSION,
        "collective": dmap.collective,
        "algorithm_family": dmap.family,
        "build": options.as_dict(),
        "axes": [{"name": a.name, "kind": a.kind, "values": list(a.values),
                  "labels": list(a.labels), "cuts": list(a.cuts)} for a in dmap.axes],
        "methods": [{"algorithm": m.algorithm, "segsize": m.segsize, "faninout": m.faninout,
                     "name": algorithms.describe(dmap.collective, m, dmap.family)}
                    for m in dmap.methods],
        "nodes": {"first_child": tree.first_child.tolist(),
                  "split": tree.split.T.tolist(),
                  "method": tree.method.tolist(),
                  "depth": tree.depth.tolist()},
    }
    if beyond is not None:
        document["beyond"] = beyond.as_dict()
    return document


def dumps(document) -> str:
    return json.dumps(document, indent=1, separators=(",", ": ")) + "\n"


class LoadedTree:
    """A tree.json read back: axes, methods and TreeArrays, every value checked.

    The document is checked against schemas/tree.schema.json first (types, required keys,
    integer bounds, text patterns), then against what a schema cannot say (_check_axes: lengths
    that agree, cuts that separate the values; _check_nodes: the node layout, splits and depths
    `collsel build` makes), so a corrupted file is one located error, never a crash or a wrong
    answer later, and every emitter can take any tree that loads. Method names are derived from
    (algorithm, segsize, faninout) by core.mpi.algorithms.describe, not read from the file.
    """

    def __init__(self, document, path, schema=True):
        """`schema` False skips the schema (not the other checks) for a document
        tree_document has just made: loading jsonschema is a twentieth of `collsel build`."""
        _check_header(document, path)
        if schema:
            schemas.check(_node_items_checked(document, path), "tree", path)
        _check_axes(document, path)
        _check_lengths(document, path)
        self.collective = document["collective"]
        self.family = document.get("algorithm_family", algorithms.DEFAULT_FAMILY)
        try:     # a name the schema's pattern allows but no emitter or runtime knows
            algorithms.check_collective(self.collective, self.family)
        except InputError as e:
            raise InputError(f"{path}: collective: {e}; build the tree from a table of one of "
                             "them") from None
        self.build = document["build"]
        self.axes = [decision_map.Axis(a["name"], a["kind"], a["values"], a["labels"], a["cuts"])
                     for a in document["axes"]]
        self.methods = [algorithms.Method(m["algorithm"], m["segsize"], m["faninout"])
                        for m in document["methods"]]
        self.method_names = [algorithms.describe(self.collective, m, self.family)
                             for m in self.methods]
        nodes = document["nodes"]
        self.tree = TreeArrays(np.array(nodes["first_child"], dtype=np.int32),
                               np.array(nodes["split"], dtype=np.int32).T.reshape(
                                   -1, len(self.axes)),
                               np.array(nodes["method"], dtype=np.int32),
                               np.array(nodes["depth"], dtype=np.int32), self.family)
        _check_nodes(self.tree, self.axes, self.methods, self.build, path)
        self.beyond = _beyond(document, self.axes[0], path)
        if (self.beyond is not None or self.refusable) and decision_map.DEFER not in self.methods:
            # the decision beyond `above` (or where the MPI refuses a method) needs an index:
            # an extra method no leaf holds
            self.methods.append(decision_map.DEFER)
            self.method_names.append(algorithms.describe(self.collective, decision_map.DEFER,
                                                         self.family))

    @property
    def defer_index(self):
        """Index of "defer to the MPI" (algorithm 0) among the methods, None if absent."""
        return (self.methods.index(decision_map.DEFER) if decision_map.DEFER in self.methods
                else None)

    @property
    def refusable(self):
        """True when a method of the tree fails at some P (core.mpi.fallbacks.refusal: Open MPI's
        two_proc algorithms at P != 2), so the tree defers there."""
        return self.family == algorithms.DEFAULT_FAMILY and any(
            fallbacks.refusable(self.collective, m.algorithm) for m in self.methods)

    def decide(self, values, refusals=True):
        """(method index array) for query values, one array per axis; comm_size > beyond's
        `above` takes the defer method, and so does a method the MPI refuses at that P
        (core.mpi.fallbacks.refused; `refusals` False: the tree's leaves as they are)."""
        return self.decide_cells(cells_of_values(self.axes, values), values[0],
                                 values[1] if len(values) > 1 else 0, refusals)

    def decide_cells(self, cells, comm_size, msg_size=0, refusals=True):
        """decide() for query values already placed on the tree's axes (`cells`, as
        core.trees.tree.cells_of_values gives them) with their communicator and message sizes (for
        `beyond` and the refusals)."""
        chosen = self.tree.method[self.tree.leaf_of_cells(cells)]
        if self.beyond is not None:
            chosen = np.where(np.asarray(comm_size) > self.beyond.above, self.defer_index, chosen)
        if refusals and self.refusable:
            ids = np.array([m.algorithm for m in self.methods], dtype=np.int64)[chosen]
            chosen = np.where(fallbacks.refused(self.collective, ids, comm_size, msg_size),
                              self.defer_index, chosen)
        return chosen


def _beyond(document, p_axis, path):
    """The document's Beyond or None; `above` below the largest measured P is refused (the
    grid would decide two ways)."""
    if "beyond" not in document:
        return None
    beyond = Beyond(document["beyond"]["above"], document["beyond"]["method"])
    if beyond.above < p_axis.values[-1]:
        raise InputError(f"{path}: beyond.above: {beyond.above} is below the largest measured "
                         f"comm_size ({p_axis.values[-1]}); give at least it, or drop `beyond`")
    return beyond


def _check_header(document, path) -> None:
    """Format and version first: they say which schema applies."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InputError(f"{path}: not a {FORMAT} file (\"format\": \"{FORMAT}\" missing)")
    if "version" not in document:
        raise InputError(f"{path}: version missing (this collsel reads version {VERSION})")
    version = document["version"]
    if isinstance(version, str):
        raise InputError(f"{path}: version: {version!r} is a string; this collsel reads the "
                         f"integer {VERSION}")
    if isinstance(version, bool) or not isinstance(version, int):
        raise InputError(f"{path}: version: {version!r} is not an integer; this collsel reads "
                         f"version {VERSION}")
    if version != VERSION:
        raise InputError(f"{path}: version {version} unsupported (this collsel reads version "
                         f"{VERSION})")


def _check_items(items, schema, where):
    """The items of one node array against their schema ({"type": "integer", "minimum",
    "maximum"}), in bulk, with the messages jsonschema gives."""
    if set(schema) != {"type", "minimum", "maximum"} or schema["type"] != "integer":
        raise AssertionError(f"{where}: the fast check does not know the items schema {schema}")
    low, high = schema["minimum"], schema["maximum"]
    if all(type(x) is int for x in items) and (not items or low <= min(items)
                                                and max(items) <= high):
        return
    for i, x in enumerate(items):
        if type(x) is not int:
            raise InputError(f"{where}[{i}]: {x!r} is not of type 'integer'")
        if x < low:
            raise InputError(f"{where}[{i}]: {x} is less than the minimum of {low}")
        if x > high:
            raise InputError(f"{where}[{i}]: {x} is greater than the maximum of {high}")


def _node_items_checked(document, path):
    """`document` with each node array cut to its first item, once all its items are checked
    against the schema's items here: jsonschema would take seconds per 100,000 nodes."""
    nodes = document.get("nodes")
    if not isinstance(nodes, dict):
        return document
    props = schemas.schema("tree")["properties"]["nodes"]["properties"]
    cut = dict(nodes)
    for name in ("first_child", "method", "depth"):
        if isinstance(nodes.get(name), list):
            _check_items(nodes[name], props[name]["items"], f"{path}: nodes.{name}")
            cut[name] = nodes[name][:1]
    if isinstance(nodes.get("split"), list):
        cut["split"] = []
        for d, row in enumerate(nodes["split"]):
            if isinstance(row, list):
                _check_items(row, props["split"]["items"]["items"], f"{path}: nodes.split[{d}]")
                row = row[:1]
            cut["split"].append(row)
    return {**document, "nodes": cut}


def _check_axes(document, path) -> None:
    """What the schema cannot state about the axes: lengths that agree, cuts that increase and
    separate the values (values[k] < cuts[k] <= values[k + 1]), labels that name the values."""
    for d, axis in enumerate(document["axes"]):
        where = f"{path}: axes[{d}]"
        values, labels, cuts = axis["values"], axis["labels"], axis["cuts"]
        cells = len(values)
        if len(labels) != cells:
            raise InputError(f"{where}.labels: {len(labels)} labels for {cells} values")
        if len(cuts) != cells - 1:
            raise InputError(f"{where}.cuts: {len(cuts)} cuts for {cells} values "
                             f"(needs {cells - 1})")
        for k in range(1, len(cuts)):
            if cuts[k] <= cuts[k - 1]:
                raise InputError(f"{where}.cuts[{k}]: {cuts[k]} is not above the cut before it "
                                 f"({cuts[k - 1]}); cuts must increase")
        if axis["kind"] == "category":
            for k, cut in enumerate(cuts):
                if cut != k + 1:
                    raise InputError(f"{where}.cuts[{k}]: {cut}, but the cuts of a category "
                                     f"axis are 1..{cells - 1}")
            seen: dict = {}
            for k, label in enumerate(labels):
                if label in seen:
                    raise InputError(f"{where}.labels[{k}]: {label!r} again (as "
                                     f"labels[{seen[label]}]); categories must differ")
                seen[label] = k
        else:
            for k, (value, label) in enumerate(zip(values, labels)):
                if label != str(value):
                    raise InputError(f"{where}.labels[{k}]: {label!r} is not values[{k}] "
                                     f"({value}) in decimal")
        for k, cut in enumerate(cuts):
            if not values[k] < cut <= values[k + 1]:
                raise InputError(f"{where}.cuts[{k}]: {cut} does not separate values[{k}] "
                                 f"({values[k]}) and values[{k + 1}] ({values[k + 1]}): it must "
                                 f"be above the first and at most the second")


def _check_lengths(document, path) -> None:
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


def _first(mask):
    bad = np.flatnonzero(mask)
    return int(bad[0]) if bad.size else None


def _check_nodes(t, axes, methods, build, path):
    """The node arrays hold the tree `collsel build` makes on these axes (see layout_error)."""
    n = t.node_count
    internal = t.first_child != LEAF
    children = 1 << (t.split != UNDEFINED).sum(axis=1)
    first = t.first_child.astype(np.int64)
    i = _first(internal & ((first <= np.arange(n)) | (first + children > n)))
    if i is not None:
        raise InputError(f"{path}: nodes.first_child[{i}]: {first[i]} does not link node {i} "
                         f"to {children[i]} later node(s) of the {n}")
    i = _first(~internal & ((t.method < 0) | (t.method >= len(methods))))
    if i is not None:
        raise InputError(f"{path}: nodes.method[{i}]: leaf method {t.method[i]} is not an "
                         f"index of the {len(methods)} methods")
    i = _first(internal & (t.method != UNDEFINED))
    if i is not None:
        raise InputError(f"{path}: nodes.method[{i}]: {t.method[i]} on an internal node (node "
                         f"{i} has children); internal nodes hold -2")
    for d, axis in enumerate(axes):
        s = t.split[:, d]
        i = _first((s != UNDEFINED) & ((s < 0) | (s > len(axis.values))))
        if i is not None:
            raise InputError(f"{path}: nodes.split[{d}][{i}]: {s[i]} is neither -2 nor a "
                             f"cell boundary of axis {axis.name} (0..{len(axis.values)})")
        i = _first(~internal & (s != UNDEFINED))
        if i is not None:
            raise InputError(f"{path}: nodes.split[{d}][{i}]: {s[i]} on a leaf (node {i} has "
                             "no children); leaves hold -2")
    error = layout_error(t, [len(a.values) for a in axes], build["split"],
                         [a.name for a in axes])
    if error:
        raise InputError(f"{path}: {error}")
    limit = build["max_depth"]
    if limit is not None and n and int(t.depth.max()) > limit:
        i = int(np.argmax(t.depth))
        raise InputError(f"{path}: nodes.depth[{i}]: {t.depth[i]} is deeper than "
                         f"build.max_depth {limit}")


def layout_error(t, n_cells, mode, names):
    """Where the nodes of `t` depart from the tree `collsel build` makes with the same leaves
    (a located message), or None.

    Walks t level by level from the root with each node's box of cells as the builder splits it
    (core.trees.tree.split_point; in replicate mode on the power-of-two builder grid): an internal
    node must split its box where the builder does, its children must come breadth first, right
    after the children of the nodes before it, every node must be reached, and depth must be the
    node's level. This is also what the C runtime derives from a blob, which stores no splits.
    """
    n, n_axes = t.node_count, len(n_cells)
    internal = t.first_child != LEAF
    size = replicated_size(n_cells)
    cells = np.array(n_cells, dtype=np.int64)
    lo = np.zeros((n, n_axes), dtype=np.int64)
    hi = np.tile(np.full(n_axes, size) if mode == "replicate" else cells, (n, 1))
    if t.depth[0] != 0:
        return f"nodes.depth[0]: {t.depth[0]}, but node 0 is the root (level 0)"
    level, next_id, depth = np.array([0]), 1, 0
    while level.size:
        nodes = level[internal[level]]
        if not nodes.size:
            break
        mid, splits = split_point(lo[nodes], hi[nodes])
        stuck = ~splits.any(axis=1)
        if stuck.any():
            i = int(nodes[np.argmax(stuck)])
            return (f"nodes.first_child[{i}]: node {i} has children, but its box of cells "
                    "is too small to split")
        boundary = replicated_boundary(mid, cells, size) if mode == "replicate" else mid
        want = np.where(splits, boundary, UNDEFINED)
        for d in range(n_axes):
            wrong = t.split[nodes, d] != want[:, d]
            if wrong.any():
                k = int(np.argmax(wrong))
                i = int(nodes[k])
                return (f"nodes.split[{d}][{i}]: {t.split[i, d]} is not the {mode} split of "
                        f"node {i}'s box on axis {names[d]} ({want[k, d]})")
        count = 1 << splits.sum(axis=1)
        starts = next_id + np.concatenate(([0], np.cumsum(count)[:-1]))
        wrong = t.first_child[nodes] != starts
        if wrong.any():
            k = int(np.argmax(wrong))
            i = int(nodes[k])
            return (f"nodes.first_child[{i}]: {t.first_child[i]}, but node {i}'s children come "
                    f"breadth first, at {starts[k]}")
        next_id += int(count.sum())
        parent = np.repeat(np.arange(nodes.size), count)
        rank = np.arange(parent.size) - np.repeat(starts - starts[0], count)
        child = starts[parent] + rank
        shift = np.zeros(parent.size, dtype=np.int64)
        clo, chi = lo[nodes][parent], hi[nodes][parent]
        for d in reversed(range(n_axes)):
            s = splits[parent, d]
            bit = np.where(s, (rank >> shift) & 1, 0)
            shift += s
            m = mid[parent, d]
            clo[:, d] = np.where(s & (bit == 1), m, clo[:, d])
            chi[:, d] = np.where(s & (bit == 0), m, chi[:, d])
        lo[child], hi[child] = clo, chi
        depth += 1
        wrong = t.depth[child] != depth
        if wrong.any():
            i = int(child[np.argmax(wrong)])
            return f"nodes.depth[{i}]: {t.depth[i]}, but node {i} is at level {depth}"
        level = child
    if next_id != n:
        return (f"nodes.first_child: nodes {next_id}..{n - 1} are no node's children (the "
                f"tree's links reach {next_id} nodes)")
    return None


def load(path) -> LoadedTree:
    return LoadedTree(jsonfile.read(path), path)
