"""collsel tune's plan: the time budget, its split across the collectives, and each collective's
coarse paired grid, fitted to its share with the sweep's own estimate (sources/sweep/estimate.py).

Each collective gets an equal share of --budget. Its coarse grid (every P, every method, the
coarse launches) takes at most COARSE_SHARE of that share by the estimate: the message sizes
are thinned to ever wider spacing (factors of 2, 4, 8, ... between kept sizes, the smallest
and the largest always kept) until it fits; the rest of the share is the collective's planned
refinement (`collsel sweep --refine Ns`, where cells are still undecided). At run time the
refinement gets what the coarse sweeps really left (commands/tune.py, from the journals). The
plan is made once and recorded (tune.json), so a resumed tune runs the same grids.
"""
import math
import re
from dataclasses import asdict, dataclass

from collsel.errors import InputError
from collsel.sources.sweep import estimate

COARSE_SHARE = 0.6
# Coarse launches per shape: the paired tie test needs 3 (commands/sweep: --launches).
COARSE_LAUNCHES = 3
# The spacings tried, in octaves between kept sizes (0: every size).
SPACINGS = (0, 1, 2, 3, 4, 5, 6)
MIN_SIZES = 4           # a coarser m axis than this has too little to decide on
MAX_BUDGET_S = 7 * 86400
_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?:in)?)?(?:(\d+(?:\.\d+)?)s)?")


def parse_budget(text):
    """--budget '30m', '90s', '2h', '1h30m' -> seconds; one line naming the flag otherwise."""
    match = _DURATION.fullmatch(str(text).strip().lower())
    if not match or not any(match.groups()):
        raise InputError(f"--budget {text!r}: expected a duration such as 30m, 90s, 2h or 1h30m")
    hours, minutes, seconds = (float(g or 0) for g in match.groups())
    total = 3600 * hours + 60 * minutes + seconds
    if not 0 < total <= MAX_BUDGET_S:
        raise InputError(f"--budget {text!r}: out of range (more than 0, a week at most)")
    return total


@dataclass(frozen=True)
class Grid:
    """One collective's plan: its coarse grid and budgets (seconds)."""
    collective: str
    msg_sizes: tuple
    methods: int
    shapes: int                 # communicator sizes (nodes x ppn pairs) per round
    launches: int
    coarse_s: float             # the sweep's estimate of the coarse grid
    refine_s: float             # the refinement budget: the rest of the share

    def to_json(self):
        return {**asdict(self), "msg_sizes": list(self.msg_sizes)}

    @classmethod
    def from_json(cls, data):
        return cls(**{**data, "msg_sizes": tuple(data["msg_sizes"])})


def thinned(sizes, octaves):
    """The ascending `sizes` with at least 2^octaves between kept ones, from the smallest (0
    counts as 1), and the largest."""
    kept = [sizes[0]]
    for m in sizes[1:]:
        if math.log2(max(m, 1)) - math.log2(max(kept[-1], 1)) >= octaves:
            kept.append(m)
    return tuple(kept if kept[-1] == sizes[-1] else kept + [sizes[-1]])


def coarse_estimate(shapes, sizes, methods, launches, launcher_name, time_cap):
    planned = [("", len(sizes) * methods)] * (shapes * launches)
    return estimate.wall_seconds(planned, launcher_name, time_cap)


def fit(collective, methods, shapes, msg_sizes, share_s, launches, launcher_name, time_cap):
    """The Grid of `collective` within its share: the finest thinning of `msg_sizes` whose
    estimate fits COARSE_SHARE x share; InputError (with the budget it would need) when even
    the coarsest does not."""
    allowed = COARSE_SHARE * share_s
    tried = []
    for octaves in SPACINGS:
        sizes = thinned(msg_sizes, octaves)
        if tried and sizes == tried[-1][0]:
            continue
        if tried and len(sizes) < MIN_SIZES:
            break
        tried.append((sizes, coarse_estimate(shapes, sizes, methods, launches,
                                             launcher_name, time_cap)))
        if tried[-1][1] <= allowed:
            return Grid(collective, sizes, methods, shapes, launches,
                        round(tried[-1][1], 1), round(share_s - tried[-1][1], 1))
    sizes, seconds = tried[-1]
    raise BudgetTooSmall(collective, len(sizes), seconds / COARSE_SHARE)


class BudgetTooSmall(InputError):
    def __init__(self, collective, sizes, share_needed_s):
        self.collective, self.sizes, self.share_needed_s = collective, sizes, share_needed_s
        super().__init__(collective)


def plan(collectives, methods_of, shapes, msg_sizes, budget_s, launches, launcher_name,
         time_cap, budget_text):
    """[Grid] of every collective (in the given order), the budget split equally."""
    share = budget_s / len(collectives)
    grids, short = [], []
    for c in collectives:
        try:
            grids.append(fit(c, methods_of[c], shapes, msg_sizes, share, launches,
                             launcher_name, time_cap))
        except BudgetTooSmall as e:
            short.append(e)
    if short:
        worst = max(short, key=lambda e: e.share_needed_s)
        need = worst.share_needed_s * len(collectives)
        raise InputError(
            f"--budget {budget_text}: too small for {len(collectives)} collective(s): "
            f"{worst.collective}'s coarsest grid ({shapes} communicator sizes x {worst.sizes} "
            f"sizes x {methods_of[worst.collective]} methods x {launches} launches) needs "
            f"about {estimate.duration(worst.share_needed_s)} of an equal share, "
            f"{estimate.duration(need)} in all; give --budget {_minutes(need)} or more, "
            "fewer --collectives, --comm-sizes or --msg-sizes, or a smaller --time-cap")
    return grids


def _minutes(seconds):
    """A --budget at least `seconds` long, in whole seconds below 2 minutes, else minutes."""
    return f"{math.ceil(seconds)}s" if seconds < 120 else f"{math.ceil(seconds / 60)}m"
