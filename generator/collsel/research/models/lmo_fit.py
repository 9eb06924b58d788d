"""From LMO experiment rows (lmo_experiments) to a parameter document (lmo_params): the
equations of lmo.py on the measured times, the thresholds and slope corrections from the scan,
the heterogeneous and homogeneous Hockney models from the same round-trips, and what the
estimation cost.

Which time stands for an experiment (`statistic`): the paper averages its measurements (mean);
the default here is the median of the repetitions, because on a shared machine one preemption of
milliseconds dominates the mean of a few-microsecond round-trip (each experiment's CI target is
still met on the mean, as the paper prescribes, when the launch reports ci_met = 1).

Estimates below zero (noise can give a negative C, t or 1/beta when a term is small against the
others) are clipped to 0 in the parameters; the spread keeps the unclipped averages and the fit
counts what was clipped.
"""
import numpy as np

from collsel.errors import InputError
from collsel.cluster.config import rate_bits
from collsel.research.models import lmo, lmo_experiments
from collsel.research.models.lmo_predict import LmoModel

P2P_KINDS = ("rt0", "rt", "o2t")
STATISTICS = ("median", "mean")


def _statistic_key(statistic):
    if statistic not in STATISTICS:
        raise InputError(f"--statistic {statistic}: one of {', '.join(STATISTICS)}")
    return f"{statistic}_us"


def arrays(rows, statistic="median", schedule="parallel", where="the experiments"):
    """(T0, {M: TM}, {M: T2}, n) of one schedule's round-trip and one-to-two rows; InputError
    naming what is missing."""
    key = _statistic_key(statistic)
    p2p = [r for r in rows if r["kind"] in P2P_KINDS and r["schedule"] == schedule]
    if not p2p:
        raise InputError(f"{where}: no round-trip or one-to-two rows ({schedule} schedule)")
    n = 1 + max(max(r["root"], r["a"], r["b"]) for r in p2p)
    if n < 3:
        raise InputError(f"{where}: {n} processors; the LMO estimation needs 3 or more")
    T0 = np.full((n, n), np.nan)
    TM, T2 = {}, {}
    for r in p2p:
        i, a, b, v = r["root"], r["a"], r["b"], r[key]
        if r["kind"] == "rt0":
            T0[i, a] = T0[a, i] = v
        elif r["kind"] == "rt":
            m = TM.setdefault(r["msg_size"], np.full((n, n), np.nan))
            m[i, a] = m[a, i] = v
        else:
            m = T2.setdefault(r["msg_size"], np.full((n, n, n), np.nan))
            m[i, a, b] = m[i, b, a] = v
    off = ~np.eye(n, dtype=bool)
    idx = np.indices((n, n, n))
    distinct = (idx[0] != idx[1]) & (idx[0] != idx[2]) & (idx[1] != idx[2])
    if np.isnan(T0[off]).any():
        raise InputError(f"{where}: empty round-trips (rt0) missing for some pairs")
    if not TM or set(TM) != set(T2) or 0 in TM:
        raise InputError(f"{where}: needs round-trips (rt) and one-to-two (o2t) rows at the "
                         "same message sizes M > 0")
    for M in TM:
        if np.isnan(TM[M][off]).any() or np.isnan(T2[M][distinct]).any():
            raise InputError(f"{where}: rt or o2t rows missing at message size {M}")
    return T0, TM, T2, n


def scan_series(rows, kind, statistic):
    """(sizes, times) of one scan kind (lscatter, lgather), by size."""
    pts = sorted((r["msg_size"], r[_statistic_key(statistic)]) for r in rows
                 if r["kind"] == kind)
    return np.array([p[0] for p in pts], dtype=np.float64), np.array([p[1] for p in pts])


def auto_msg_sizes(rows, statistic="median", scan_sizes=None):
    """The sizes M of the round-trips and one-to-two experiments chosen from the scan rows
    (lmo_experiments.auto_msg_sizes at the scatter's threshold S; without a scan, as if no
    leap was found)."""
    sx, sy = scan_series(rows, "lscatter", statistic)
    S = lmo.scatter_threshold(sx, sy) if len(sx) else None
    return lmo_experiments.auto_msg_sizes(S, tuple(scan_sizes or lmo_experiments.SCAN_SIZES))


def thresholds(rows, statistic, model):
    """S, M1, M2 and the slope corrections kappa1, kappa2 (µs/B) from the scan rows, for
    `model` (an LmoModel whose thresholds are set here). kappa = the measured slope of the linear
    gather minus the model's own slope over the same sizes (the paper's fitting constants;
    its formulas for them are garbled in print, this is their stated purpose)."""
    sx, sy = scan_series(rows, "lscatter", statistic)
    gx, gy = scan_series(rows, "lgather", statistic)
    S = lmo.scatter_threshold(sx, sy) if len(sx) else None
    M1, M2 = lmo.gather_thresholds(gx, gy) if len(gx) else (None, None)
    model.S, model.M1, model.M2 = S, M1, M2
    procs = np.arange(model.n)
    kappa = [0.0, 0.0]
    for i, pick in enumerate((gx < M1 if M1 is not None else np.ones(len(gx), bool),
                              gx > M2 if M2 is not None else np.zeros(len(gx), bool))):
        if pick.sum() >= 2:
            measured = lmo.line_fit(gx[pick], gy[pick])[1]
            own = lmo.line_fit(gx[pick], model.linear_gather(procs, gx[pick], kappa=False))[1]
            kappa[i] = measured - own
    model.kappa1, model.kappa2 = kappa
    return {"scatter_S": S, "gather_M1": M1, "gather_M2": M2,
            "kappa1_us_per_byte": float(f"{kappa[0]:.6g}"),
            "kappa2_us_per_byte": float(f"{kappa[1]:.6g}"), "scan_sizes": len(sx)}


def _clip(values, counter):
    values = np.asarray(values, dtype=np.float64)
    counter[0] += int((values < 0).sum())
    return np.maximum(np.nan_to_num(values, nan=0.0), 0.0)


def _num(a, digits=6):
    """JSON-ready nested lists: NaN -> None, 6 significant digits."""
    a = np.asarray(a, dtype=np.float64)
    out = np.vectorize(lambda x: None if not np.isfinite(x) else float(f"{x:.{digits}g}"),
                       otypes=[object])(a)
    return out.tolist()


def _spread(stats):
    return {k: (np.asarray(v).tolist() if k == "count" else _num(v)) for k, v in stats.items()}


def estimate(rows, statistic="median", schedule="parallel"):
    """(LmoModel with clipped parameters, raw estimates, hockney (alpha, beta) matrices, number
    of clipped values) of one schedule's rows."""
    T0, TM, T2, n = arrays(rows, statistic, schedule)
    est = lmo.estimate(T0, TM, T2)
    clipped = [0]
    inv_beta = _clip(est["inv_beta"]["mean"], clipped)
    np.fill_diagonal(inv_beta, 0.0)
    model = LmoModel(_clip(est["C"]["mean"], clipped), _clip(est["t"]["mean"], clipped),
                     inv_beta)
    alpha, beta = lmo.hetero_hockney(T0, TM)
    return model, est, (_clip(alpha, clipped), _clip(beta, clipped)), clipped[0], sorted(TM)


def _max_rel_diff(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    scale = np.maximum(np.abs(a), np.abs(b))
    ok = scale > 0
    return float(np.max(np.abs(a - b)[ok] / scale[ok])) if ok.any() else 0.0


def _counts(rows):
    out = {}
    for r in rows:
        key = r["kind"] + (f" {r['schedule']}" if r["schedule"] else "")
        c = out.setdefault(key, {"experiments": 0, "repetitions": 0, "ci_met": 0})
        c["experiments"] += 1
        c["repetitions"] += r["n"]
        c["ci_met"] += r["ci_met"]
    return out


def document(rows, meta, statistic="median", schedule="parallel", experiments_file=""):
    """The LMO parameter document (lmo_params) from experiment rows and their metadata."""
    model, est, (alpha, beta), clipped, sizes = estimate(rows, statistic, schedule)
    limits = thresholds(rows, statistic, model)
    n = model.n
    with np.errstate(divide="ignore"):
        rate = np.where(model.inv_beta > 0, 1.0 / np.where(model.inv_beta > 0, model.inv_beta,
                                                           1.0), np.nan)
    np.fill_diagonal(rate, np.nan)
    a_hom, b_hom = lmo.homogeneous_hockney(alpha, beta)
    hosts = str(meta.get("rank_hosts", "")).split(",")
    processors = hosts if len(hosts) == n and all(hosts) else [f"rank{i}" for i in range(n)]
    fit = {"statistic": statistic, "schedule": schedule, "msg_sizes": sizes,
           "experiments": _counts(rows), "clipped_to_zero": clipped,
           "experiments_file": experiments_file or ""}
    other = "serial" if schedule == "parallel" else "parallel"
    if any(r["kind"] in P2P_KINDS and r["schedule"] == other for r in rows):
        o_model = estimate(rows, statistic, other)[0]
        fit[f"{other}_vs_{schedule}_max_rel_diff"] = {
            "C": round(_max_rel_diff(model.C, o_model.C), 4),
            "t": round(_max_rel_diff(model.t, o_model.t), 4),
            "inv_beta": round(_max_rel_diff(model.inv_beta, o_model.inv_beta), 4)}
    fit.update({k: v for k, v in meta.items() if k != "source"})
    return {
        "format": "collsel-lmo-params", "version": 1, "name": "lmo-fitted",
        "source": "collsel model lmo-fit: the LMO experiments of Lastovetsky & Rychkov 2009 "
                  "(empty and one-way round-trips, one-to-two per triplet, linear "
                  "scatter/gather scan)",
        "processors": processors,
        "lmo": {"C_us": _num(model.C), "t_us_per_byte": _num(model.t),
                "inv_beta_us_per_byte": _num(model.inv_beta),
                "beta_bytes_per_us": _num(rate)},
        "spread": {"C_us": _spread(est["C"]), "t_us_per_byte": _spread(est["t"]),
                   "inv_beta_us_per_byte": _spread(est["inv_beta"])},
        "thresholds": limits,
        "hockney_hetero": {"alpha_us": _num(alpha), "beta_us_per_byte": _num(beta)},
        "hockney": {"alpha": float(f"{a_hom:.6g}"), "beta": float(f"{b_hom:.6g}")},
        "fit": fit,
    }


def estimation_cost(doc):
    """Per schedule of the point-to-point experiments (and the scan): experiments, repetitions,
    how many met the CI target, and the wall time of their launches, from the fit section."""
    fit = doc.get("fit", {})
    wall = {}
    for part in str(fit.get("wall_s", "")).split(";"):
        label, _, seconds = part.strip().rpartition(" ")
        if label:
            wall[label] = float(seconds)
    out = []
    for label in ["lmo-scan"] + [f"lmo {s}" for s in lmo_experiments.SCHEDULES]:
        kinds = (("lscatter", "lgather") if label == "lmo-scan" else
                 tuple(f"{k} {label.split()[1]}" for k in P2P_KINDS))
        counts = [fit.get("experiments", {}).get(k) for k in kinds]
        counts = [c for c in counts if c]
        if not counts and label not in wall:
            continue
        out.append({"schedule": label.split()[-1] if label != "lmo-scan" else "scan",
                    **{k: sum(c[k] for c in counts)
                       for k in ("experiments", "repetitions", "ci_met")},
                    "wall_s": wall.get(label)})
    return out


def _ranks(x):
    return np.argsort(np.argsort(x, kind="stable"), kind="stable").astype(np.float64)


def _spearman(x, y):
    rx, ry = _ranks(x), _ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    den = np.sqrt((rx * rx).sum() * (ry * ry).sum())
    return float((rx * ry).sum() / den) if den > 0 else None


def against_configuration(doc):
    """On the emulated cluster (fit.cluster_nodes "name:rate:share;..."): the configured rate of
    link i-j is the slower of the two nodes' tbf rates (a message leaves through node i's shaped
    egress and enters through node j's shaped ingress; bytes/µs = bits/s / 8e6). Against it:
    the estimated beta_ij, and the model's whole per-byte rate of a message i -> j,
    1 / (t_i + t_j + 1 / beta_ij) (what a point-to-point prediction uses); relative error per
    link, mean and max of its absolute value. Then the rank correlation (Spearman) of C_i and
    t_i with 1 / cpu share and with 1 / the node's link rate (a node with less CPU, or a slower
    link, should have the larger delays). None off the cluster."""
    text = doc.get("fit", {}).get("cluster_nodes")
    if not text:
        return None
    nodes = [item.split(":") for item in str(text).split(";") if item]
    n = len(doc["processors"])
    if len(nodes) != n:
        return None
    configured = np.array([rate_bits(r) for _, r, _ in nodes]) / 8e6
    share = np.array([float(s) for _, _, s in nodes])
    link = np.minimum.outer(configured, configured)
    lmo_doc = doc["lmo"]
    rate = np.array(lmo_doc["beta_bytes_per_us"], dtype=np.float64)
    t = np.array(lmo_doc["t_us_per_byte"], dtype=np.float64)
    C = np.array(lmo_doc["C_us"], dtype=np.float64)
    inv_beta = np.array(lmo_doc["inv_beta_us_per_byte"], dtype=np.float64)
    per_byte = t[:, None] + t[None, :] + inv_beta
    with np.errstate(divide="ignore"):
        effective = np.where(per_byte > 0, 1.0 / np.where(per_byte > 0, per_byte, 1.0), np.inf)
    iu = np.triu_indices(n, 1)
    out = {"links": [], "node_rate_bytes_per_us": configured.tolist(),
           "cpu_share": share.tolist()}
    for key, est in (("beta", rate), ("effective", effective)):
        rel = est[iu] / link[iu] - 1.0
        finite = np.isfinite(rel)
        out[f"{key}_rel_error_mean_abs"] = (round(float(np.abs(rel[finite]).mean()), 4)
                                            if finite.any() else None)
        out[f"{key}_rel_error_max_abs"] = (round(float(np.abs(rel[finite]).max()), 4)
                                           if finite.any() else None)
        out[f"{key}_links_infinite"] = int((~finite).sum())
    for i, j in zip(*iu):
        out["links"].append({
            "link": f"{nodes[i][0]}-{nodes[j][0]}", "configured": float(link[i, j]),
            "beta": None if not np.isfinite(rate[i, j]) else float(rate[i, j]),
            "beta_rel_error": (None if not np.isfinite(rate[i, j])
                               else round(float(rate[i, j] / link[i, j] - 1), 4)),
            "effective": (None if not np.isfinite(effective[i, j])
                          else float(f"{effective[i, j]:.6g}")),
            "effective_rel_error": (None if not np.isfinite(effective[i, j])
                                    else round(float(effective[i, j] / link[i, j] - 1), 4))})
    for name, x in (("C", C), ("t", t)):
        out[f"spearman_{name}_vs_inverse_share"] = _spearman(x, 1 / share)
        out[f"spearman_{name}_vs_inverse_rate"] = _spearman(x, 1 / configured)
    return out
