"""The tie rule of a paired sweep: which methods of a cell are indistinguishable from its best,
and how sure the cell's decision is.

In paired mode every launch measures all methods of a cell, so launch l gives each method a
median t[l, j] with the launch effect common to all j. The cell's best is the method with the
least mean of its launch medians (its time_us; the first in method order on equal times).
- tied (2+ launches): the paired log-ratios d_l = ln t[l, j] - ln t[l, best] over the launches
  measuring both; j is tied with the best unless the lower end of the 95 % Student-t interval of
  their mean is above 0 (j distinguishably slower). The best is tied with itself.
- tied (1 launch): the within-launch 95 % CIs (median ± ci_halfwidth_us) overlap.
- p_best (2+ launches): share of BOOTSTRAP seeded resamples of the launches (whole launches,
  which keeps the pairing) in which j has the least mean median. Empty with 1 launch.
"""
import functools
import hashlib
import warnings

import numpy as np

from collsel.sources.sweep import launch_stats

BOOTSTRAP = 1000
RULE = ("tied: 1 unless the method is distinguishably slower than the cell's best (least mean "
        "of launch medians): with 2+ launches the lower end of the 95 % paired Student-t "
        "interval of the mean per-launch log-ratio ln(t_method/t_best) is above 0; with 1 "
        "launch the within-launch CIs (median +- ci_halfwidth_us) do not overlap. p_best: share "
        f"of {BOOTSTRAP} bootstrap resamples of whole launches (seeded per cell from the sweep "
        "seed) in which the method has the least mean launch median; empty with 1 launch. All "
        "methods of a cell, the baseline included")


def cell_seed(seed, *key):
    """A uint64 seed derived from the sweep's seed and a key (deterministic across runs)."""
    text = ":".join(str(x) for x in (seed, *key)).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "little")


def _paired_interval(medians, best):
    """Per method: the mean paired log-ratio ln(t_j / t_best) over the launches measuring both,
    the half-width of its 95 % Student-t interval, and the number of such launches."""
    present = ~np.isnan(medians)
    shared = present & present[:, [best]]
    pairs = shared.sum(axis=0)
    logs = np.log(medians)
    d = np.where(shared, logs - logs[:, [best]], np.nan)
    k = np.maximum(pairs, 2)
    with warnings.catch_warnings():     # a method with < 2 shared launches: NaN, no warning
        warnings.simplefilter("ignore", RuntimeWarning)
        mean_d = np.nanmean(d, axis=0)
        sd = np.nanstd(d, axis=0, ddof=1) if d.shape[0] > 1 else np.zeros(d.shape[1])
    half = launch_stats.t975(k - 1) * np.nan_to_num(sd) / np.sqrt(k)
    return mean_d, half, pairs


def verdict(medians, cis, seed):
    """(best index, tied array of 0/1, p_best array or None) of one cell. `medians` and `cis`
    are (launches, methods) arrays, NaN where a method lacks a launch."""
    medians = np.asarray(medians, dtype=float)
    cis = np.broadcast_to(np.asarray(cis, dtype=float), medians.shape)
    best, tied, p_best = _verdict_of(medians.shape, medians.tobytes(), cis.tobytes(), seed)
    return best, tied.copy(), None if p_best is None else p_best.copy()


@functools.lru_cache(maxsize=4096)
def _verdict_of(shape, medians, cis, seed):
    """verdict of arrays given as bytes: a sweep asks again after every launch for the cells
    it did not touch, and a replay's curve for every checkpoint's cells (three quarters of the
    calls repeat one, a bootstrap each)."""
    return _verdict(np.frombuffer(medians).reshape(shape), np.frombuffer(cis).reshape(shape),
                    seed)


def _verdict(medians, cis, seed):
    means = np.nanmean(medians, axis=0)
    best = int(np.nanargmin(means))
    present = ~np.isnan(medians)
    pairs = (present & present[:, [best]]).sum(axis=0)
    if medians.shape[0] < 2 or pairs.min() < 2:
        upper = medians + cis
        lower = medians - cis
        overlap = lower <= upper[:, [best]]
        tied = np.where(present, overlap, True).all(axis=0)
        if medians.shape[0] < 2:
            tied[best] = True
            return best, tied.astype(int), None
    mean_d, half, _ = _paired_interval(medians, best)
    tied = ~(mean_d - half > 0)
    tied[best] = True
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, medians.shape[0], size=(BOOTSTRAP, medians.shape[0]))
    resampled = medians[picks]                              # (B, L, M)
    with warnings.catch_warnings():     # a method absent from a whole resample: NaN, no warning
        warnings.simplefilter("ignore", RuntimeWarning)
        boot = np.nanmean(resampled, axis=1)                # (B, M)
    boot = np.where(np.isnan(boot), np.inf, boot)
    winners = np.argmin(boot, axis=1)
    p_best = np.bincount(winners, minlength=medians.shape[1]) / BOOTSTRAP
    return best, tied.astype(int), p_best


def decided(medians, cis, seed, confidence, equivalence=0.05):
    """Whether a cell's decision is settled. With 2+ launches: the best's p_best reaches
    `confidence`, or every other method is resolved, i.e. distinguishably slower (tied = 0) or
    practically equivalent: its whole 95 % paired interval of ln(t_j / t_best) lies within
    +-ln(1 + equivalence) (two one-sided tests). Without the equivalence arm, two variants of
    one algorithm (e.g. segment sizes a small message never reaches) stay tied forever and
    refinement would spend its whole budget on them. With 1 launch: the runner-up (by mean
    launch median) is not tied."""
    medians = np.asarray(medians, dtype=float)
    if medians.shape[1] < 2:
        return True
    best, tied, p_best = verdict(medians, cis, seed)
    if p_best is None:
        means = np.nanmean(medians, axis=0)
        order = np.argsort(means, kind="stable")
        return not tied[int(order[1] if order[0] == best else order[0])]
    if p_best[best] >= confidence:
        return True
    mean_d, half, pairs = _paired_interval(medians, best)
    margin = np.log1p(equivalence)
    equivalent = (pairs >= 2) & (mean_d + half < margin) & (mean_d - half > -margin)
    others = np.arange(medians.shape[1]) != best
    return bool(np.all((tied == 0) | equivalent | ~others))
