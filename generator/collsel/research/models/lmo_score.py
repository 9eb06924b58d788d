"""Prediction accuracy of the LMO model and of the two Hockney models fitted from the same
round-trips, on measured scatter and gather (Lastovetsky & Rychkov 2009, section 6): every
lscatter / lgather row (linear, rank r on processor r, root 0: collsel_bench --experiment
lmo-scan) and bscatter / bgather row (binomial under the row's mapping: --experiment
lmo-binomial) of an LMO experiment file, predicted by each model at its message size, relative
error = predicted / measured - 1, summarised per (collective, mapping) and model as the mean and
max of its absolute value.
"""
import numpy as np

from collsel.errors import InputError
from collsel.research.models import lmo_predict

SCORED_KINDS = {"lscatter": ("linear", "scatter"), "lgather": ("linear", "gather"),
                "bscatter": ("binomial", "scatter"), "bgather": ("binomial", "gather")}


def _mapping(row, n):
    text = row["mapping"] or "identity"
    if text == "identity":
        return list(range(n)), "identity"
    procs = [int(x) for x in text.split("-")]
    if len(procs) != n or sorted(procs) != list(range(n)):
        raise InputError(f"mapping {text}: not a permutation of the {n} processors of the "
                         "parameter file")
    return procs, text


def predicted(model, kind, procs, m):
    """One model's time (µs) of a measured row's collective at m bytes per rank."""
    algorithm, collective = SCORED_KINDS[kind]
    if algorithm == "linear":
        f = model.linear_scatter if collective == "scatter" else model.linear_gather
        return float(f(procs, np.array([float(m)]))[0])
    return float(lmo_predict.binomial_times(model, np.array([procs]), np.array([float(m)]),
                                            gather=collective == "gather")[0, 0])


def score(par, rows, statistic="median"):
    """{"groups": [{"algorithm", "collective", "mapping", "sizes", "models": {name: {"mean_abs",
    "max_abs"}}}], "points": [...]} over every scored row of `rows` (lmo_experiments rows),
    with par an lmo_params.LmoParams. The measured time is the row's median (or mean)."""
    key = f"{statistic}_us"
    groups, points = {}, []
    for r in rows:
        if r["kind"] not in SCORED_KINDS:
            continue
        procs, label = _mapping(r, par.n)
        algorithm, collective = SCORED_KINDS[r["kind"]]
        point = {"algorithm": algorithm, "collective": collective, "mapping": label,
                 "msg_size": r["msg_size"], "measured_us": r[key], "predicted_us": {},
                 "rel_error": {}}
        for name, model in par.models.items():
            t = predicted(model, r["kind"], procs, r["msg_size"])
            point["predicted_us"][name] = float(f"{t:.6g}")
            point["rel_error"][name] = t / r[key] - 1.0
        points.append(point)
        groups.setdefault((algorithm, collective, label), []).append(point)
    if not points:
        raise InputError("no measured scatter or gather rows (lscatter, lgather, bscatter, "
                         "bgather) to score")
    out = []
    for (algorithm, collective, label), pts in sorted(groups.items()):
        models = {}
        for name in par.models:
            err = np.abs([p["rel_error"][name] for p in pts])
            models[name] = {"mean_abs": round(float(err.mean()), 4),
                            "max_abs": round(float(err.max()), 4)}
        out.append({"algorithm": algorithm, "collective": collective, "mapping": label,
                    "sizes": sorted({p["msg_size"] for p in pts}), "models": models})
    for p in points:
        p["rel_error"] = {k: round(v, 4) for k, v in p["rel_error"].items()}
    return {"groups": out, "points": points}
