"""Hockney models of the Open MPI reduce algorithms and their hierarchical transformation.

From Hasanov and Lastovetsky, "Hierarchical Optimization of MPI Reduce Algorithms" (section 2.1
eqs. 1-7, section 3 eqs. 8-11): a transfer of m bytes costs alpha + m beta, reducing it costs
m gamma; X is the number of segments. All functions take NumPy arrays or scalars.

Hierarchical transformation with G groups of p/G processes (same algorithm inside the groups,
in parallel, then between the G group leaders): F(G) = T(p/G) + T(G). `optimal_groups`
searches the divisors of p (the paper assumes G divides p), which for flat/linear/pipeline
agrees with the paper's closed form G = sqrt(p) when p is a perfect square.
"""
import numpy as np

REDUCE_MODELS = ("flat", "linear", "pipeline", "binary", "binomial", "rabenseifner")


def _step(m, alpha, beta, gamma):
    return alpha + m * beta + m * gamma


def flat(p, m, alpha, beta, gamma, X=1):
    """Eq. 1 (X = 1) and eq. 2 (segmented): X (p-1) (alpha + m/X (beta + gamma))."""
    return X * (p - 1) * _step(np.divide(m, X), alpha, beta, gamma)


def linear(p, m, alpha, beta, gamma):
    """Eq. 3, the chain: (p-1)(alpha + m (beta + gamma))."""
    return (p - 1) * _step(m, alpha, beta, gamma)


def pipeline(p, m, alpha, beta, gamma, X):
    """Eq. 4: (p + X - 2)(alpha + m/X (beta + gamma))."""
    return (p + X - 2) * _step(np.divide(m, X), alpha, beta, gamma)


def binary(p, m, alpha, beta, gamma, X=1):
    """Eq. 5: 2 (log2(p+1) + X - 2)(alpha + m/X (beta + gamma))."""
    return 2 * (np.log2(np.add(p, 1)) + X - 2) * _step(np.divide(m, X), alpha, beta, gamma)


def binomial(p, m, alpha, beta, gamma):
    """Eq. 6: log2(p)(alpha + m (beta + gamma))."""
    return np.log2(p) * _step(m, alpha, beta, gamma)


def rabenseifner(p, m, alpha, beta, gamma):
    """Eq. 7: 2 log2(p) alpha + 2 (p-1)/p m beta + (p-1)/p m gamma."""
    p = np.asarray(p, dtype=np.float64)
    return 2 * np.log2(p) * alpha + 2 * (p - 1) / p * m * beta + (p - 1) / p * m * gamma


def model(name):
    try:
        return {"flat": flat, "linear": linear, "pipeline": pipeline, "binary": binary,
                "binomial": binomial, "rabenseifner": rabenseifner}[name]
    except KeyError:
        raise ValueError(f"no reduce model '{name}' (known: {', '.join(REDUCE_MODELS)})") from None


def hierarchical(name, p, G, m, alpha, beta, gamma, **kw):
    """F(G): the reduce inside groups of p/G processes, then between the G leaders."""
    f = model(name)
    return f(np.divide(p, G), m, alpha, beta, gamma, **kw) + f(G, m, alpha, beta, gamma, **kw)


def flat_hierarchical_closed_form(p, m, alpha, beta, gamma):
    """Eq. 8: (G + p/G - 2)(alpha + m (beta + gamma)); its optimum eq. 9 at G = sqrt(p)."""
    G = np.sqrt(p)
    return G, (2 * G - 2) * _step(m, alpha, beta, gamma)


def optimal_groups(name, p, m, alpha, beta, gamma, **kw):
    """(G, time) minimising F(G) over the divisors G of p (G = 1 and G = p are the original
    algorithm). Ties go to the smallest G."""
    divisors = np.array([g for g in range(1, int(p) + 1) if p % g == 0])
    times = np.array([hierarchical(name, p, g, m, alpha, beta, gamma, **kw) if 1 < g < p
                      else model(name)(p, m, alpha, beta, gamma, **kw) for g in divisors])
    best = int(np.argmin(times))
    return int(divisors[best]), float(times[best])


# Open MPI coll/tuned ids -> the model of its flat tree (section 2.1): reduce linear is the flat
# tree (the root receives from every rank), chain the paper's linear tree; bcast uses the same
# trees without the reduction term (gamma = 0).
OPENMPI_MODELS = {
    "reduce": {1: "flat", 2: "linear", 3: "pipeline", 4: "binary", 5: "binomial",
               7: "rabenseifner"},
    "bcast": {1: "flat", 2: "linear", 3: "pipeline", 5: "binary", 6: "binomial"},
}


def model_groups(collective, algorithm, p, m, alpha, beta, gamma, segsize=0):
    """The model's optimal G for the hierarchical form of a coll/tuned algorithm used at both
    levels (None when the algorithm has no model): optimal_groups with X = m / segsize segments
    for the segmented models (1 without a segment size)."""
    name = OPENMPI_MODELS.get(collective, {}).get(algorithm)
    if name is None:
        return None
    kw = {}
    if name in ("pipeline", "binary"):
        kw["X"] = max(1, -(-int(m) // segsize)) if segsize else 1
    g = gamma if collective == "reduce" else 0.0
    return optimal_groups(name, int(p), float(m), alpha, beta, g, **kw)[0]
