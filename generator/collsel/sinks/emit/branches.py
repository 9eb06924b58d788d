"""A tree as a flat list of if / else-if / else branches, for code emitters.

Walks TreeArrays with an explicit stack (no recursion). Within a node, children whose box is
empty (replicate mode) are dropped, sibling leaves with the same method are merged into one
branch, and the last branch becomes a plain `else`. Conditions are data: a list of alternatives,
each a list of (axis, op, threshold) terms with op '<' or '>=' against the axis' integer cuts.
"""
from dataclasses import dataclass, field

from collsel.core.trees.tree import LEAF, UNDEFINED


@dataclass
class Step:
    kind: str            # "if", "elif", "else", "end", "leaf"
    depth: int           # nesting level, for indentation
    condition: list = field(default_factory=list)   # alternatives of terms (if/elif)
    region: str = ""     # human description of the branch's region
    method: int = -1     # leaf only


def _children(tree, node, box):
    """(child id, bits, box) of each non-empty child, in NW, NE, SW, SE order."""
    axes = [d for d in range(tree.n_axes) if tree.split[node, d] != UNDEFINED]
    out = []
    for rank in range(1 << len(axes)):
        child_box = [list(b) for b in box]
        bits = {}
        for j, d in enumerate(axes):
            bit = rank >> (len(axes) - 1 - j) & 1
            bits[d] = bit
            child_box[d][bit ^ 1] = int(tree.split[node, d])
        if all(lo < hi for lo, hi in child_box):
            out.append((tree.first_child[node] + rank, bits, [tuple(b) for b in child_box]))
    return out


def _terms(bits, parent_box, child_box, cuts):
    """Conjunction restricting the parent box to the child box; vacuous sides are left out."""
    terms = []
    for d in sorted(bits):
        lo, hi = child_box[d]
        if bits[d] == 0 and hi < parent_box[d][1]:
            terms.append((d, "<", cuts[d][hi - 1]))
        if bits[d] == 1 and lo > parent_box[d][0]:
            terms.append((d, ">=", cuts[d][lo - 1]))
    return terms


def _group_condition(members, parent_box, cuts):
    """One term list when the members form a box (a half, a quarter...), else alternatives."""
    all_bits = [bits for _, bits, _ in members]
    fixed = {d: v for d, v in all_bits[0].items() if all(b[d] == v for b in all_bits)}
    if len(members) == 1 << (len(all_bits[0]) - len(fixed)):
        union = [(min(m[2][d][0] for m in members), max(m[2][d][1] for m in members))
                 for d in range(len(parent_box))]
        return [_terms(fixed, parent_box, union, cuts)], union
    return [_terms(bits, parent_box, box, cuts) for _, bits, box in members], None


def flatten(tree, axes, describe_region):
    """Steps of the whole tree; `describe_region(box)` writes the comment of a branch."""
    cuts = [list(a.cuts) for a in axes]
    root_box = [(0, len(a.values)) for a in axes]
    steps, stack = [], [("node", 0, root_box, 0)]
    while stack:
        item = stack.pop()
        if item[0] == "step":
            steps.append(item[1])
            continue
        _, node, box, depth = item
        if tree.first_child[node] == LEAF:
            steps.append(Step("leaf", depth, region=describe_region(box),
                              method=int(tree.method[node])))
            continue
        groups = []   # [method or None, members]
        for child in _children(tree, node, box):
            cid = child[0]
            m = int(tree.method[cid]) if tree.first_child[cid] == LEAF else None
            same = [g for g in groups if m is not None and g[0] == m]
            if same:
                same[0][1].append(child)
            else:
                groups.append([m, [child]])
        if len(groups) == 1 and len(groups[0][1]) == 1:
            stack.append(("node", groups[0][1][0][0], groups[0][1][0][2], depth))
            continue
        if len(groups) == 1:   # every child a leaf of one method
            steps.append(Step("leaf", depth, region=describe_region(box), method=groups[0][0]))
            continue
        # the biggest group goes last, as the plain `else`: no condition to spell out
        last = max(range(len(groups)), key=lambda i: (len(groups[i][1]), i))
        groups.append(groups.pop(last))
        todo = []
        for i, (method, members) in enumerate(groups):
            condition, union = _group_condition(members, box, cuts)
            kind = "if" if i == 0 else "else" if i == len(groups) - 1 else "elif"
            region = (describe_region(union) if union
                      else " or ".join(describe_region(b) for _, _, b in members))
            todo.append(("step", Step(kind, depth, condition if kind != "else" else [], region)))
            if method is not None:
                todo.append(("step", Step("leaf", depth + 1, region=region, method=method)))
            else:
                todo.append(("node", members[0][0], members[0][2], depth + 1))
        todo.append(("step", Step("end", depth)))
        stack.extend(reversed(todo))
    return steps
