"""Predictions from LMO parameters (and, for comparison, from the heterogeneous and homogeneous
Hockney models fitted from the same round-trips): linear and binomial scatter and gather, the
Open MPI bcast and reduce tree algorithms, the best and worst rank-to-processor mapping of the
binomial scatter/gather, and the performance table `collsel model predict` writes.

Processors are numbered 0..n-1 as in the parameter file; a communicator of P ranks runs rank r
on processor mapping[r] (default: the identity, the first P processors). Times in µs, sizes in
bytes.

Linear scatter of M bytes per rank from processor r to the others R (Lastovetsky & Rychkov 2009,
eq. 8): |R| (C_r + M t_r) + max_i (C_i + M t_i + M / beta_ri) for M <= S (the root processes its
sends one after another, the switch transmits them in parallel), the sum instead of the max for
M > S. Linear gather (eqs. 9-10): the max form plus kappa1 M up to M2 (medium messages, whose
escalations are not deterministic, take the escalation-free level), the sum form plus kappa2 M
beyond. The paper writes (n-1) root terms in eq. 10 and n in eq. 9 for n receivers; both use
|R| here. Under Hockney a flat tree is |R| transfers one after another (as models.bcast's
baseline).

Binomial scatter/gather over the in-order binomial tree (node v's children v + 2^k below v's
lowest set bit; Open MPI's in_order_bmtree, and collsel_bench --experiment lmo-binomial): eq. 1
with the point-to-point time of each model. A parent sends its children their subtrees' blocks,
largest first, one complete transfer after another; each child goes on with its own subtree in
parallel. Gather is the mirror: children are received smallest first, each once its subtree is
gathered.

Open MPI bcast (1 linear, 2 chain, 3 pipeline, 5 binary, 6 binomial, 7 k-nomial) and reduce
(1 linear, 2 chain, 3 pipeline, 4 binary, 5 binomial on the in-order binomial tree): the stage
structure of models.bcast (Nuriyev et al. 2022, Algorithm 1; a stage costs its slowest
non-blocking flat tree, models.topology.stage_sum) with each flat tree costed over its own
links: under LMO |children| (C_v + s t_v) + max_c (C_c + s t_c + s / beta_vc), the small-message
form of eq. 8 (Isend's need no threshold), under Hockney the sum of its transfers. Reduce runs
the stages upwards (the deepest flat trees first) and counts no reduction arithmetic: the LMO
parameters have none. Split-binary and the scatter-allgather bcasts, in-order binary and
Rabenseifner reduce are not modelled here.
"""
import itertools
import math

import numpy as np

from collsel import __version__
from collsel.core.io import statistic, values
from collsel.core.maps.table import render_table
from collsel.errors import InputError
from collsel.research.models import topology
from collsel.research.models.bcast import segmentation
from collsel.research.models.experiments import SEGMENT_SIZES
from collsel.research.models.predict import COLUMNS as TABLE_COLUMNS, STATISTIC_DETAIL

MODELS = ("lmo", "hockney-hetero", "hockney")
COLLECTIVES = ("scatter", "gather", "bcast", "reduce")
SCATTER_GATHER_ALGORITHMS = {1: "linear", 2: "binomial"}
BCAST_TREES = (2, 3, 5, 6, 7)
REDUCE_TREES = (2, 3, 4, 5)
EXHAUSTIVE_MAX = 40320          # mappings tried one by one up to 8! (P <= 9)
BATCH = 4096                    # mappings evaluated at once


class LmoModel:
    """C (n,), t (n,), inv_beta (n, n) = 1 / beta (0 on the diagonal), thresholds and slopes."""
    name = "lmo"

    def __init__(self, C, t, inv_beta, S=None, M1=None, M2=None, kappa1=0.0, kappa2=0.0):
        self.C, self.t = np.asarray(C, dtype=np.float64), np.asarray(t, dtype=np.float64)
        self.inv_beta = np.asarray(inv_beta, dtype=np.float64)
        self.S, self.M1, self.M2 = S, M1, M2
        self.kappa1, self.kappa2 = float(kappa1), float(kappa2)

    @property
    def n(self):
        return len(self.C)

    def p2p(self, a, b, m):
        """One message of m bytes from processor a to b (arrays broadcast)."""
        return self.C[a] + self.C[b] + m * (self.t[a] + self.t[b] + self.inv_beta[a, b])

    def _flat(self, u, w, group, ngroups, s, serial):
        """Per group g: the flat tree from u to the receivers w of its edges (group[e] = g)."""
        recv = self.C[w] + s * (self.t[w] + self.inv_beta[u, w])
        k = np.bincount(group, minlength=ngroups)
        root = np.zeros(ngroups)
        root[group] = self.C[u] + s * self.t[u]
        if serial:
            tail = np.bincount(group, weights=recv, minlength=ngroups)
        else:
            tail = np.zeros(ngroups)
            np.maximum.at(tail, group, recv)
        return k * root + tail

    def flat_trees(self, u, w, group, ngroups, s):
        return self._flat(u, w, group, ngroups, s, serial=False)

    def _linear(self, procs, m, serial):
        return _one_flat_tree(lambda *edges: self._flat(*edges, serial=serial), procs, m)

    def linear_scatter(self, procs, m):
        m = np.asarray(m, dtype=np.float64)
        large = m > self.S if self.S is not None else np.zeros(m.shape, dtype=bool)
        return np.where(large, self._linear(procs, m, True), self._linear(procs, m, False))

    def linear_gather(self, procs, m, kappa=True):
        m = np.asarray(m, dtype=np.float64)
        large = m > self.M2 if self.M2 is not None else np.zeros(m.shape, dtype=bool)
        k1, k2 = (self.kappa1, self.kappa2) if kappa else (0.0, 0.0)
        return np.where(large, self._linear(procs, m, True) + k2 * m,
                        self._linear(procs, m, False) + k1 * m)


class HockneyModel:
    """alpha (n, n), beta (n, n) per pair; the homogeneous model has them constant."""

    def __init__(self, alpha, beta, name="hockney-hetero"):
        self.alpha = np.asarray(alpha, dtype=np.float64)
        self.beta = np.asarray(beta, dtype=np.float64)
        self.name = name

    @classmethod
    def homogeneous(cls, alpha, beta, n):
        return cls(np.full((n, n), float(alpha)), np.full((n, n), float(beta)), "hockney")

    @property
    def n(self):
        return self.alpha.shape[0]

    def p2p(self, a, b, m):
        return self.alpha[a, b] + m * self.beta[a, b]

    def flat_trees(self, u, w, group, ngroups, s):
        return np.bincount(group, weights=self.p2p(u, w, s), minlength=ngroups)

    def linear_scatter(self, procs, m):
        return _one_flat_tree(self.flat_trees, procs, m)

    def linear_gather(self, procs, m, kappa=True):
        return _one_flat_tree(self.flat_trees, procs, m)


def _one_flat_tree(flat_trees, procs, m):
    """The flat tree from procs[0] to the others, at each size of m (a model's flat_trees)."""
    rest = np.asarray(procs[1:], dtype=np.int64)
    root, group = np.full(len(rest), procs[0]), np.zeros(len(rest), dtype=np.int64)
    return np.array([flat_trees(root, rest, group, 1, s)[0]
                     for s in np.atleast_1d(np.asarray(m, dtype=np.float64))])


# --- binomial scatter / gather --------------------------------------------------------------

def in_order_binomial(P):
    """Parent array of the in-order binomial tree, root 0: v with its lowest set bit cleared."""
    v = np.arange(P, dtype=np.int64)
    return np.where(v > 0, v & (v - 1), -1)


def _children(v, P):
    """Children of node v, smallest subtree first, with their subtree sizes."""
    limit = P if v == 0 else v & -v
    masks = [1 << k for k in range(max(limit - 1, 0).bit_length()) if (1 << k) < limit]
    return [(v + mk, min(mk, P - v - mk)) for mk in masks if v + mk < P]


def binomial_times(model, maps, m, gather=False):
    """Binomial scatter (or gather) of m bytes per rank (m: array (L,)) for each mapping in maps
    (K, P): tree node v played by processor maps[:, v]. Returns (K, L). Nodes are finished from
    the highest down (children are above their parent), so nothing recurses."""
    maps = np.atleast_2d(np.asarray(maps, dtype=np.int64))
    m = np.atleast_1d(np.asarray(m, dtype=np.float64))
    K, P = maps.shape
    done = np.zeros((P, K, len(m)))
    for v in range(P - 1, -1, -1):
        acc = np.zeros((K, len(m)))
        for c, size in _children(v, P):
            cost = model.p2p(maps[:, c, None] if gather else maps[:, v, None],
                             maps[:, v, None] if gather else maps[:, c, None], size * m[None, :])
            # scatter: send to c, then the larger children (built up smallest first);
            # gather: wait for c's subtree and for the smaller children, then receive c.
            acc = (np.maximum(acc, done[c]) + cost) if gather else (cost + np.maximum(done[c], acc))
        done[v] = acc
    return done[0]


# --- Open MPI bcast / reduce trees ----------------------------------------------------------

def tree_parent(collective, alg, P, chain_fanout=4, knomial_radix=4):
    """Parent array (root 0) of the tree Open MPI 4.1 uses for `alg` (linear: one flat tree)."""
    if alg == 1:
        return np.where(np.arange(P) > 0, 0, -1)
    if collective == "bcast":
        build = {2: lambda: topology.chain(P, chain_fanout), 3: lambda: topology.chain(P, 1),
                 5: lambda: topology.kary_tree(P, 2), 6: lambda: topology.binomial(P),
                 7: lambda: topology.knomial(P, knomial_radix)}
    else:
        build = {2: lambda: topology.chain(P, chain_fanout), 3: lambda: topology.chain(P, 1),
                 4: lambda: topology.kary_tree(P, 2), 5: lambda: in_order_binomial(P)}
    return build[alg]()


def tree_time(model, parent, procs, m, segsize):
    """Segmented tree bcast or reduce of m bytes: the stages of Nuriyev et al.'s Algorithm 1,
    each costing its slowest flat tree over that tree's own links. A reduce runs the stages
    upwards (the deepest flat trees first); a stage costs the slowest of a window of
    consecutive depths, so the sum is the same in either direction and one stage sum serves."""
    P = len(parent)
    if P < 2:
        return 0.0
    s, nseg = segmentation(m, segsize)
    child = np.flatnonzero(parent >= 0)
    cost = model.flat_trees(procs[parent[child]], procs[child], parent[child], P, float(s))
    sender = np.unique(parent[child])
    return topology.stage_sum(topology.depths(parent)[sender], cost[sender], nseg)


def methods(collective):
    """(algorithm, segsize) pairs predicted for a collective."""
    if collective in ("scatter", "gather"):
        return [(a, 0) for a in SCATTER_GATHER_ALGORITHMS]
    trees = BCAST_TREES if collective == "bcast" else REDUCE_TREES
    return [(1, 0)] + [(a, s) for a in trees for s in (0,) + SEGMENT_SIZES]


def predict(model, collective, P, msg_sizes, mapping=None, chain_fanout=4, knomial_radix=4):
    """{(algorithm, segsize): array over msg_sizes} for P ranks on processors mapping[:P]."""
    procs = np.arange(P) if mapping is None else np.asarray(mapping[:P], dtype=np.int64)
    m = np.asarray(msg_sizes, dtype=np.float64)
    out = {}
    for alg, seg in methods(collective):
        if collective in ("scatter", "gather"):
            if alg == 1:
                out[(alg, seg)] = (model.linear_scatter(procs, m) if collective == "scatter"
                                   else model.linear_gather(procs, m))
            else:
                out[(alg, seg)] = binomial_times(model, procs[None, :], m,
                                                 gather=collective == "gather")[0]
            continue
        parent = tree_parent(collective, alg, P, chain_fanout, knomial_radix)
        out[(alg, seg)] = np.array([tree_time(model, parent, procs, int(x), seg)
                                    for x in msg_sizes])
    return out


# --- mapping advice ---------------------------------------------------------------------------

def _evaluate(model, maps, m, gather):
    return np.concatenate([binomial_times(model, maps[i:i + BATCH], [m], gather)[:, 0]
                           for i in range(0, len(maps), BATCH)])


def greedy_mapping(model, root, others, P, m, worst=False):
    """The paper's illustration (section 3): from the largest subtrees down, each node takes the
    free processor whose link from its parent's processor is fastest (worst: slowest) for its
    subtree's blocks."""
    maps = np.full(P, -1, dtype=np.int64)
    maps[0] = root
    free = list(others)
    parent = in_order_binomial(P)
    sizes = {c: size for v in range(P) for c, size in _children(v, P)}
    for v in sorted(sizes, key=lambda c: (-sizes[c], c)):
        cost = model.p2p(maps[parent[v]], np.array(free), sizes[v] * m)
        pick = int(np.argmax(cost) if worst else np.argmin(cost))
        maps[v] = free.pop(pick)
    return maps


def _improve(model, maps, m, gather, worst):
    """Pairwise swaps of non-root nodes while one helps (all swaps scored at once per pass)."""
    P = len(maps)
    pairs = np.array(list(itertools.combinations(range(1, P), 2)), dtype=np.int64).reshape(-1, 2)
    sign = -1.0 if worst else 1.0
    best = sign * _evaluate(model, maps[None, :], m, gather)[0]
    tried = 1
    for _ in range(10 * P):
        if not len(pairs):
            break
        cand = np.repeat(maps[None, :], len(pairs), axis=0)
        rows = np.arange(len(pairs))
        cand[rows, pairs[:, 0]], cand[rows, pairs[:, 1]] = maps[pairs[:, 1]], maps[pairs[:, 0]]
        score = sign * _evaluate(model, cand, m, gather)
        tried += len(pairs)
        k = int(np.argmin(score))
        if not score[k] < best * (1 - 1e-12):
            break
        maps, best = cand[k], score[k]
    return maps, tried


def mapping_advice(model, collective, m, processors=None, root=None):
    """The predicted best and worst rank-to-processor mapping of the binomial scatter or gather
    of m bytes per rank over `processors` (default all), the root fixed on `root` (default the
    first). Exhaustive up to EXHAUSTIVE_MAX mappings, else the paper's greedy mapping improved
    by pairwise swaps. Returns {"best": (mapping, µs), "worst": ..., "identity": ...,
    "searched": count, "method": text}."""
    gather = collective == "gather"
    procs = list(range(model.n)) if processors is None else [int(p) for p in processors]
    root = procs[0] if root is None else int(root)
    others = [p for p in procs if p != root]
    P = len(procs)
    identity = np.array([root] + others, dtype=np.int64)
    if math.factorial(P - 1) <= EXHAUSTIVE_MAX:
        perms = np.array(list(itertools.permutations(others)), dtype=np.int64).reshape(-1, P - 1)
        maps = np.column_stack([np.full(len(perms), root), perms])
        times = _evaluate(model, maps, m, gather)
        lo, hi = int(np.argmin(times)), int(np.argmax(times))
        best, worst = (maps[lo], times[lo]), (maps[hi], times[hi])
        searched, method = len(maps), "exhaustive"
    else:
        found = {}
        searched = 0
        for worst_case in (False, True):
            start = greedy_mapping(model, root, others, P, m, worst_case)
            maps, tried = _improve(model, start, m, gather, worst_case)
            found[worst_case] = (maps, float(_evaluate(model, maps[None, :], m, gather)[0]))
            searched += tried
        best, worst = found[False], found[True]
        method = "greedy (largest subtrees first) + pairwise swaps"
    ident = float(_evaluate(model, identity[None, :], m, gather)[0])
    return {"best": ([int(x) for x in best[0]], float(best[1])),
            "worst": ([int(x) for x in worst[0]], float(worst[1])),
            "identity": ([int(x) for x in identity], ident),
            "searched": int(searched), "method": method}


# --- the performance table ------------------------------------------------------------------

MAX_ROWS = 250_000          # as models.predict: refused beyond, before anything is computed


def check_request(par, collective, comm_sizes, n_msg_sizes, mapping):
    """Refuse, in one line naming the flag, what the parameters cannot predict."""
    if collective not in COLLECTIVES:
        raise InputError(f"--collective {collective}: LMO predictions are for "
                         f"{', '.join(COLLECTIVES)}")
    if comm_sizes[0] < 2:
        raise InputError("--comm-sizes: P >= 2")
    if comm_sizes[-1] > par.n:
        raise InputError(f"--comm-sizes: P {comm_sizes[-1]} is more than the {par.n} processors "
                         f"of {par.path} (one rank per processor)")
    if mapping is not None:
        if len(mapping) < comm_sizes[-1] or len(set(mapping)) != len(mapping) or \
                not all(0 <= p < par.n for p in mapping):
            raise InputError(f"--mapping: {comm_sizes[-1]} distinct processors or more, each "
                             f"0..{par.n - 1} (the processor of rank 0, 1, ...)")
    rows = len(comm_sizes) * n_msg_sizes * len(methods(collective))
    if rows > MAX_ROWS:
        raise InputError(f"{rows} rows, more than {MAX_ROWS}: ask for fewer P or sizes")


def table_rows(model, collective, comm_sizes, msg_sizes, mapping=None, where=""):
    """Rows of the predicted table; a time no table can hold is an InputError naming the cell."""
    rows = []
    for P in comm_sizes:
        times = predict(model, collective, P, msg_sizes, mapping)
        for i, m in enumerate(msg_sizes):
            for (alg, seg) in sorted(times):
                t = float(times[(alg, seg)][i])
                if not (math.isfinite(t) and t <= values.MAX_TIME_US):
                    raise InputError(f"{where}: the {model.name} model predicts {t:g} µs for "
                                     f"P={P}, m={m}, algorithm {alg} segsize {seg}: beyond a "
                                     "day; ask for smaller m")
                rows.append({"collective": collective, "comm_size": P, "msg_size": m,
                             "algorithm": alg, "segsize": seg, "faninout": 0,
                             "time_us": float(f"{max(t, 1e-9):.6g}")})
    return rows


def table_csv(par, model_name, collective, comm_sizes, msg_sizes, mapping=None,
              comm_sizes_text="", msg_sizes_text=""):
    """(CSV text, number of rows) of the predicted performance table."""
    model = par.models[model_name]
    rows = table_rows(model, collective, comm_sizes, msg_sizes, mapping, par.path)
    meta = {"source": f"collsel model predict ({model_name} model from LMO parameters; "
                      "predicted, not measured)",
            "collsel_version": __version__, "collective": collective, "predicted": "yes",
            "model": model_name, "params": par.name, "params_file": par.path,
            "params_source": par.doc.get("source", ""),
            "mapping": ("identity" if mapping is None
                        else ",".join(map(str, mapping[:comm_sizes[-1]]))),
            "algorithms": ("1 linear, 2 binomial (in-order binomial tree)"
                           if collective in ("scatter", "gather") else
                           "Open MPI coll/tuned ids"),
            "statistic": statistic.MODEL, "statistic_detail": STATISTIC_DETAIL,
            "comm_sizes": comm_sizes_text, "msg_sizes": msg_sizes_text}
    return render_table(rows, meta, columns=list(TABLE_COLUMNS)), len(rows)
