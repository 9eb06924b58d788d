"""Cost-complexity pruning (CART's weakest link) over a TreeArrays tree.

From the full tree (no depth limit), each step collapses the internal node(s) t whose collapse
costs least per leaf removed:

    alpha(t) = (R(t) - R(T_t)) / (leaves(T_t) - 1)

R(t) is t's block scored with t as one leaf, R(T_t) the block scored by t's current subtree.
R is the mean penalty over the map's measured cells, in percent (the total penalty divided by
the number of measured cells), so alphas of maps with different cell counts (the training folds
of out-of-sample scoring) are comparable. Nodes of equal least alpha collapse together, as in
CART; the path ends at the root alone.

The method a collapsed node gets is the builder's own leaf rule for its block: the tree built
with max depth d has, at every node of depth d, the method the leaf rule gives that block, and
its nodes of depth <= d are the full tree's (breadth-first numbering; checked). So the path
needs depth+1 builds through the public builder and stays right whatever the leaf rule is.

Cells are scored by core.maps.cell_cost; a choice never measured in a cell costs that cell's worst
measured penalty (WORST: it is never free).
Level passes over the node arrays; nothing recurses.
"""
from dataclasses import dataclass

import numpy as np

from collsel.core.maps import cell_cost
from collsel.core.trees.tree import LEAF, UNDEFINED, TreeArrays

TIE = 1e-12        # alphas this close are one step (floating-point sums of the same penalties)


def cell_costs(dmap):
    """Penalty (%) of every method in every cell, shape (cells, methods), cells in row-major
    grid order, by core.maps.cell_cost (a method not measured in a cell costs the cell's worst
    measured penalty: WORST); cells without a reference (nothing forced measured) cost 0 for
    every method."""
    costs = cell_cost.method_costs(dmap.times, dmap.defer_index, cell_cost.WORST)
    costs = costs.reshape(-1, len(dmap.methods))
    return np.where(np.isfinite(costs), costs, 0.0)


def best_fixed(dmap):
    """Index of the best single fixed method of a map: the forced method (never "defer") of
    least mean cell_costs over its cells (the protocol's "best fixed method", chosen on the
    training data only)."""
    mean = cell_costs(dmap).mean(axis=0)
    if dmap.defer_index is not None and len(dmap.methods) > 1:
        mean[dmap.defer_index] = np.inf
    return int(np.argmin(mean))


def parents(t):
    """Parent of every node (-1 for the root)."""
    parent = np.full(t.node_count, -1, dtype=np.int64)
    internal = np.flatnonzero(t.first_child != LEAF)
    n_children = 1 << (t.split[internal] != UNDEFINED).sum(axis=1)
    start = np.repeat(np.cumsum(n_children) - n_children, n_children)
    kids = np.repeat(t.first_child[internal].astype(np.int64), n_children) + (
        np.arange(int(n_children.sum())) - start)
    parent[kids] = np.repeat(internal, n_children)
    return parent


def collapse_methods(full, build_at_depth):
    """The leaf rule's method for every node's block: node i's method in the tree built with max
    depth = depth of i (`build_at_depth(d)` -> TreeArrays)."""
    out = np.where(full.first_child == LEAF, full.method, UNDEFINED).astype(np.int64)
    for d in range(int(full.depth.max())):
        limited = build_at_depth(d)
        upper = np.flatnonzero(full.depth <= d)
        above = full.depth[upper] < d
        if (limited.node_count != upper.size or (upper != np.arange(upper.size)).any()
                or (limited.first_child[upper][above] != full.first_child[upper][above]).any()):
            raise ValueError(f"the tree built with max depth {d} is not the full tree cut at "
                             "that depth; cost-complexity pruning needs that")
        at = upper[~above]
        out[at] = limited.method[at]
    return out


@dataclass
class PruningPath:
    full: TreeArrays
    collapse: np.ndarray      # the leaf rule's method of every node's block
    alphas: list              # per step: alpha at which that subtree appears (0 for the full tree)
    collapsed: list           # per step: bool mask of the nodes turned into leaves
    leaves: list              # per step: leaf count
    in_sample: list           # per step: R of the whole tree (mean penalty %, cost rule above)

    def __len__(self):
        return len(self.alphas)

    def subtree(self, step):
        return prune(self.full, self.collapsed[step], self.collapse)

    def step_at(self, alpha):
        """The subtree CART takes at `alpha`: the last step whose alpha is <= alpha."""
        return int(np.searchsorted(np.asarray(self.alphas), alpha + TIE, side="right")) - 1

    def cv_alphas(self):
        """Per step, the alpha that stands for its range [alpha_k, alpha_k+1) when another
        tree's path is cut at it: the geometric mean (CART), infinity for the last step."""
        a = np.asarray(self.alphas, float)
        return np.append(np.sqrt(np.maximum(a[:-1], 0) * a[1:]), np.inf)


def prune(full, collapsed, collapse):
    """The subtree of `full` with the `collapsed` nodes turned into leaves (leaf-rule method),
    renumbered breadth first (children stay contiguous, as the builder makes them)."""
    keep = ~_hidden(full, parents(full), collapsed)
    new_id = np.cumsum(keep) - 1
    internal = (full.first_child != LEAF) & ~collapsed
    first_child = np.where(internal, new_id[np.maximum(full.first_child, 0)], LEAF)
    split = np.where(internal[:, None], full.split, UNDEFINED)
    method = np.where(collapsed, collapse, full.method)
    i32 = lambda a: np.ascontiguousarray(a[keep], dtype=np.int32)  # noqa: E731
    return TreeArrays(i32(first_child), i32(split), i32(method), i32(full.depth))


def pruning_path(dmap, full, build_at_depth):
    """The weakest-link sequence of subtrees of `full` (built on `dmap`)."""
    collapse = collapse_methods(full, build_at_depth)
    parent = parents(full)
    r_node = block_costs(dmap, full, collapse, parent)

    is_leaf = full.first_child == LEAF
    collapsed = np.zeros(full.node_count, dtype=bool)
    levels = [np.flatnonzero(full.depth == d) for d in range(int(full.depth.max()), 0, -1)]
    path = PruningPath(full, collapse, [], [], [], [])
    alpha = 0.0
    while True:
        # R and leaf count of every current subtree, bottom-up; nodes under a collapsed node
        # are skipped (their sums never reach an ancestor of the collapsed node)
        current_leaf = is_leaf | collapsed
        sub_r = np.where(current_leaf, r_node, 0.0)
        sub_n = current_leaf.astype(np.int64)
        hidden = _hidden(full, parent, collapsed)
        for at in levels:
            at = at[~hidden[at]]
            np.add.at(sub_r, parent[at], sub_r[at])
            np.add.at(sub_n, parent[at], sub_n[at])
        path.alphas.append(alpha)
        path.collapsed.append(collapsed.copy())
        path.leaves.append(int(sub_n[0]))
        path.in_sample.append(float(sub_r[0]))
        inner = np.flatnonzero(~current_leaf & ~hidden)
        if inner.size == 0:
            return path
        g = (r_node[inner] - sub_r[inner]) / (sub_n[inner] - 1)
        weakest = g.min()
        alpha = max(alpha, float(weakest))
        collapsed[inner[g <= weakest + TIE]] = True


def block_costs(dmap, full, collapse, parent=None):
    """R(t) of every node t: the mean penalty (over the map's measured cells) its block costs
    under t's collapse method. Each cell adds its cost to its leaf and every ancestor (one pass
    per level, upwards). `collapse` may be (nodes, k): k collapse methods per node (a tree's
    leaf rules) in one pass, R then (nodes, k)."""
    parent = parents(full) if parent is None else parent
    costs = cell_costs(dmap)
    leaf = full.leaf_grid(dmap.shape).reshape(-1)
    cell = np.arange(leaf.size)
    r_node = np.zeros(collapse.shape)
    node = leaf.astype(np.int64)
    while node.size:
        method = collapse[node]
        np.add.at(r_node, node, costs[cell.reshape(-1, *[1] * (method.ndim - 1)), method])
        up = parent[node] >= 0
        node, cell = parent[node][up], cell[up]
    return r_node / max(int(dmap.measured.sum()), 1)


def _hidden(full, parent, collapsed):
    """Nodes strictly below a collapsed node (top-down level pass)."""
    hidden = np.zeros(full.node_count, dtype=bool)
    for d in range(1, int(full.depth.max()) + 1):
        at = np.flatnonzero(full.depth == d)
        hidden[at] = hidden[parent[at]] | collapsed[parent[at]]
    return hidden
