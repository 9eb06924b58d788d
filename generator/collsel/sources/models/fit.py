"""Estimate model parameters from experiments (Nuriyev et al. 2022, section 5).

1. gamma0(P) = T_NBFT(P, s) / T_NBFT(2, s) (eq. 14), the median over the segment sizes s.
   Q (eq. 15) and gamma1 need NBFTs over the network: on one node they stay null and no
   model ever uses them (every tree link is shared memory).
2. Per method (algorithm, segment size): each bcast+gather experiment (P, m) is one row of
   eq. 19, lambda . theta = T, with lambda = coefficients of the bcast model plus those of the
   flat gather (eq. 16, 17). o0 is fixed to 0 as in the paper (with only shared memory it is
   indistinguishable from L0); columns that are zero in every row stay 0.
3. Hockney baseline: one (alpha, beta) from the P = 2 NBFT (a single point-to-point transfer).

Solver: scipy.optimize.least_squares with loss='huber' on relative residuals (row / T). SciPy
is already a dependency (scikit-learn would be a new one), and least_squares takes bounds, so
the physical parameters stay >= 0, which HuberRegressor cannot enforce. Relative residuals keep
the microsecond rows from being drowned by the millisecond ones (the paper's remark in 6.3).
"""
import numpy as np

from collsel.sources.models import params
from collsel.sources.models.bcast import Platform, TLOP_PARAMS, flat_gather_coefficients, tlop_coefficients
from collsel.sources.models.experiments import SEGMENT_SIZES, mean_over_launches

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


def fit_gamma0(rows):
    nbft = {(r["comm_size"], r["msg_size"]): r["time_us"] for r in rows
            if r["experiment"] == "nbft"}
    gamma = {}
    for P in sorted({p for p, _ in nbft if p > 2}):
        ratios = [nbft[(P, s)] / nbft[(2, s)] for s in SEGMENT_SIZES
                  if (P, s) in nbft and (2, s) in nbft]
        if ratios:
            gamma[P] = float(np.clip(np.median(ratios), 1.0, P - 1))
    return gamma


def fit_hockney(rows):
    pts = [(r["msg_size"], r["time_us"]) for r in rows
           if r["experiment"] == "nbft" and r["comm_size"] == 2]
    s = np.array([p[0] for p in pts], dtype=np.float64)
    t = np.array([p[1] for p in pts])
    alpha, beta = huber_fit(np.column_stack([np.ones_like(s), s]), t)
    return {"alpha": float(alpha), "beta": float(beta)}


def fit_method(rows, platform):
    """tau-Lop parameters of one method from its bcast+gather rows."""
    A = np.array([tlop_coefficients(r["algorithm"], r["comm_size"], r["msg_size"],
                                    r["segsize"], platform)
                  + flat_gather_coefficients(r["comm_size"], r["gather_size"], platform)
                  for r in rows])
    y = np.array([r["time_us"] for r in rows])
    free = np.flatnonzero((np.abs(A).sum(axis=0) > 0) & (np.array(TLOP_PARAMS) != "o0"))
    theta = np.zeros(len(TLOP_PARAMS))
    theta[free] = huber_fit(A[:, free], y)
    pred = A @ theta
    return theta, float(np.median(np.abs(pred / y - 1.0)))


def fit(rows, chain_fanout=4, knomial_radix=4):
    """The parameter document (see params.py) from experiment rows."""
    gamma0 = fit_gamma0(rows)
    platform = Platform(gamma0, None, None, None, chain_fanout, knomial_radix)
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
    return {
        "platform": {"ranks_per_node": None, "Q": None,
                     "gamma0": {str(k): round(v, 4) for k, v in sorted(gamma0.items())},
                     "gamma1": {}, "chain_fanout": chain_fanout, "knomial_radix": knomial_radix},
        "methods": methods,
        "hockney": {k: float(f"{v:.6g}") for k, v in fit_hockney(rows).items()},
    }


def parameter_document(rows, meta, experiments_file=""):
    """The parameter file (params.py) fitted from experiment rows (one per point and launch),
    with how it was made under "fit": `meta` (the experiments' metadata) and the counts."""
    meta = dict(meta)
    meta["comm_sizes"] = ",".join(map(str, sorted({r["comm_size"] for r in rows
                                                    if r["experiment"] == "bcast-gather"})))
    doc = fit(mean_over_launches(rows))
    n_nbft = sum(r["experiment"] == "nbft" for r in rows)
    return {"format": params.FORMAT, "version": params.VERSION, "name": "fitted",
            "source": "collsel model fit: experiments of Nuriyev et al. 2022 section 5 on this "
                      "machine (NBFT for gamma0, bcast + flat gather per method, Huber fit)",
            **doc,
            "fit": {"measurements": len(rows), "nbft_measurements": n_nbft,
                    "bcast_gather_measurements": len(rows) - n_nbft,
                    "experiments_file": experiments_file or "", **{
                        k: v for k, v in meta.items() if k not in ("source",)}}}
