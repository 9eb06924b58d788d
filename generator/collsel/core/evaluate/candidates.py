"""The trees `collsel build --recommend` chooses among (core.evaluate.model_selection).

A variant is (split mode, leaf rule, tie-aware leaves, "defer" offered). Its exact tree is built
once per training map (core.trees.tree.build_with_blocks), with every node's block method; every
candidate of the variant is that tree with some nodes turned into leaves:

- exact: none;
- alpha: the smallest subtree minimising R + alpha x leaves (CART's cost-complexity pruning,
  R the in-sample mean penalty of core.trees.pruning.block_costs), for a fixed grid of alphas (the
  same on every training map, so no choice leaks from the held-out data); one bottom-up pass
  per level for all alphas at once;
- depth d (1..6): the nodes at depth d (as --max-depth d builds it);
- threshold (60, 80, 90, 95 %): the topmost nodes whose most frequent best method holds that
  share of the block (as --threshold builds it).

Variants: both split modes x both leaf rules; tie-aware leaves and "defer" off only with the
balanced split (pruned so the whole nested cross-validation stays within seconds). Where
interpolation would insert values (`interpolable`: nearly every real table), the exact tree of
the interpolated training map (INTERPOLATED_EXACT; core.maps.interpolated: between measured P
and m, the method of least interpolated time), which the selection prefers
(core.evaluate.model_selection), and of the plain variants only the balanced split's, tie-blind,
with "defer": the others are there for the rare table the preferred tree loses on, and cost
the rest of `build --recommend`'s 3 s (the interpolated map is 4-16x the cells).
Beside them the trivial candidates: "defer to the MPI" everywhere (the MPI's default; where the
map has algorithm-0 rows) and the best single fixed method of the training map. Leaf rules:
majority and penalty (robust without --max-penalty orders methods as penalty does); tie-aware
variants only where the map has tie sets wider than the best; defer off only where it is on.
A candidate's choice at held-out cells is its deciding node on the path from the exact tree's
leaf to the root: the topmost turned-into-a-leaf node, else the leaf. Nothing recurses. A
variant whose only candidate is its tie-blind exact tree (the interpolated one) answers with
its map's best method at the cell, which is what that tree answers: it is built only where its
leaves are counted or it is the one recommended.
"""
import itertools
from dataclasses import dataclass
from typing import Optional

import numpy as np

from collsel.core.trees import pruning, tree
from collsel.core.maps import interpolated
from collsel.core.maps.decision_map import DEFER, MapSettings, interpolated_map
from collsel.core.evaluate.fold_maps import FoldGrid, query_cells
from collsel.core.trees.tree import LEAF, UNDEFINED, TreeArrays

ALPHAS = tuple(np.concatenate(([0.0], np.logspace(-3, 1, 13))).tolist())
DEPTHS = (1, 2, 3, 4, 5, 6)
THRESHOLDS = (60.0, 80.0, 90.0, 95.0)
LEAF_RULES = ("majority", "penalty")
PLAIN = (True, False)      # the training map's key (defer, interp) of the plain map with defer


@dataclass(frozen=True)
class Candidate:
    limit: str               # exact, alpha, depth, threshold; or defer, fixed (one leaf)
    value: Optional[float] = None
    split: Optional[str] = None
    leaf: Optional[str] = None
    ties: bool = False
    defer: bool = True
    interp: bool = False     # built on the interpolated map (core.maps.interpolated)

    @property
    def variant(self) -> tuple:
        return (self.split, self.leaf, self.ties, self.defer, self.interp)

    def to_json(self) -> dict:
        """The candidate's fields as stats.json records them (`chosen.fields`,
        `picked_fields`)."""
        return {"limit": self.limit, "value": self.value, "split": self.split,
                "leaf": self.leaf, "ties": self.ties, "defer": self.defer,
                "interp": self.interp}

    @classmethod
    def from_json(cls, fields: dict) -> "Candidate":
        return cls(**fields)

    def label(self) -> str:
        if self.limit == "defer":
            return "defer to the MPI everywhere"
        if self.limit == "fixed":
            return "best single fixed method"
        limit = ("exact" if self.limit == "exact" else f"pruned alpha={self.value:g}"
                 if self.limit == "alpha" else f"{self.limit} {self.value:g}")
        return (f"{limit}, {self.split} split, {self.leaf} leaves"
                + (", ties" if self.ties else "") + ("" if self.defer else ", no defer")
                + (", interpolated" if self.interp else ""))

    def options(self) -> tree.BuildOptions:
        """The BuildOptions of the candidate's variant (its limit is a pruning of them)."""
        return tree.BuildOptions(self.split or "balanced", self.leaf or "majority",
                                 ties=self.ties)


def grid(dmap) -> list[Candidate]:
    """Every candidate for a map, trivial ones first."""
    out = [Candidate("defer")] if DEFER in dmap.methods else []
    out.append(Candidate("fixed"))
    interp = interpolable(dmap)
    has_ties = bool((dmap.tied.sum(axis=-1) > 1).any())
    splits, ties_options, defer_options = (
        (("balanced",), (False,), (True,)) if interp else
        (tree.SPLITS, (False, True) if has_ties else (False,),
         (True, False) if DEFER in dmap.methods else (True,)))
    for split, leaf, ties, defer in itertools.product(splits, LEAF_RULES, ties_options,
                                                      defer_options):
        if split == "replicate" and (ties or not defer):
            continue        # pruned for time: tie-aware and no-defer trees split balanced
        limits = ([("exact", None)] + [("alpha", a) for a in ALPHAS]
                  + [("depth", d) for d in DEPTHS] + [("threshold", t) for t in THRESHOLDS])
        out += [Candidate(k, v, split, leaf, ties, defer) for k, v in limits]
    if interp:
        out.append(INTERPOLATED_EXACT)
    return out


# the exact tree of the interpolated map (model_selection's preferred candidate)
INTERPOLATED_EXACT = Candidate("exact", None, "balanced", "majority", interp=True)


def interpolable(dmap) -> bool:
    """Interpolation would insert values into `dmap`: some gap of P or m holds an integer and
    the map has none inserted yet (inserting into inserted values would insert more)."""
    return not dmap.inserted and any(interpolated.virtual_values(a.values)
                                     for a in dmap.axes[:2])


class _Shape:
    """One exact tree (split mode, ties, defer) on one training map, with the block method of
    each leaf rule its variants use (core.trees.tree.build_with_rule_blocks), and what those
    variants share, computed once: node parents, every node's in-sample block cost R per rule, and
    the root-to-leaf path of the cells asked."""

    def __init__(self, dmap, built, rules):
        self.full, self.blocks, self.share = built
        self.parent = pruning.parents(self.full)
        r = pruning.block_costs(dmap, self.full, np.stack([self.blocks[x] for x in rules], 1),
                                self.parent)
        self.block_cost = {x: r[:, i] for i, x in enumerate(rules)}

    def paths(self, cells):
        """(leaf, path): the leaf deciding each cell and its path, (cells, depth + 1) node
        indexes by depth, node_count past the leaf."""
        f = self.full
        leaf = f.leaf_of_cells(cells)
        path = np.full((leaf.size, int(f.depth.max()) + 1), f.node_count, dtype=np.int64)
        node, rows = leaf.astype(np.int64), np.arange(leaf.size)
        while node.size:
            path[rows, f.depth[node]] = node
            up = self.parent[node] >= 0
            node, rows = self.parent[node][up], rows[up]
        return leaf, path


class _Variant:
    """One variant's candidates on one training map: the nodes each turns into leaves of the
    shape's exact tree."""

    def __init__(self, shape, rule, cands):
        self.shape, self.block = shape, shape.blocks[rule]
        f = shape.full
        internal = f.first_child != LEAF
        masks = []
        alphas = [c.value for c in cands if c.limit == "alpha"]
        optimal = (iter(self._alpha_masks(shape.block_cost[rule], np.asarray(alphas, float)).T)
                   if alphas else None)
        for c in cands:
            if c.limit == "alpha":
                masks.append(next(optimal))
            elif c.limit == "depth":
                masks.append(internal & (f.depth == c.value))
            elif c.limit == "threshold":
                masks.append(internal & (shape.share * 100 >= c.value))
            else:
                masks.append(np.zeros(f.node_count, dtype=bool))
        self.masks = np.array(masks, dtype=bool).reshape(len(cands), f.node_count)

    def _alpha_masks(self, r, alphas):
        """(nodes, alphas): nodes that are leaves of the smallest subtree minimising
        R + alpha x leaves, bottom-up over the levels for every alpha at once."""
        f, parent = self.shape.full, self.shape.parent
        as_leaf = r[:, None] + alphas[None, :]
        below = np.zeros_like(as_leaf)
        collapse = np.zeros(as_leaf.shape, dtype=bool)
        best = as_leaf.copy()
        is_leaf = f.first_child == LEAF
        for d in range(int(f.depth.max()), -1, -1):
            at = np.flatnonzero(f.depth == d)
            inner = at[~is_leaf[at]]
            collapse[inner] = as_leaf[inner] <= below[inner] + pruning.TIE
            best[inner] = np.minimum(as_leaf[inner], below[inner])
            if d:
                np.add.at(below, parent[at], best[at])
        return collapse

    def choices(self, leaf, path):
        """(candidates, cells) method index each candidate chooses at the cells of `leaf` and
        `path` (_Shape.paths)."""
        f = self.shape.full
        padded = np.concatenate([self.masks, np.zeros((len(self.masks), 1), bool)], axis=1)
        hit = padded[:, path]                                   # (cands, cells, depth+1)
        first = np.argmax(hit, axis=2)
        deciding = path[np.arange(leaf.size)[None, :], first]
        return np.where(hit.any(axis=2), self.block[np.minimum(deciding, f.node_count - 1)],
                        f.method[leaf][None, :])

    def leaves(self):
        """Leaf count of every candidate's tree."""
        f, parent = self.shape.full, self.shape.parent
        hidden = np.zeros(self.masks.shape, dtype=bool)
        for d in range(1, int(f.depth.max()) + 1):
            at = np.flatnonzero(f.depth == d)
            p = parent[at]
            hidden[:, at] = hidden[:, p] | self.masks[:, p]
        return (((f.first_child == LEAF)[None, :] | self.masks) & ~hidden).sum(axis=1)

    def tree(self, k):
        return pruning.prune(self.shape.full, self.masks[k], self.block)


class Trained:
    """Every candidate on one training set: `maps[(defer, interp)]` the training map with or
    without "defer", interpolated or not (maps_for)."""

    def __init__(self, maps, candidates):
        self.maps, self.candidates = maps, candidates
        self.groups = {}
        for i, c in enumerate(candidates):
            if c.split is not None:
                self.groups.setdefault(c.variant, []).append(i)
        self._variants, self._shapes = {}, {}
        base = maps[PLAIN]
        self.fixed = pruning.best_fixed(base)

    @staticmethod
    def _shape_of(key):
        split, _, ties, defer, interp = key
        return split, ties, defer, interp

    def shape(self, shape):
        """The _Shape (split, ties, defer, interp): one tree pass for every leaf rule of its
        variants."""
        if shape not in self._shapes:
            split, ties, defer, interp = shape
            rules = tuple(sorted({k[1] for k in self.groups if self._shape_of(k) == shape}))
            dmap = self.maps[(defer, interp)]
            built = tree.build_with_rule_blocks(
                dmap, tree.BuildOptions(split, rules[0], ties=ties), rules)
            self._shapes[shape] = _Shape(dmap, built, rules)
        return self._shapes[shape]

    def variant(self, key):
        if key not in self._variants:
            self._variants[key] = _Variant(self.shape(self._shape_of(key)), key[1],
                                           [self.candidates[i] for i in self.groups[key]])
        return self._variants[key]

    def choices(self, held):
        """(candidates, cells) method index of every candidate at the held-out cells."""
        out = np.empty((len(self.candidates), len(held)), dtype=np.int64)
        for i, c in enumerate(self.candidates):
            if c.limit == "defer":
                out[i] = self.maps[PLAIN].methods.index(DEFER)
            elif c.limit == "fixed":
                out[i] = self.fixed
        cells = {d: query_cells(m, held) for d, m in self.maps.items()}
        paths = {}
        for key, members in self.groups.items():
            shape = self._shape_of(key)
            if _map_itself(key, [self.candidates[i] for i in members]):
                out[members] = self.maps[shape[2:]].best[tuple(cells[shape[2:]])]
                continue
            if shape not in paths:
                paths[shape] = self.shape(shape).paths(cells[shape[2:]])
            out[members] = self.variant(key).choices(*paths[shape])
        return out

    def costs(self, held):
        """(candidates, cells) penalty % of every candidate at the held-out cells: WORST where
        its choice was not measured (core.maps.cell_cost), and that mask."""
        choices = self.choices(held)
        rows = np.arange(len(held))[None, :]
        return held.cost[rows, choices], held.unscorable[rows, choices]

    def leaves(self):
        out = np.ones(len(self.candidates), dtype=np.int64)
        for key, members in self.groups.items():
            out[members] = self.variant(key).leaves()
        return out

    def tree(self, i):
        """Candidate i's TreeArrays on this training set."""
        c = self.candidates[i]
        if c.limit in ("defer", "fixed"):
            m = self.maps[PLAIN]
            method = m.methods.index(DEFER) if c.limit == "defer" else self.fixed
            n = len(m.axes)
            return TreeArrays(np.array([LEAF], np.int32), np.full((1, n), UNDEFINED, np.int32),
                              np.array([method], np.int32), np.zeros(1, np.int32), m.family)
        members = self.groups[c.variant]
        t = self.variant(c.variant).tree(members.index(i))
        t.family = self.maps[PLAIN].family
        return t

    def map_of(self, i):
        """The map candidate i's tree is built on (its split boundaries are that map's cells)."""
        c = self.candidates[i]
        return self.maps[PLAIN if c.limit in ("defer", "fixed") else (c.defer, c.interp)]


def _map_itself(variant, members) -> bool:
    """The variant's candidates are its exact tree alone, tie-blind: its leaves are the blocks
    where the map's best method is uniform (core.trees.tree), so it answers every cell with the
    map's best and its choices need no tree built (on the interpolated map, most of a nested
    fold's time)."""
    return not variant[2] and all(c.limit == "exact" for c in members)


def maps_for(grid_, removal, candidates) -> dict:
    """The training maps a removal needs, by (defer, interp): with "defer", without it when a
    candidate asks, and interpolated when a candidate asks."""
    return with_interpolated(measured_maps(grid_, removal, candidates), candidates)


def measured_maps(grid_, removal, candidates) -> dict:
    """maps_for's maps but the interpolated one: every map it holds is a function of these
    (core.evaluate.model_selection keys its shared trees by them, and interpolates on a miss
    only, most of a training set's time)."""
    maps = {PLAIN: grid_.training(removal, True)}
    if any(not c.defer for c in candidates):
        maps[(False, False)] = grid_.training(removal, False)
    return maps


def with_interpolated(maps, candidates) -> dict:
    """measured_maps' `maps` with the interpolated map when a candidate asks."""
    if any(c.interp for c in candidates):
        maps = {**maps, (True, True): interpolated_map(maps[PLAIN])}
    return maps


def build(candidate, dmap) -> tuple[TreeArrays, object]:
    """(tree, map): candidate's tree on any map (e.g. a training map of
    core.evaluate.out_of_sample's folds), and the map its boundaries are cells of (`dmap`, or
    the interpolated map of an interpolated candidate)."""
    if candidate.limit == "defer" and DEFER not in dmap.methods:
        candidate = Candidate("fixed")
    maps = {PLAIN: dmap, (False, False): dmap}
    if not candidate.defer and DEFER in dmap.methods:
        # sliced and mapped as `dmap` was (its inserted values made again, if it has them)
        settings = MapSettings(interpolate=dmap.inserted)
        maps[(False, False)] = FoldGrid(dmap, settings=settings).training((), False)
    if candidate.interp:
        maps[(True, True)] = interpolated_map(dmap)
    trained = Trained(maps, [candidate])
    return trained.tree(0), trained.map_of(0)
