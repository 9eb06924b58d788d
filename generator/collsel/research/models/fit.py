"""Estimate model parameters from experiments (Nuriyev et al. 2022, section 5).

1. gamma^c(P) = T^c_NBFT(P, s) / T^c_NBFT(2, s) (eq. 14), the median over the segment sizes s,
   from the one-node NBFT (c = 0, experiment nbft) and the network NBFT (c = 1, nbft-net: the
   root alone on its node). Q = T^1_NBFT(2, s) / T^0_NBFT(2, s) (eq. 15), the median over the
   segment sizes both have, at least 1 (the paper's Q > 1; one Q for every segment size, as
   the parameter file holds one; the ratio per size is kept under "fit"). Without network
   NBFTs (one node) gamma1 is empty and Q null, and no prediction on one node uses them.
2. Per method (algorithm, segment size): each bcast+gather experiment (P, m, placement) is one
   row of eq. 19, lambda . theta = T, with lambda = coefficients of the bcast model plus those of
   the flat gather (eq. 16, 17) for the row's own placement (rank r on node r // ppn), so rows
   whose trees cross nodes carry the network columns. o0 and o1 are fixed to 0: every model here
   uses T0 = o0 + 2 L0(s) and T1 = o1 + 2 L0(s) + L1(s) whole, so o0 is indistinguishable from
   L0 (the paper's remark) and o1 from L1; columns that are zero in every row stay 0.
3. Hockney baseline: one (alpha, beta) from the P = 2 NBFT (a single point-to-point transfer):
   over the network when the experiments have it (the classic inter-node alpha, beta), else
   in shared memory.

Solver: scipy.optimize.least_squares with loss='huber' on relative residuals (row / T). SciPy
is already a dependency (scikit-learn would be a new one), and least_squares takes bounds, so
the physical parameters stay >= 0, which HuberRegressor cannot enforce. Relative residuals keep
the microsecond rows from being drowned by the millisecond ones (the paper's remark in 6.3).
"""
import numpy as np

from collsel.research.models import params
from collsel.research.models.bcast import (Platform, TLOP_PARAMS, flat_gather_coefficients,
                                          tlop_coefficients)
from collsel.research.models.experiments import SEGMENT_SIZES, mean_over_launches

HUBER_SCALE = 0.25     # relative residual beyond which a row counts as an outlier


def huber_fit(A, y, scale=HUBER_SCALE):
    """Non-negative x minimising the Huber loss of (A x - y) / y."""
    A = np.asarray(A, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    W = A / y[:, None]
    x0 = np.clip(np.linalg.lstsq(W, np.ones(len(y)), rcond=None)[0], 1e-12, None)
    colscale = np.maximum(np.abs(W).max(axis=0), 1e-300)
    from scipy.optimize import least_squares   # here: SciPy costs every command ~1 s
    res = least_squares(lambda z: (W / colscale) @ z - 1.0, x0 * colscale, loss="huber",
                        f_scale=scale, bounds=(0, np.inf), method="trf")
    return res.x / colscale


def nbft_times(rows, experiment="nbft"):
    """{(P, s): time} of one NBFT experiment (nbft: shared memory, nbft-net: network)."""
    return {(r["comm_size"], r["msg_size"]): r["time_us"] for r in rows
            if r["experiment"] == experiment}


def fit_gamma(nbft):
    """gamma(P) of one channel from its NBFT times {(P, s): time} (eq. 14)."""
    gamma = {}
    for P in sorted({p for p, _ in nbft if p > 2}):
        ratios = [nbft[(P, s)] / nbft[(2, s)] for s in SEGMENT_SIZES
                  if (P, s) in nbft and (2, s) in nbft]
        if ratios:
            gamma[P] = float(np.clip(np.median(ratios), 1.0, P - 1))
    return gamma


def channel_ratios(shm, net):
    """{s: T^1_NBFT(2, s) / T^0_NBFT(2, s)} over the segment sizes both channels have."""
    return {s: net[(2, s)] / shm[(2, s)] for s in SEGMENT_SIZES
            if (2, s) in net and (2, s) in shm}


def fit_Q(shm, net):
    """Q (eq. 15): the median channel ratio over the segment sizes, at least 1; None without
    network NBFTs."""
    ratios = channel_ratios(shm, net)
    return float(max(1.0, np.median(list(ratios.values())))) if ratios else None


def fit_hockney(rows, experiment="nbft"):
    pts = [(r["msg_size"], r["time_us"]) for r in rows
           if r["experiment"] == experiment and r["comm_size"] == 2]
    s = np.array([p[0] for p in pts], dtype=np.float64)
    t = np.array([p[1] for p in pts])
    alpha, beta = huber_fit(np.column_stack([np.ones_like(s), s]), t)
    return {"alpha": float(alpha), "beta": float(beta)}


FIXED_PARAMS = ("o0", "o1")     # folded into L0, L1 (see the module text)


def coefficient_rows(rows, platform):
    """Eq. 19's matrix: per bcast+gather row, the bcast and flat-gather coefficients over
    TLOP_PARAMS at the row's own placement (ppn ranks per node)."""
    return np.array([tlop_coefficients(r["algorithm"], r["comm_size"], r["msg_size"],
                                       r["segsize"], platform.mapped(r["ppn"]))
                     + flat_gather_coefficients(r["comm_size"], r["gather_size"],
                                                platform.mapped(r["ppn"]))
                     for r in rows])


def fit_method(rows, platform):
    """tau-Lop parameters of one method from its bcast+gather rows."""
    A = coefficient_rows(rows, platform)
    y = np.array([r["time_us"] for r in rows])
    free = np.flatnonzero((np.abs(A).sum(axis=0) > 0)
                          & ~np.isin(np.array(TLOP_PARAMS), FIXED_PARAMS))
    theta = np.zeros(len(TLOP_PARAMS))
    theta[free] = huber_fit(A[:, free], y)
    pred = A @ theta
    return theta, float(np.median(np.abs(pred / y - 1.0)))


def fit(rows, chain_fanout=4, knomial_radix=4):
    """The parameter document (see params.py) from experiment rows (one per point)."""
    shm, net = nbft_times(rows, "nbft"), nbft_times(rows, "nbft-net")
    gamma0, gamma1, Q = fit_gamma(shm), fit_gamma(net), fit_Q(shm, net)
    platform = Platform(gamma0, gamma1, Q, None, chain_fanout, knomial_radix)
    groups = {}
    for r in rows:
        if r["experiment"] == "bcast-gather":
            groups.setdefault((r["algorithm"], r["segsize"]), []).append(r)
    methods = []
    for (alg, seg), group in sorted(groups.items()):
        theta, err = fit_method(group, platform)
        methods.append({"collective": "bcast", "algorithm": alg, "segsize": seg,
                        "tlop": {k: float(f"{v:.6g}") for k, v in zip(TLOP_PARAMS, theta)},
                        "fit_rows": len(group), "fit_median_rel_error": round(err, 4)})
    hockney_channel = "nbft-net" if net else "nbft"
    return {
        "platform": {"ranks_per_node": None, "Q": None if Q is None else round(Q, 4),
                     "gamma0": _table(gamma0), "gamma1": _table(gamma1),
                     "chain_fanout": chain_fanout, "knomial_radix": knomial_radix},
        "methods": methods,
        "hockney": {k: float(f"{v:.6g}") for k, v in fit_hockney(rows, hockney_channel).items()},
    }


def _table(gamma):
    return {str(k): round(v, 4) for k, v in sorted(gamma.items())}


def placements(rows):
    """The bcast+gather placements of the experiments, as "NODESxPPN" (sorted by P, nodes)."""
    return [f"{n}x{p}" for P, n, p in sorted({(r["comm_size"], r["nodes"], r["ppn"])
                                              for r in rows
                                              if r["experiment"] == "bcast-gather"})]


def parameter_document(rows, meta, experiments_file=""):
    """The parameter file (params.py) fitted from experiment rows (one per point and launch),
    with how it was made under "fit": `meta` (the experiments' metadata) and the counts."""
    meta = dict(meta)
    meta["comm_sizes"] = ",".join(map(str, sorted({r["comm_size"] for r in rows
                                                    if r["experiment"] == "bcast-gather"})))
    points = mean_over_launches(rows)
    doc = fit(points)
    n_nbft = sum(r["experiment"] != "bcast-gather" for r in rows)
    shm, net = nbft_times(points, "nbft"), nbft_times(points, "nbft-net")
    channels = {"c0": "shared memory (one node: nbft)"}
    if net:
        channels["c1"] = "network (root alone on its node: nbft-net)"
    where = "the emulated cluster" if net else "this machine"
    return {"format": params.FORMAT, "version": params.VERSION, "name": "fitted",
            "source": f"collsel model fit: experiments of Nuriyev et al. 2022 section 5 on "
                      f"{where} (NBFT for gamma and Q, bcast + flat gather per method, "
                      "Huber fit)",
            **doc,
            "fit": {"measurements": len(rows), "nbft_measurements": n_nbft,
                    "bcast_gather_measurements": len(rows) - n_nbft,
                    "channels": channels, "placements": ",".join(placements(points)),
                    "channel_ratio_by_segsize": {str(s): round(q, 3) for s, q in
                                                 channel_ratios(shm, net).items()},
                    "hockney_from": "nbft-net P=2" if net else "nbft P=2",
                    "experiments_file": experiments_file or "", **{
                        k: v for k, v in meta.items() if k not in ("source",)}}}
