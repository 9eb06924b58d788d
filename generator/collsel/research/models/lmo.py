"""The LMO point-to-point model of a heterogeneous cluster and the estimation of its parameters
(Lastovetsky & Rychkov 2009, "Accurate and efficient estimation of parameters of heterogeneous
communication performance models", section 5). Pure numerics on NumPy arrays; nothing here runs
or reads anything.

A message of M bytes from processor i to j costs C_i + M t_i + C_j + M t_j + M / beta_ij: a fixed
delay C and a per-byte delay t on each processor, a transmission rate beta_ij per link
(beta_ij = beta_ji). Round-trips alone give C(n,2) equations for 2n + C(n,2) unknowns, so the
design adds one-to-two experiments. Measured times (µs, processors numbered 0..n-1):

    T0[i, j]      empty round-trip i <-> j                 = 2 C_i + 2 C_j              (eq. 7)
    TM[i, j]      M bytes i -> j, empty reply              = 2 C_i + 2 C_j
                                                             + M (t_i + t_j + 1/beta_ij)
    T2[r, p, q]   M bytes r -> p and r -> q, empty replies = 4 C_r + 2 M t_r
                                                             + max(tau_p, tau_q)           (eq. 11)
                  with tau_p = 2 C_p + M t_p + M / beta_rp.

Every triplet i < j < k is a system of its own:
    C_i = (T0[i,j] + T0[i,k] - T0[j,k]) / 4, and alike for j, k                             (eq. 7)
    t_r = (T2[r, p, q] - max(TM[r,p], TM[r,q]) - 2 C_r) / M   (the max picks the receiver
          that finished last: tau_p > tau_q iff TM[r,p] > TM[r,q])                    (eq. 13-15)
    1/beta_ab = (TM[a,b] - 2 C_a - 2 C_b) / M - t_a - t_b     for the triplet's three links (eq. 16)
with the triplet's own C and t. A processor is in C(n-1, 2) triplets and a link in n - 2, at every
message size M: the redundant estimates are averaged, their spread (standard deviation, min, max,
count) kept. Without noise each estimate is exact, so the average is too.

Also from the same round-trips: the heterogeneous Hockney model (alpha_ij = T0 / 2, beta_ij the
least-squares slope of TM - T0 over M, section 2's two series of round-trips) and its
homogeneous average (the mean over pairs).

Thresholds (section 5): the linear scatter's leap S is the break of a one-break piecewise-linear
fit of the scan (least squares on relative residuals, every break tried at once from prefix
sums; accepted when BIC prefers it, it removes at least half the residual and its two lines
differ materially: slope or level at the break), M <= S being small. Linear gather: M1 is
the first scan size whose successor takes more than ESCALATION times as long (the paper's
rule), M2 the break of the same fit over the escalated sizes (M > M2 large; M2 = M1 when they
show no break: all of them large).
The paper refines M1 by re-measuring with halved strides; here the scan's own sizes are used.
"""
import itertools

import numpy as np

ESCALATION = 10.0          # T(M_next) / T(M) beyond which gather has escalated (paper: 10)
MIN_SEGMENT = 3            # points per segment of a piecewise fit (2 would always fit exactly)
BREAK_MIN_GAIN = 0.5       # a break must remove at least half of the one-line residual
BREAK_MIN_SLOPE = 0.25     # ... and change the slope by more than this fraction
BREAK_MIN_LEAP = 0.10      # ... or jump at the break by more than this fraction of the time


def triplets(n):
    """(C(n,3), 3) array of i < j < k, lexicographic."""
    return np.array(list(itertools.combinations(range(n), 3)), dtype=np.int64).reshape(-1, 3)


def pair_rows(n):
    """(C(n,2), 2) array of i < j, lexicographic."""
    return np.array(list(itertools.combinations(range(n), 2)), dtype=np.int64).reshape(-1, 2)


def triplet_fixed_delays(T0, trip):
    """(T, 3): each triplet's C of its members i, j, k, solved from its three empty round-trips."""
    i, j, k = trip.T
    tij, tjk, tik = T0[i, j], T0[j, k], T0[i, k]
    return np.column_stack([tij + tik - tjk, tij + tjk - tik, tik + tjk - tij]) / 4.0


# The three roots of a triplet (column of the member) and their two peers' columns.
_ROOT, _PEER1, _PEER2 = np.array([0, 1, 2]), np.array([1, 0, 0]), np.array([2, 2, 1])
_LINKS = np.array([[0, 1], [1, 2], [0, 2]])      # the triplet's links, by member column


def triplet_solution(T0, TM, T2, M, trip):
    """Each triplet's own solution at message size M: (C (T, 3), t (T, 3), 1/beta (T, 3) for the
    links (i,j), (j,k), (i,k))."""
    C = triplet_fixed_delays(T0, trip)
    root, p1, p2 = trip[:, _ROOT], trip[:, _PEER1], trip[:, _PEER2]
    slower = np.maximum(TM[root, p1], TM[root, p2])
    t = (T2[root, p1, p2] - slower - 2.0 * C) / M
    a, b = _LINKS[:, 0], _LINKS[:, 1]
    ends_a, ends_b = trip[:, a], trip[:, b]
    inv_beta = ((TM[ends_a, ends_b] - 2.0 * C[:, a] - 2.0 * C[:, b]) / M
                - t[:, a] - t[:, b])
    return C, t, inv_beta


def pooled(keys, values, size):
    """Mean, sample standard deviation (0 for one value), min, max and count of `values` grouped
    by integer `keys` in [0, size); groups without values get NaN and count 0."""
    keys, values = np.ravel(keys), np.ravel(values).astype(np.float64)
    count = np.bincount(keys, minlength=size)
    total = np.bincount(keys, weights=values, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / count
        dev = values - mean[keys]
        var = np.bincount(keys, weights=dev * dev, minlength=size) / np.maximum(count - 1, 1)
    low, high = np.full(size, np.inf), np.full(size, -np.inf)
    np.minimum.at(low, keys, values)
    np.maximum.at(high, keys, values)
    empty = count == 0
    for a in (low, high):
        a[empty] = np.nan
    return {"mean": mean, "std": np.sqrt(var), "min": low, "max": high, "count": count}


def _symmetric(stats, n):
    """Per-link statistics keyed i * n + j (i < j) as symmetric n x n matrices (values NaN and
    count 0 on the diagonal)."""
    out = {}
    for key, flat in stats.items():
        m = np.asarray(flat).reshape(n, n)
        out[key] = m + m.T if key == "count" else np.where(np.isnan(m), m.T, m)
    return out


def estimate(T0, TM_by_size, T2_by_size):
    """The LMO parameters from measured times (µs): T0 (n, n), and per message size M the
    arrays TM (n, n) and T2 (n, n, n) (see the module text). Returns
    {"C": pooled stats (n,), "t": pooled stats (n,), "inv_beta": pooled stats (n, n)}; the
    estimate is each "mean"."""
    n = T0.shape[0]
    if n < 3:
        raise ValueError("the LMO estimation needs 3 processors or more (triplets)")
    trip = triplets(n)
    C = triplet_fixed_delays(T0, trip)
    t_keys, t_vals, b_keys, b_vals = [], [], [], []
    for M in sorted(TM_by_size):
        _, t, inv_beta = triplet_solution(T0, TM_by_size[M], T2_by_size[M], float(M), trip)
        t_keys.append(trip)
        t_vals.append(t)
        ends = trip[:, _LINKS]                                   # (T, 3, 2)
        b_keys.append(ends[..., 0] * n + ends[..., 1])
        b_vals.append(inv_beta)
    if not t_vals:
        raise ValueError("the LMO estimation needs round-trips and one-to-two experiments at "
                         "one message size M > 0 or more")
    return {"C": pooled(trip, C, n),
            "t": pooled(np.concatenate(t_keys), np.concatenate(t_vals), n),
            "inv_beta": _symmetric(pooled(np.concatenate(b_keys), np.concatenate(b_vals),
                                          n * n), n)}


def hetero_hockney(T0, TM_by_size):
    """Per-pair Hockney parameters from the same round-trips: alpha = T0 / 2 (an empty
    round-trip is two latencies), beta the least-squares slope through the origin of
    TM(M) - T0 over the sizes M (a round-trip with an empty reply is 2 alpha + beta M).
    (alpha (n, n), beta (n, n)), diagonals 0."""
    sizes = np.array(sorted(TM_by_size), dtype=np.float64)
    excess = np.stack([TM_by_size[M] - T0 for M in sorted(TM_by_size)])      # (S, n, n)
    beta = np.tensordot(sizes, excess, axes=1) / float(sizes @ sizes)
    alpha = T0 / 2.0
    for a in (alpha, beta):
        np.fill_diagonal(a, 0.0)
    return alpha, beta


def homogeneous_hockney(alpha, beta):
    """The homogeneous model of a heterogeneous cluster: the mean over the pairs i < j."""
    iu = np.triu_indices(alpha.shape[0], 1)
    return float(alpha[iu].mean()), float(beta[iu].mean())


# --- thresholds from the linear scatter / gather scan -------------------------------------------

def _prefix(x, y):
    """Prefix sums of the weighted (1 / y^2: relative residuals) normal equations."""
    w = 1.0 / (y * y)
    z = np.zeros(1)
    return [np.concatenate([z, np.cumsum(v)]) for v in (w, w * x, w * y, w * x * x, w * x * y,
                                                         w * y * y)]


def _segment_rss(sums, lo, hi):
    """Residual sum of squares and slope of the weighted line through points [lo, hi) (arrays)."""
    Sw, Sx, Sy, Sxx, Sxy, Syy = (s[hi] - s[lo] for s in sums)
    det = Sw * Sxx - Sx * Sx
    with np.errstate(invalid="ignore", divide="ignore"):
        c1 = np.where(det > 0, (Sw * Sxy - Sx * Sy) / np.where(det > 0, det, 1), 0.0)
        c0 = (Sy - c1 * Sx) / Sw
    rss = np.maximum(Syy - c0 * Sy - c1 * Sxy, 0.0)
    return rss, c0, c1


def line_fit(x, y):
    """(c0, c1) of the line through (x, y) fitted on relative residuals."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    _, c0, c1 = _segment_rss(_prefix(x, y), np.array(0), np.array(len(x)))
    return float(c0), float(c1)


def one_break(x, y):
    """The break of a one-break piecewise-linear fit: the index b of the first point of the
    right segment, or None when one line does as well (BIC, BREAK_MIN_GAIN). Every b with
    MIN_SEGMENT points on each side is scored at once."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n = len(x)
    if n < 2 * MIN_SEGMENT:
        return None
    sums = _prefix(x, y)
    one, _, _ = _segment_rss(sums, np.array(0), np.array(n))
    b = np.arange(MIN_SEGMENT, n - MIN_SEGMENT + 1)
    left, _, _ = _segment_rss(sums, np.zeros_like(b), b)
    right, _, _ = _segment_rss(sums, b, np.full_like(b, n))
    two = left + right
    best = int(np.argmin(two))
    floor = 1e-12 * n
    bic1 = n * np.log(max(float(one), floor) / n) + 2 * np.log(n)
    bic2 = n * np.log(max(float(two[best]), floor) / n) + 5 * np.log(n)
    if bic2 < bic1 and two[best] <= BREAK_MIN_GAIN * one and _distinct(sums, n, int(b[best]), x):
        return int(b[best])
    return None


def _distinct(sums, n, b, x):
    """Whether the two lines of a break differ materially: a slope that changes by more than
    BREAK_MIN_SLOPE or a jump at the break of more than BREAK_MIN_LEAP of the time (one noisy
    point on an otherwise straight series wins a relative-residual test, not this one)."""
    _, c0l, c1l = _segment_rss(sums, np.array(0), np.array(b))
    _, c0r, c1r = _segment_rss(sums, np.array(b), np.array(n))
    left, right = c0l + c1l * x[b], c0r + c1r * x[b]
    slope = abs(c1r / c1l - 1.0) if c1l > 0 else np.inf
    leap = abs(right / left - 1.0) if left > 0 else np.inf
    return bool(slope > BREAK_MIN_SLOPE or leap > BREAK_MIN_LEAP)


def scatter_threshold(sizes, times):
    """S: the largest size of the small-message segment of the linear scatter, or None."""
    b = one_break(sizes, times)
    return None if b is None else int(sizes[b - 1])


def gather_thresholds(sizes, times):
    """(M1, M2): the first escalation of the linear gather and the last size before its large
    linear range; (None, None) without an escalation."""
    sizes, times = np.asarray(sizes), np.asarray(times, dtype=np.float64)
    jump = np.flatnonzero(times[1:] / times[:-1] > ESCALATION)
    if len(jump) == 0:
        return None, None
    k = int(jump[0])
    b = one_break(sizes[k + 1:], times[k + 1:])     # from the first escalated size on
    return int(sizes[k]), int(sizes[k + b]) if b is not None else int(sizes[k])
