"""Analytical models of the Open MPI 4.1 broadcast algorithms (coll/tuned ids 1-9).

Two cost models share one description of what each algorithm does (`structure`):

* tau-Lop (Nuriyev et al. 2022, section 4): a point-to-point transfer of s bytes costs
  T0(s) = o0 + 2 L0(s) in shared memory (c = 0) and T1(s) = o1 + 2 L0(s) + L1(s) over the
  network (c = 1). We let L be affine in the size, L0(s) = L0 + s L0p and L1(s) = L1 + s L1p,
  which keeps every model linear in the parameters; the paper's presets have L0p = L1p = 0 (it
  fixes s = 8 KiB). A segmented tree broadcast runs in stages (paper Algorithm 1); each stage
  costs its slowest non-blocking flat tree (NBFT); an NBFT of P_v processes with C_v network
  links costs gamma0(P_v) T0 when C_v = 0, else gamma1(C_v + floor((P_v - C_v - 1) / Q) + 1) T1
  (eq. 4), with T0 = T1 / Q inside mixed trees (eq. 18). Linear is a blocking flat tree (eq. 1),
  split-binary adds the exchange of halves (eq. 13).
* Hockney (alpha + beta s), the classic baseline: the same stages, but a node sends to its
  children one after another (NBFT of P_v processes = (P_v - 1) transfers) and there is one
  channel.

Every model returns coefficients: predicted time = coefficients . parameters, so the same code
predicts (dot with fitted parameters) and builds the fitting system (paper eq. 19).

Facts from Open MPI 4.1 coll_base_bcast.c: segments are `segsize` bytes when
0 < segsize < m (else one segment); chain uses `coll_tuned_bcast_algorithm_chain_fanout`
(default 4) chains when forced, pipeline is a chain of fanout 1; split-binary falls back to the
pipeline when a half is shorter than one segment (or m < 2) and otherwise pushes halves down
the binary tree then swaps them between pairs; scatter_allgather(_ring) fall back to linear
when m < P and otherwise scatter over a binomial tree, then allgather by recursive doubling
(8) or a ring (9).
"""
import copy
import math

import numpy as np

from collsel.research.models import topology

TLOP_PARAMS = ("o0", "o1", "L0", "L0p", "L1", "L1p")
HOCKNEY_PARAMS = ("alpha", "beta")
DEFAULT_CHAIN_FANOUT = 4
DEFAULT_KNOMIAL_RADIX = 4
BCAST_ALGORITHMS = tuple(range(1, 10))


class Platform:
    """Algorithm-independent parameters: gamma^c(P) tables, Q, and ranks per node.

    gamma0/gamma1 map NBFT sizes P >= 2 to factors; sizes beyond a table take its last value
    (the paper measures up to P_NBFT^max and its eq. 20 steps by gamma1(P^max) per stage)."""

    def __init__(self, gamma0=None, gamma1=None, Q=None, ppn=None,
                 chain_fanout=DEFAULT_CHAIN_FANOUT, knomial_radix=DEFAULT_KNOMIAL_RADIX,
                 unit_size=None):
        self.gamma0 = self._table(gamma0)
        self.gamma1 = self._table(gamma1)
        self.Q = float(Q) if Q else None
        self.ppn = ppn
        self.chain_fanout = chain_fanout
        self.knomial_radix = knomial_radix
        # Parameters measured at one transfer size (the paper's 8 KiB segment, L0p = L1p = 0):
        # a larger unsegmented transfer of s bytes then costs ceil(s / unit_size) transfers.
        self.unit_size = int(unit_size) if unit_size else None

    @staticmethod
    def _table(table):
        table = {int(k): float(v) for k, v in (table or {}).items()}
        table.setdefault(2, 1.0)
        top = max(table)
        values = np.ones(top + 1)
        last = 1.0
        for p in range(2, top + 1):
            last = table.get(p, last)
            values[p] = last
        return values

    def gamma(self, channel, p):
        table = self.gamma1 if channel else self.gamma0
        p = np.minimum(np.maximum(np.asarray(p, dtype=np.int64), 2), len(table) - 1)
        return table[p]

    def ranks_per_node(self, P):
        return P if not self.ppn else min(int(self.ppn), P)

    def mapped(self, ppn):
        """The same parameters for ranks placed `ppn` per node (rank r on node r // ppn); None
        keeps this platform's own mapping. A copy: one parameter set serves many mappings."""
        if ppn is None:
            return self
        other = copy.copy(self)
        other.ppn = int(ppn)
        return other


def segmentation(m, segsize):
    """(segment bytes, number of segments) as COLL_BASE_COMPUTED_SEGCOUNT does for bytes."""
    m = max(int(m), 1)
    s = segsize if 0 < segsize < m else m
    return s, -(-m // s)


_tree_cache = {}


def tree_nbfts(kind, P, ppn, arg=0):
    key = (kind, P, ppn, arg)
    if key not in _tree_cache:
        parent = {"chain": lambda: topology.chain(P, arg),
                  "binary": lambda: topology.kary_tree(P, 2),
                  "binomial": lambda: topology.binomial(P),
                  "knomial": lambda: topology.knomial(P, arg)}[kind]()
        _tree_cache[key] = topology.nbfts(parent, ppn)[1:]
    return _tree_cache[key]


def _pairs_cross(P, ppn, pairs):
    node = topology.node_of(P, ppn)
    a, b = np.asarray(pairs[0]), np.asarray(pairs[1])
    return bool(len(a)) and bool((node[a] != node[b]).any())


def structure(alg, P, m, segsize, ppn, chain_fanout=DEFAULT_CHAIN_FANOUT,
              knomial_radix=DEFAULT_KNOMIAL_RADIX):
    """What algorithm `alg` does for (P, m, segsize, ppn): a list of terms, each
    ("tree", depth, P_v, C_v, nseg, s) -- a staged segmented tree broadcast -- or
    ("p2p", n_shm, n_net, s) -- that many transfers of s bytes one after another."""
    m = max(int(m), 1)
    node = topology.node_of(P, ppn)
    if P < 2:
        return []
    if alg in (8, 9) and m < P:
        alg = 1
    if alg == 1:
        net = int((node[1:] != node[0]).sum())
        return [("p2p", P - 1 - net, net, m)]
    if alg == 4:
        half = -(-m // 2)
        if m < 2 or segsize > m // 2:
            alg, kind = 3, None
        else:
            s, nseg = segmentation(half, segsize if segsize > 0 else half)
            depth, pv, cv = tree_nbfts("binary", P, ppn)
            odd = np.arange(1, P - 1, 2)
            pairs = (np.concatenate([odd, [P - 1] if P % 2 == 0 else []]).astype(np.int64),
                     np.concatenate([odd + 1, [0] if P % 2 == 0 else []]).astype(np.int64))
            cross = _pairs_cross(P, ppn, pairs)
            return [("tree", depth, pv, cv, nseg, s), ("p2p", 0 if cross else 1, int(cross), half)]
    if alg in (2, 3, 5, 6, 7):
        kind, arg = {2: ("chain", chain_fanout), 3: ("chain", 1), 5: ("binary", 0),
                     6: ("binomial", 0), 7: ("knomial", knomial_radix)}[alg]
        s, nseg = segmentation(m, segsize)
        depth, pv, cv = tree_nbfts(kind, P, ppn, arg)
        return [("tree", depth, pv, cv, nseg, s)]
    if alg in (8, 9):
        terms = []
        steps = math.ceil(math.log2(P))
        ranks = np.arange(P)
        # binomial scatter: step k moves about m / 2^(k+1) bytes over distance 2^(steps-1-k)
        for k in range(steps):
            d = 1 << (steps - 1 - k)
            src = ranks[(ranks % (2 * d) == 0) & (ranks + d < P)]
            cross = _pairs_cross(P, ppn, (src, src + d))
            s = max(1, m >> (k + 1))
            terms.append(("p2p", 0 if cross else 1, int(cross), s))
        if alg == 8:      # recursive doubling: distance 2^k, m 2^k / P bytes
            for k in range(steps):
                d = 1 << k
                a = ranks[(ranks ^ d) < P]
                cross = _pairs_cross(P, ppn, (a, a ^ d))
                terms.append(("p2p", 0 if cross else 1, int(cross), max(1, (m << k) // P)))
        else:             # ring: P - 1 steps of m / P bytes to the next rank
            cross = _pairs_cross(P, ppn, (ranks, (ranks + 1) % P))
            terms.append(("p2p", 0 if cross else P - 1, P - 1 if cross else 0, max(1, m // P)))
        return terms
    raise ValueError(f"no bcast model for algorithm {alg}")


def _t0(s):
    return np.array([1.0, 0.0, 2.0, 2.0 * s, 0.0, 0.0])


def _t1(s):
    return np.array([0.0, 1.0, 2.0, 2.0 * s, 1.0, float(s)])


def tree_factor(platform, pv, cv):
    """Stage cost of each NBFT and the channel whose T_p2p it multiplies (eqs. 4, 8, 18)."""
    if not (cv > 0).any():
        return platform.gamma(0, pv), 0
    if platform.Q is None:
        raise ValueError("the tree crosses nodes but the parameters have no Q (channel ratio): "
                         "fit on two or more nodes, or predict with ranks per node >= P")
    po = cv + np.floor((pv - cv - 1) / platform.Q).astype(np.int64) + 1
    return np.where(cv > 0, platform.gamma(1, po), platform.gamma(0, pv) / platform.Q), 1


def tlop_coefficients(alg, P, m, segsize, platform):
    """Coefficients over TLOP_PARAMS of the tau-Lop model of bcast algorithm `alg`."""
    ppn = platform.ranks_per_node(P)
    coef = np.zeros(len(TLOP_PARAMS))
    for term in structure(alg, P, m, segsize, ppn, platform.chain_fanout,
                          platform.knomial_radix):
        if term[0] == "tree":
            _, depth, pv, cv, nseg, s = term
            factor, channel = tree_factor(platform, pv, cv)
            coef += topology.stage_sum(depth, factor, nseg) * (_t1(s) if channel else _t0(s))
        else:
            _, n0, n1, s = term
            k = 1
            if platform.unit_size and s > platform.unit_size:
                k, s = -(-s // platform.unit_size), platform.unit_size
            coef += k * (n0 * _t0(s) + n1 * _t1(s))
    return coef


def hockney_coefficients(alg, P, m, segsize, chain_fanout=DEFAULT_CHAIN_FANOUT,
                         knomial_radix=DEFAULT_KNOMIAL_RADIX):
    """Coefficients over (alpha, beta) of the Hockney model of bcast algorithm `alg`."""
    coef = np.zeros(2)
    for term in structure(alg, P, m, segsize, P, chain_fanout, knomial_radix):
        if term[0] == "tree":
            _, depth, pv, cv, nseg, s = term
            coef += (topology.stage_sum(depth, (pv - 1).astype(np.float64), nseg)
                     * np.array([1.0, s]))
        else:
            _, n0, n1, s = term
            coef += (n0 + n1) * np.array([1.0, s])
    return coef


def flat_gather_coefficients(P, g, platform):
    """Flat gather without synchronisation of g bytes from every rank (paper eq. 17)."""
    ppn = platform.ranks_per_node(P)
    node = topology.node_of(P, ppn)
    net = int((node[1:] != node[0]).sum())
    return (P - 1 - net) * _t0(g) + net * _t1(g)


def gather_size(m, segsize, default=8192):
    """Bytes each rank sends in the bcast+gather experiment: one segment (at most m)."""
    return max(1, min(int(m), segsize if segsize > 0 else default))
