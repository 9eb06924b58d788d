"""DecisionMap -> TreeArrays: a quadtree (2 axes) or octree (3 axes) over the map, and its query.

TreeArrays is the one intermediate representation every emitter reads; it knows nothing about C,
and this module knows nothing about emitted files. Layout, as in scikit-learn's `Tree`:

- node i's data sits at index i of every array; node 0 is the root; depth[0] == 0;
- the children of node i are contiguous, starting at first_child[i] > i (breadth-first order);
  first_child[i] == LEAF for a leaf;
- split[i, d] is the boundary on axis d where node i splits: cells with index < split[i, d] go to
  the low half. UNDEFINED where node i does not split axis d (and for leaves). A node has
  2 ** (number of split axes) children, ordered by one bit per split axis, axis 0 the most
  significant bit, 0 = low half: for (comm_size, msg_size) that is the paper's NW, NE, SW, SE;
- method[i] is the method index of a leaf, UNDEFINED for internal nodes.

Boundaries are cell indexes of the DecisionMap's axes: boundary k means "value >= axis.cuts[k-1]".
In `replicate` mode a boundary may equal a box edge, leaving an empty child (no value reaches it).

Construction runs level by level over the whole grid with NumPy; nothing recurses.

Leaves. A block whose cells all have the same best method is a leaf of that method. With the
`ties` option (`--ties`, implied by `--tolerance`), a block is also a leaf when one method is in
the tie set (core.maps.ties) of every measured cell of the block: the one of those with the least
mean penalty. "Exact" then means exact up to ties. This is greedy top-down (each block stops as
soon as one method covers it), so the tree is smaller than the exact one but not guaranteed to be
the smallest exact-up-to-ties tree. A block cut off by a limit gets its method from the leaf rule:

- majority: the most frequent best method of the block's cells (the paper);
- penalty: the least summed relative penalty over the block's measured cells;
- robust: the least mean penalty (the same order as the sum), under `max_penalty` when given:
  no measured cell of the block may pay more than the cap; a block where no method meets the
  cap splits further, and at the depth limit takes the method with the least maximum penalty
  (core.trees.penalty.tree_stats counts the cells and leaves over the cap).

Every rule scores a method on the block's measured cells at DecisionMap.scored_times (imputed
where unmeasured) and only considers methods scorable on all of them ("defer to the MPI" only
where the baseline was measured); on complete tables without baseline rows every method is
measured in every cell, so imputation changes nothing there.
"""
import functools
from dataclasses import dataclass, replace

import numpy as np

from collsel.errors import InputError

LEAF = -1
UNDEFINED = -2
SPLITS = ("replicate", "balanced")
LEAF_RULES = ("majority", "penalty", "robust")
COMPARED_LEAF_RULES = ("majority", "penalty")   # the rules `collsel stats` and the report compare


@dataclass
class TreeArrays:
    first_child: np.ndarray  # int32 (n,)
    split: np.ndarray        # int32 (n, n_axes)
    method: np.ndarray       # int32 (n,)
    depth: np.ndarray        # int32 (n,)
    family: str = "openmpi"  # whose algorithm ids the methods hold (the map's)

    @property
    def node_count(self):
        return len(self.first_child)

    @property
    def n_axes(self):
        return self.split.shape[1]

    def is_leaf(self):
        return self.first_child == LEAF

    def leaf_of_cells(self, cells):
        """Leaf deciding each point, given its cell index on every axis (arrays of equal length)."""
        cells = [np.asarray(c, dtype=np.int64) for c in cells]
        node = np.zeros(len(cells[0]), dtype=np.int64)
        active = np.flatnonzero(self.first_child[node] != LEAF)
        while active.size:
            nodes = node[active]
            offset = np.zeros(active.size, dtype=np.int64)
            for d, cell in enumerate(cells):
                s = self.split[nodes, d]
                splits = s != UNDEFINED
                offset = np.where(splits, 2 * offset + (cell[active] >= s), offset)
            node[active] = self.first_child[nodes] + offset
            active = active[self.first_child[node[active]] != LEAF]
        return node

    def leaf_grid(self, shape):
        """The leaf deciding every cell of a grid of `shape`: the one tree -> cell grid conversion
        (a tree is constant on each cell, since every split falls on a cell boundary)."""
        cells = np.indices(shape).reshape(len(shape), -1)
        return self.leaf_of_cells(cells).reshape(shape)

    def method_grid(self, shape):
        """The method index deciding every cell of a grid of `shape`."""
        return self.method[self.leaf_grid(shape)]


def split_point(lo, hi):
    """The one split rule: a box side [lo, hi) of two or more cells splits at lo + ceil((hi-lo)/2);
    narrower sides do not split. Returns (mid, splits); works elementwise on arrays."""
    return lo + (hi - lo + 1) // 2, hi - lo >= 2


def replicated_boundary(mid, n, size):
    """Replicate mode: the boundary, in original cells, of builder boundary `mid` (>= 1) when n
    cells are spread over `size` builder cells (builder cell b holds original cell b * n // size;
    an original cell is decided by its first copy)."""
    return ((mid - 1) * n) // size + 1


def replicated_size(shape):
    """Builder cells per axis in replicate mode: the smallest power of two >= every axis."""
    return 1 << max(0, int(np.ceil(np.log2(max(shape)))))


@dataclass
class BuildOptions:
    split: str = "balanced"
    leaf: str = "majority"
    max_depth: object = None   # int or None
    threshold: object = None   # percent in (0, 100] or None
    max_penalty: object = None  # percent >= 0 or None: robust leaves' cap on any cell's penalty
    ties: bool = False          # a block tied to one method on every measured cell is a leaf

    def check(self):
        if self.split not in SPLITS:
            raise InputError(f"--split must be one of {', '.join(SPLITS)}, not '{self.split}'")
        if self.leaf not in LEAF_RULES:
            raise InputError(f"--leaf must be one of {', '.join(LEAF_RULES)}, not '{self.leaf}'")
        if self.max_depth is not None and not (isinstance(self.max_depth, int)
                                               and 0 <= self.max_depth <= 64):
            raise InputError(f"--max-depth must be an integer in [0, 64], not {self.max_depth}")
        if self.threshold is not None and not 0 < self.threshold <= 100:
            raise InputError(f"--threshold must be a percentage in (0, 100], not {self.threshold}")
        if self.max_penalty is not None:
            if self.leaf != "robust":
                raise InputError("--max-penalty needs --leaf robust")
            if not 0 <= self.max_penalty < float("inf"):
                raise InputError(f"--max-penalty must be a percentage >= 0, not "
                                 f"{self.max_penalty}")
        return self

    def as_dict(self):
        """The options as tree.json's `build` records them (max_penalty only when set)."""
        out = {"split": self.split, "leaf": self.leaf, "max_depth": self.max_depth,
               "threshold": self.threshold}
        if self.max_penalty is not None:
            out["max_penalty"] = self.max_penalty
        if self.ties:
            out["ties"] = True
        return out


def limit_label(kind, value):
    """The one name of a limit in tables and reports: 'depth 3', '90%' or 'exact'."""
    if kind == "depth":
        return f"depth {value}"
    return f"{value:g}%" if kind == "threshold" else "exact"


def limit_flag(kind, value):
    """The `collsel build` flag that sets a limit ('' for the exact tree)."""
    return {"depth": f"--max-depth {value}", "threshold": f"--threshold {value:g}"}.get(kind, "")


def limit_family(depths, thresholds):
    """Every tree the stats table and the report compare, in their order: both split modes x
    both leaf rules x (max depth 1..depths, each threshold, exact). Yields (split, leaf, limit
    kind, limit value, BuildOptions)."""
    limits = ([("depth", d) for d in range(1, depths + 1)]
              + [("threshold", th) for th in thresholds] + [("exact", None)])
    for split in SPLITS:
        for leaf in COMPARED_LEAF_RULES:
            for kind, value in limits:
                yield split, leaf, kind, value, BuildOptions(
                    split, leaf, value if kind == "depth" else None,
                    value if kind == "threshold" else None)


class _Grid:
    """The grid the builder splits: the map itself (balanced) or the map replicated to 2^k."""

    def __init__(self, dmap, split):
        shape = dmap.shape
        if split == "replicate":
            size = replicated_size(shape)
            self.owner = [np.arange(size) * n // size for n in shape]
            self.to_original = [np.concatenate(([0], replicated_boundary(np.arange(1, size + 1),
                                                                         n, size)))
                                for n in shape]
            self.colors = dmap.best[np.ix_(*self.owner)]
        else:
            self.owner = [np.arange(n) for n in shape]
            self.to_original = [np.arange(n + 1) for n in shape]
            self.colors = dmap.best
        self.shape = self.colors.shape


class _Levels:
    """What every tree of one map and split mode shares, computed once and kept on the map
    (model selection builds about ten variants on each of ~60 training maps): the grid, each
    level's block boundaries and their least and greatest best method, and the summed-area
    table of best-method counts."""

    def __init__(self, dmap, split):
        self.grid = _Grid(dmap, split)
        self.n_methods = len(dmap.methods)
        self._levels, self._counts = [], None

    @staticmethod
    def of(dmap, split):
        cache = dmap.cache.setdefault("tree_levels", {})
        if split not in cache:
            cache[split] = _Levels(dmap, split)
        return cache[split]

    def level(self, k):
        """(bounds, halves, least, greatest) of level k."""
        while len(self._levels) <= k:
            bounds = ([h[0] for h in self._levels[-1][1]] if self._levels
                      else [np.array([0, n]) for n in self.grid.shape])
            self._levels.append((bounds, [_halve(b) for b in bounds],
                                 _block_reduce(np.minimum, self.grid.colors, bounds),
                                 _block_reduce(np.maximum, self.grid.colors, bounds)))
        return self._levels[k]

    def counts(self):
        if self._counts is None:
            onehot = (self.grid.colors[..., None] == np.arange(self.n_methods)).astype(np.int32)
            self._counts = _LeafChooser._sat(onehot)
        return self._counts


def _halve(bounds):
    """Next level's boundaries per axis: each interval of 2+ cells splits at its middle."""
    lo, hi = bounds[:-1], bounds[1:]
    mid, splits = split_point(lo, hi)
    new = np.union1d(bounds, mid[splits])
    return new, np.searchsorted(new, lo), splits, mid


def _block_reduce(ufunc, grid, bounds):
    out = grid
    for d, b in enumerate(bounds):
        out = ufunc.reduceat(out, b[:-1], axis=d)
    return out


class _LeafChooser:
    """Leaf method of blocks, from summed-area tables over the map (built on demand)."""

    def __init__(self, dmap, levels, options):
        self.dmap, self.levels, self.grid, self.rule = dmap, levels, levels.grid, options.leaf
        self.cap = options.max_penalty
        self.defers = dmap.defer_index is not None     # asked per level: a list search each
        self._relative = None
        self.ties = options.ties and bool((dmap.tied.sum(axis=-1) > 1).any())

    @staticmethod
    def _sat(values, trailing=1):
        """Summed-area table over all but the `trailing` last axes, zero-padded in front (one
        array, summed in place: model selection makes two per training map)."""
        lead = values.ndim - trailing
        dtype = np.cumsum(values[(slice(0, 1),) * values.ndim]).dtype   # cumsum's own
        sat = np.zeros(tuple(n + 1 for n in values.shape[:lead]) + values.shape[lead:], dtype)
        inner = sat[(slice(1, None),) * lead]
        np.cumsum(values, axis=0, out=inner)
        for d in range(1, lead):
            np.cumsum(inner, axis=d, out=inner)
        return sat

    @staticmethod
    def _box_sum(sat, lo, hi):
        """Sums over boxes [lo, hi) (arrays (k, D)) by inclusion-exclusion over the 2^D corners."""
        n_axes = lo.shape[1]
        total = 0
        for corner in range(1 << n_axes):
            idx, sign = [], 1
            for d in range(n_axes):
                high = corner >> (n_axes - 1 - d) & 1
                idx.append(hi[:, d] if high else lo[:, d])
                sign = sign if high else -sign
            total = total + sign * sat[tuple(idx)]
        return total

    def counts(self, lo, hi):
        """Cells of each method in builder boxes [lo, hi): shape (k, n_methods)."""
        return self._box_sum(self.levels.counts(), lo, hi)

    def original(self, lo, hi):
        """Builder boxes as boxes of the map's own cells."""
        conv = lambda b: np.stack([self.grid.to_original[d][b[:, d]]  # noqa: E731
                                   for d in range(b.shape[1])], 1)
        return conv(lo), conv(hi)

    def relative_penalty(self):
        """Per cell and method, scored time / best - 1 (NaN where not scorable)."""
        if self._relative is None:
            self._relative = self.dmap.scored_times() / self.dmap.best_time[..., None] - 1.0
        return self._relative

    def scores(self, lo, hi):
        """Per box and method: summed relative penalty, whether scorable on every measured cell,
        whether tied on every measured cell, whether within the cap on every measured cell."""
        # the same for every tree of the map and cap: kept on the map (model selection builds
        # a dozen variants on each training map)
        cache = self.dmap.cache.setdefault("score_tables", {})
        if self.cap not in cache:
            cache[self.cap] = self._score_tables()
        olo, ohi = self.original(lo, hi)
        summed, has, cells, tied, over = np.moveaxis(self._box_sum(cache[self.cap], olo, ohi),
                                                     -1, 0)
        valid = (has == cells) & (cells > 0)
        return summed, valid, valid & (tied == cells), valid & (over == 0)

    def _score_tables(self):
        dm = self.dmap
        rel = self.relative_penalty()
        present = np.isfinite(rel)
        over = present & (100.0 * rel > (np.inf if self.cap is None else self.cap))
        # one summed-area table of the five per-cell quantities (counts exact in float64):
        # a box's five sums in one gather per corner
        return self._sat(np.stack(np.broadcast_arrays(
            np.where(present, rel, 0.0), present, dm.measured[..., None], dm.tied, over),
            axis=-1).astype(np.float64), trailing=2)

    def tie_leaves(self, sums, rows):
        """(is a leaf, method) per box `rows` of a level's _BoxSums: some method is tied on
        every measured cell; the one with the least summed penalty."""
        summed, _, all_tied, _ = (a[rows] for a in sums.scores)
        return all_tied.any(axis=1), np.argmin(np.where(all_tied, summed, np.inf), axis=1)

    def choose(self, sums, rows, final):
        """(method, meets the cap) per box `rows` of a level's _BoxSums; `final` boxes cannot
        split any more."""
        counts = sums.counts[rows]
        ok = np.ones(len(rows), dtype=bool)
        if self.rule == "majority" and not self.defers:
            return np.argmax(counts, axis=1), ok
        summed, valid, _, capped = (a[rows] for a in sums.scores)
        majority = np.argmax(np.where(valid, counts, -1), axis=1)
        if self.rule == "majority":
            return np.where(valid.any(axis=1), majority, np.argmax(counts, axis=1)), ok
        eligible = capped if self.rule == "robust" else valid
        best = np.argmin(np.where(eligible, summed, np.inf), axis=1)
        ok = eligible.any(axis=1) | ~valid.any(axis=1)
        method = np.where(valid.any(axis=1), best, majority)
        over = np.flatnonzero(~ok)
        if over.size:
            method[over] = self._least_max(sums.lo[rows[over]], sums.hi[rows[over]],
                                           valid[over])
        return method, ok | final

    def _least_max(self, lo, hi, valid):
        """Per box, the scorable method with the least maximum penalty (for boxes over the cap,
        which hold measured cells: `valid` has a True in every row)."""
        rel = self.relative_penalty()
        olo, ohi = self.original(lo, hi)
        out = np.zeros(len(lo), dtype=np.int64)
        for k in range(len(lo)):
            box = rel[tuple(slice(a, b) for a, b in zip(olo[k], ohi[k]))]
            worst = np.nanmax(np.where(np.isfinite(box), box, -np.inf).reshape(-1, rel.shape[-1]),
                              axis=0)
            out[k] = np.argmin(np.where(valid[k], worst, np.inf))
        return out


class _BoxSums:
    """The sums the leaf rules read over every box of one level, each taken once (one gather
    per corner) whichever rules and steps ask: tie leaves, the threshold, the leaf methods
    and, under model selection, every cut block's method under two rules. On the small maps
    model selection builds hundreds of trees from, NumPy's per-call cost is most of the time."""

    def __init__(self, chooser, lo, hi):
        self._chooser, self.lo, self.hi = chooser, lo, hi

    @functools.cached_property
    def counts(self):
        """Cells of each method per box: (boxes, methods)."""
        return self._chooser.counts(self.lo, self.hi)

    @functools.cached_property
    def scores(self):
        """_LeafChooser.scores per box: (summed, valid, all tied, capped)."""
        return self._chooser.scores(self.lo, self.hi)


def build_tree(dmap, options=None):
    """The quadtree/octree of a decision map under the options' limits (BuildOptions: split,
    leaf rule, max_depth, threshold, and the keyword fields max_penalty (robust leaves' cap,
    percent) and ties (tie-aware leaves); see the module docstring)."""
    return build_with_blocks(dmap, options)[0]


def build_with_blocks(dmap, options=None):
    """(tree, block_method, block_share): build_tree's tree, and per node the method the leaf
    rule gives its block were it cut there (a leaf's own method) and the share of its cells
    the block's most frequent best method holds (1 for a leaf). Every tree of the same split
    mode, leaf rule and ties cut by a depth or a threshold limit, or pruned, is this tree
    with some nodes turned into leaves of their block method (core.evaluate.candidates)."""
    options = (options or BuildOptions()).check()
    t, blocks, share = build_with_rule_blocks(dmap, options, (options.leaf,))
    return t, blocks[options.leaf], share


def build_with_rule_blocks(dmap, options, rules):
    """build_with_blocks with the block method of each leaf rule in `rules` ({rule: array}).
    Besides options.leaf, only for trees no limit cuts (no --max-depth, --threshold, robust
    cap): a leaf rule then names the blocks' methods without shaping the tree (leaves are the
    uniform blocks, or tie leaves), so one pass serves every rule (core.evaluate.candidates builds
    the majority and penalty variants of each training map this way)."""
    options = options.check()
    if set(rules) - {options.leaf} and (options.max_depth is not None
                                        or options.threshold is not None
                                        or options.leaf == "robust"
                                        or options.max_penalty is not None):
        raise ValueError("other leaf rules' blocks need a tree no limit cuts")
    levels = _Levels.of(dmap, options.split)
    grid = levels.grid
    n_axes = len(grid.shape)
    chooser = _LeafChooser(dmap, levels, options)
    choosers = {rule: chooser if rule == options.leaf else
                _LeafChooser(dmap, levels, replace(options, leaf=rule)) for rule in rules}
    # per level: each active node's interval index on every axis
    node_iv = np.zeros((1, n_axes), dtype=np.int64)
    first_child, split, method, depth = [], [], [], []
    block_method, block_share = {rule: [] for rule in rules}, []
    next_id, level = 1, 0
    while node_iv.shape[0]:
        bounds, halves, least, greatest = levels.level(level)
        iv = tuple(node_iv[:, d] for d in range(n_axes))
        lo = np.stack([bounds[d][node_iv[:, d]] for d in range(n_axes)], 1)
        hi = np.stack([bounds[d][node_iv[:, d] + 1] for d in range(n_axes)], 1)
        low = least[iv]
        uniform = low == greatest[iv]
        leaf_method = np.where(uniform, low, UNDEFINED)
        sums = _BoxSums(chooser, lo, hi)
        if chooser.ties and not uniform.all():
            sub = np.flatnonzero(~uniform)
            tie_leaf, tie_method = chooser.tie_leaves(sums, sub)
            uniform[sub[tie_leaf]] = True
            leaf_method[sub[tie_leaf]] = tie_method[tie_leaf]
        leaf = uniform.copy()
        limited = ~uniform
        final = options.max_depth is not None and level >= options.max_depth
        if final:
            leaf |= limited
        elif options.threshold is not None and limited.any():
            sub = np.flatnonzero(limited)
            counts = sums.counts[sub]
            share = counts.max(axis=1) / counts.sum(axis=1)
            leaf[sub[share * 100 >= options.threshold]] = True
        pick = np.flatnonzero(leaf & limited)
        if pick.size:
            leaf_method[pick], kept = chooser.choose(sums, pick, final)
            leaf[pick[~kept]] = False            # over the cap: split further
            leaf_method[pick[~kept]] = UNDEFINED

        cut = np.flatnonzero(~leaf)
        block_share.append(np.ones(len(leaf)))
        for rule, blocks in block_method.items():
            blocks.append(leaf_method.copy())
            if cut.size:
                blocks[-1][cut] = choosers[rule].choose(sums, cut, True)[0]
        if cut.size:
            counts = sums.counts[cut]
            block_share[-1][cut] = counts.max(axis=1) / counts.sum(axis=1)
        splits_axis = np.stack([halves[d][2][node_iv[:, d]] for d in range(n_axes)], 1)
        splitting = ~leaf
        n_children = np.where(splitting, 1 << splits_axis.sum(axis=1), 0)
        starts = next_id + np.concatenate(([0], np.cumsum(n_children)[:-1]))
        first_child.append(np.where(splitting, starts, LEAF))
        boundary = np.stack([grid.to_original[d][halves[d][3][node_iv[:, d]]]
                             for d in range(n_axes)], 1)
        split.append(np.where(splitting[:, None] & splits_axis, boundary, UNDEFINED))
        method.append(leaf_method)
        depth.append(np.full(len(leaf), level))
        next_id += int(n_children.sum())

        # children: one row per (parent, child rank), bits over the parent's split axes
        parent = np.repeat(np.arange(len(leaf)), n_children)
        first_of_parent = np.concatenate(([0], np.cumsum(n_children)[:-1]))
        rank = np.arange(len(parent)) - np.repeat(first_of_parent, n_children)
        child_iv = np.empty((len(parent), n_axes), dtype=np.int64)
        shift = np.zeros(len(parent), dtype=np.int64)
        for d in reversed(range(n_axes)):
            s = splits_axis[parent, d]
            bit = np.where(s, (rank >> shift) & 1, 0)
            shift += s
            child_iv[:, d] = halves[d][1][node_iv[parent, d]] + bit
        node_iv = child_iv
        level += 1
    cat = lambda parts: np.concatenate(parts).astype(np.int32)  # noqa: E731
    return (TreeArrays(cat(first_child), np.concatenate(split).astype(np.int32),
                       cat(method), cat(depth), dmap.family),
            {rule: np.concatenate(b).astype(np.int64) for rule, b in block_method.items()},
            np.concatenate(block_share))


def cells_of_values(axes, values):
    """Cell index on each axis (core.maps.decision_map.Axis.cells_of) of query values (lists or
    arrays, one per axis)."""
    return [axis.cells_of(v) for axis, v in zip(axes, values)]
