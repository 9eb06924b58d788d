"""The trees Open MPI 4.1 coll/base builds for broadcast, as flat parent arrays.

Facts from `ompi/mca/coll/base/coll_base_topo.c` (tree shapes; no code copied), for root 0 (a
non-zero root only rotates ranks, which does not change the shape):

- chain(K) (`build_chain`): the root has min(K, P-1) children, each the head of a chain; the
  first (P-1) mod K chains are one longer than the others. K = 1 is the pipeline.
- tree(F) (`build_tree`): rank r on level l (levels hold F^l ranks) has children
  r + F^l * (i+1), i < F, below P. F = 2 is the binary tree of bintree/split-bintree.
- bmtree (`build_bmtree`): parent of r > 0 is r with its highest set bit cleared.
- kmtree(k) (`build_kmtree`, knomial): parent of r is r rounded down to a multiple of k*mask,
  for the smallest power mask = k^j with r mod (k*mask) != 0.
- in-order binary tree (`build_in_order_bintree`, reduce only): root P-1; see in_order_bintree.

Process-to-node mapping: ranks are placed in order, `ppn` per node (rank r on node r // ppn),
Open MPI's default by-slot mapping. ppn >= P means one node.

Everything here is loops over levels or NumPy over ranks; nothing recurses.
"""
import numpy as np


def chain(P, fanout):
    """Parent of every rank (parent[0] = -1) of Open MPI's chain topology with `fanout` chains."""
    parent = np.full(P, -1, dtype=np.int64)
    if P < 2:
        return parent
    k = max(1, min(fanout, P - 1))
    s = np.arange(1, P)
    if k == 1:
        parent[1:] = s - 1
        return parent
    maxlen = (P - 1) // k
    if (P - 1) % k:
        maxlen += 1
        mark = (P - 1) % k
    else:
        mark = k + 1
    long_part = s - 1 < mark * maxlen
    head_long = 1 + ((s - 1) // maxlen) * maxlen
    short_len = max(maxlen - 1, 1)
    col = mark + (s - 1 - mark * maxlen) // short_len
    head_short = mark * maxlen + 1 + (col - mark) * (maxlen - 1)
    head = np.where(long_part, head_long, head_short)
    parent[1:] = np.where(s == head, 0, s - 1)
    return parent


def kary_tree(P, fanout):
    """Parent array of `build_tree(fanout)` (binary tree for fanout 2)."""
    parent = np.full(P, -1, dtype=np.int64)
    start, width = 0, 1          # first rank and size of the current level
    while start < P:
        ranks = np.arange(start, min(start + width, P))
        for i in range(fanout):
            child = ranks + width * (i + 1)
            ok = child < P
            parent[child[ok]] = ranks[ok]
        start += width
        width *= fanout
    return parent


def binomial(P):
    """Parent array of `build_bmtree` (root 0)."""
    r = np.arange(P, dtype=np.int64)
    parent = np.full(P, -1, dtype=np.int64)
    if P > 1:
        top = 1 << (np.floor(np.log2(r[1:])).astype(np.int64))
        parent[1:] = r[1:] - top
    return parent


def knomial(P, radix):
    """Parent array of `build_kmtree(radix)` (root 0)."""
    r = np.arange(P, dtype=np.int64)
    parent = np.full(P, -1, dtype=np.int64)
    todo = r > 0
    mask = 1
    while todo.any():
        hit = todo & (r % (radix * mask) != 0)
        parent[hit] = r[hit] // (radix * mask) * (radix * mask)
        todo &= ~hit
        mask *= radix
    return parent


def in_order_bintree(P):
    """Parent array of `build_in_order_bintree` (root P-1): each (sub)tree of n ranks starting
    at offset d has its root at d+n-1, left child d+n-2 heading the upper n-1-n//2 ranks and
    right child d+n//2-1 heading the lower n//2 ranks. Explicit stack, no recursion."""
    parent = np.full(P, -1, dtype=np.int64)
    stack = [(P, 0, -1)]          # (size, offset, parent of this subtree's root)
    while stack:
        n, d, up = stack.pop()
        if n <= 0:
            continue
        root = d + n - 1
        parent[root] = up
        right = n >> 1
        stack.append((n - right - 1, d + right, root))   # left subtree: ranks d+right .. d+n-2
        stack.append((right, d, root))                   # right subtree: ranks d .. d+right-1
    return parent


def depths(parent):
    """Depth of every rank below the root (parent -1), by pointer jumping: each pass adds the
    depth already known between a rank and its current ancestor and jumps that ancestor up, so
    a chain of P ranks takes log2(P) passes, not P."""
    depth = (parent >= 0).astype(np.int64)
    up = parent.astype(np.int64).copy()
    while (up >= 0).any():
        has = up >= 0
        safe = np.where(has, up, 0)
        depth = depth + np.where(has, depth[safe], 0)
        up = np.where(has, up[safe], -1)
    return depth


def node_of(P, ppn):
    return np.arange(P, dtype=np.int64) // max(1, int(ppn))


def nbfts(parent, ppn):
    """The non-blocking flat trees of a tree: one per internal rank.

    Returns (sender, depth, P_v, C_v) arrays: the sending rank, its depth, the NBFT's number of
    processes (children + 1) and how many of its links cross nodes."""
    P = len(parent)
    node = node_of(P, ppn)
    child = np.flatnonzero(parent >= 0)
    par = parent[child]
    nkids = np.bincount(par, minlength=P)
    cross = np.bincount(par, weights=(node[child] != node[par]).astype(np.float64),
                        minlength=P).astype(np.int64)
    sender = np.flatnonzero(nkids > 0)
    return sender, depths(parent)[sender], nkids[sender] + 1, cross[sender]


def stage_list(parent, nseg, ppn):
    """Stages of the segmented tree broadcast (paper Algorithm 1): in stage i the rank at depth d
    forwards segment i-d. Each stage is a sorted list of (sender, P_v, C_v)."""
    sender, depth, pv, cv = nbfts(parent, ppn)
    if len(sender) == 0:
        return []
    nstages = int(depth.max()) + nseg
    return [[(int(s), int(p), int(c)) for s, d, p, c in zip(sender, depth, pv, cv)
             if 0 <= i - d < nseg] for i in range(nstages)]


def stage_sum(depth, cost, nseg):
    """Sum over stages of the largest cost among the NBFTs active in the stage.

    depth, cost: per NBFT. Equivalent to summing max() over stage_list, but per depth: with
    M[d] = max cost at depth d, stage i costs max(M[max(0, i-nseg+1) .. min(i, D)])."""
    if len(depth) == 0 or nseg <= 0:
        return 0.0
    D = int(depth.max())
    M = np.full(D + 1, -np.inf)
    np.maximum.at(M, depth, cost)
    M = np.where(np.isfinite(M), M, 0.0)
    if nseg > D:
        prefix = np.maximum.accumulate(M)
        suffix = np.maximum.accumulate(M[::-1])[::-1]
        return float(prefix[:D].sum() + (nseg - D) * M.max() + suffix[1:].sum())
    padded = np.concatenate([np.zeros(nseg - 1), M, np.zeros(nseg - 1)])
    windows = np.lib.stride_tricks.sliding_window_view(padded, nseg)
    return float(windows.max(axis=1).sum())
