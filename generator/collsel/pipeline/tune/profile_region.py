"""`collsel tune --profile FILE`: tune for one application. The profile (`collsel profile`,
core/io/profile.py reads and checks it) names the points the program calls, (collective, P, m,
ppn) with their calls and time; the tune then measures only those collectives at only those P
and m, and shares its refinement by the program's time in each collective, not by the number of
undecided cells alone. Its summary ends with what the tree should save this program.

What is measured, per collective of the profile:
  - P: the profile's communicator sizes of it (P = 1 and inter-communicators are not tuned:
    a one-rank collective has nothing to choose, coll/tuned decides intra-communicators);
  - m: the profile's message sizes of it, thinned by tune's own ladder (pipeline/tune/plan.py)
    only when the budget cannot hold them all; barrier has only m = 0. A sized collective
    whose only m is 0 (alltoallv: libcollsel and Open MPI decide it by P alone) is left out:
    the profile does not say which sizes the program sends, so no measurement can stand for it;
  - the collectives covering COVERED of the program's time in collectives, largest first; the
    tail (each a sliver of the run) is left out, with its share printed.

Weighted by time share: at run time pipeline/tune/refinement.py shares the refinement budget
among the collectives by undecided cells x methods; `refinement_weight` multiplies that by the
collective's share of the profile's time in collectives, so the collective the program spends
its time in gets the budget.

The expected saving (`saving_lines`): per profiled point, the tree's method at (P, m) and its
time measured by the tune at the nearest measured m of that P, against the MPI's default
(algorithm 0, measured alongside in the paired sweep): calls per rank x (default time - tree
time), summed, in seconds per rank and as a share of the profile's wall time. In sample: the
tree was chosen on the same measurements, so the figure is optimistic; the out-of-sample
penalty in the table above says how much of a tree's choice holds up on launches it was not
built from.
"""
from __future__ import annotations

import math
import os
from dataclasses import replace

import numpy as np

from collsel.core.io import profile
from collsel.core.maps import table as perf_table
from collsel.core.mpi import algorithms, method_text
from collsel.core.trees import treefile
from collsel.errors import InputError
from collsel.sources.measure import benchmark_program as bench
from collsel.sources.sweep import estimate
from collsel.pipeline.tune import layout, plan as tune_plan

COVERED = 0.99          # the collectives kept cover this much of the time in collectives
GRID_FLAGS = ("comm_sizes", "msg_sizes", "nodes", "ppn")


def read(path: str, family: str, replay: str | None = None, *, comm_sizes: str | None = None,
         msg_sizes: str | None = None, nodes: str | None = None,
         ppn: str | None = None) -> dict:
    """The profile FILE's region as it is recorded in tune.json: {"path", "wall_s", "ranks",
    "points": [[collective, P, m, calls_per_rank, time_s per rank], ...]}, refused in one
    line when the profile is bad, a table is replayed or a grid flag (`comm_sizes`, ...: the
    values of --comm-sizes, ..., None when not given) gives P or m as well."""
    if replay is not None:
        raise InputError(f"--profile {path} with --replay: a replay answers for its recorded "
                         "table's collective and grid, not for a profile's")
    grid = {"comm_sizes": comm_sizes, "msg_sizes": msg_sizes, "nodes": nodes, "ppn": ppn}
    for flag in GRID_FLAGS:
        if grid[flag] is not None:
            raise InputError(f"--profile {path}: the profile gives P and m; drop "
                             f"--{flag.replace('_', '-')}")
    doc = profile.read(path)
    points = [[e["collective"], e["comm_size"], e["m"], e["calls_per_rank"],
               e["time_s"] / doc["ranks"]] for e in doc["entries"]]
    return {"path": os.path.abspath(path), "library": doc["library"], "ranks": doc["ranks"],
            "wall_s": doc["wall_time_s"]["mean"], "family": family, "points": points}


def _sizeless(collective):
    return collective in bench.capabilities().sizeless


def restrict(region, collectives) -> tuple[list, list]:
    """(the collectives to tune: the profile's, of `collectives` (what --collectives and the
    MPI allow), largest time first, [[collective, why it is left out]])."""
    time_of, tunable, left_out = {}, {}, []
    for c, p, m, _, seconds in region["points"]:
        time_of[c] = time_of.get(c, 0.0) + seconds
        if p >= 2 and (m > 0 or _sizeless(c)):
            tunable[c] = tunable.get(c, 0.0) + seconds
    total = sum(time_of.values()) or 1.0
    # the coverage is of what can be tuned: time in a collective left out for another reason
    # would otherwise keep every sliver in
    reachable = sum(t for c, t in tunable.items() if c in collectives)
    kept, covered = [], 0.0
    for c in sorted(time_of, key=lambda c: -time_of[c]):
        share = f"{time_of[c] / total:.2%} of the program's time in collectives"
        if c not in collectives:
            left_out.append([c, f"{c} ({share}): not tuned here (--collectives, or the "
                                "benchmark does not measure it under this MPI)"])
        elif c not in tunable:
            left_out.append([c, f"{c} ({share}): the profile has it only on one-rank "
                                "communicators or with no message size (alltoallv: the MPI "
                                "decides it by P alone), so no measurement stands for it"])
        elif kept and covered >= COVERED * reachable:
            left_out.append([c, f"{c} ({share}): beyond the {COVERED:.0%} of the program's "
                                "time in collectives the others cover"])
        else:
            kept.append(c)
            covered += tunable[c]
    if not kept:
        raise InputError(f"--profile {region['path']}: no collective of it can be tuned: "
                         + "; ".join(why for _, why in left_out[:3]))
    return kept, left_out


def axes(region, collective) -> tuple[list, list]:
    """(the P values, the m values) the profile calls `collective` at, ascending."""
    ps, ms = set(), set()
    for c, p, m, _, _ in region["points"]:
        if c == collective and p >= 2 and (m > 0 or _sizeless(collective)):
            ps.add(p)
            ms.add(0 if _sizeless(collective) else m)
    return sorted(ps), sorted(ms)


def all_axes(region, collectives) -> tuple[list, list]:
    """(every P, every m) of the collectives: the ranges tune's checks of methods see."""
    ps, ms = set(), set()
    for c in collectives:
        p, m = axes(region, c)
        ps.update(p)
        ms.update(x for x in m if x > 0)
    return sorted(ps), sorted(ms) or [1]


def grids(region, collectives, methods_of, budget_s, launches, launcher_name, time_cap,
          budget_text, family, algorithms_of) -> list[tune_plan.Grid]:
    """[Grid] of each collective on its own profiled P and m: the finest step of tune's ladder
    whose coarse sweeps fit tune_plan.COARSE_SHARE of the budget (the profile's points as they
    are when they fit), the rest planned as refinement by time share."""
    shares = _shares(region, collectives)
    allowed = tune_plan.COARSE_SHARE * budget_s
    found = None
    for step in range(len(tune_plan.LADDER)):
        found = [tune_plan.grids_at(step, [c], methods_of, tuple(axes(region, c)[0]),
                                    len(axes(region, c)[0]), tuple(axes(region, c)[1]),
                                    launches, launcher_name, time_cap, family,
                                    algorithms_of)[0] for c in collectives]
        coarse = sum(g.coarse_s for g in found)
        if coarse <= allowed:
            paired = sum(shares[g.collective] for g in found if g.mode == "paired") or 1.0
            return [replace(g, refine_s=round((budget_s - coarse) * shares[g.collective]
                                              / paired, 1))
                    if g.mode == "paired" else g for g in found]
    need = sum(g.coarse_s for g in found) / tune_plan.COARSE_SHARE
    raise InputError(f"--budget {budget_text}: too small for the profile's "
                     f"{method_text.count_text(len(collectives), 'collective')}: their coarsest "
                     f"grids take about {estimate.duration(sum(g.coarse_s for g in found))}; "
                     f"give --budget {math.ceil(need)}s or more, or fewer --collectives")


def _shares(region, collectives):
    """{collective: its share of the kept collectives' time in the profile}."""
    seconds = {c: 0.0 for c in collectives}
    for c, _, _, _, t in region["points"]:
        if c in seconds:
            seconds[c] += t
    total = sum(seconds.values()) or 1.0
    return {c: t / total for c, t in seconds.items()}


def refinement_weight(plan: tune_plan.TunePlan, collective: str) -> float:
    """The factor the refinement (refinement.share) gives a collective's undecided cells x methods:
    its time share under --profile (so a collective the program barely calls gets little), 1
    without a profile."""
    region = plan.profile
    if not region:
        return 1.0
    return _shares(region, plan.collectives).get(collective, 0.0)


def plan_lines(plan: tune_plan.TunePlan) -> list[str]:
    """What the dry run adds under --profile: whose profile, and each collective's share."""
    region = plan.profile
    if not region:
        return []
    shares = _shares(region, plan.collectives)
    return [f"profile {region['path']}: {region['ranks']} ranks, "
            f"{region['wall_s']:.3g} s per rank; tuned by time share: "
            + ", ".join(f"{c} {shares[c]:.1%}" for c in plan.collectives)]


def _measured_time(perf, p, m, method):
    """The tune's time (us) of `method` at P = p and the measured m nearest m (log scale) at
    that P, or None when the table has no such row."""
    rows = ((perf.comm_size == p) & (perf.algorithm == method.algorithm)
            & (perf.segsize == method.segsize) & (perf.faninout == method.faninout))
    if not rows.any():
        return None
    sizes = perf.msg_size[rows].astype(float)
    nearest = np.argmin(np.abs(np.log2(np.maximum(sizes, 1)) - math.log2(max(m, 1))))
    return float(perf.time_us[rows][nearest])


def saving_lines(out: str, plan: tune_plan.TunePlan) -> str:
    """The summary's lines for the application (none without --profile): per collective the
    program's time in it per rank, the tree's expected saving against the MPI's default
    (sum over its points of calls per rank x (default time - tree time)), and the caveat."""
    region = plan.profile
    if not region:
        return ""
    default = method_text.default_name(plan.mpi)
    baseline = algorithms.Method(algorithms.BASELINE_ALGORITHM, 0, 0)
    lines = [f"for the application profiled in {region['path']} "
             f"({region['wall_s']:.3g} s per rank):",
             f"  {'collective':<22} {'in it/rank':>10} {'saving/rank':>11} {'of run':>7}  "
             f"points"]
    total = 0.0
    for c in plan.collectives:
        tree = treefile.load(layout.tree_json(out, c))
        perf = perf_table.read_table(layout.table(out, c)).select(c)
        spent = saved = 0.0
        counted = untunable = unmeasured = 0
        for name, p, m, calls, seconds in region["points"]:
            if name != c:
                continue
            spent += seconds
            if p < 2 or (m == 0 and not _sizeless(c)):
                untunable += 1          # as `restrict` and `axes` leave it out
                continue
            values = [[p], [0 if _sizeless(c) else m]][:len(tree.axes)]
            chosen = tree.methods[int(tree.decide(values)[0])]
            if chosen.algorithm == algorithms.BASELINE_ALGORITHM:
                counted += 1            # the tree defers there: it runs the default
                continue
            t_tree = _measured_time(perf, p, m, chosen)
            t_default = _measured_time(perf, p, m, baseline)
            if t_tree is None or t_default is None:
                unmeasured += 1
                continue
            counted += 1
            saved += calls * (t_default - t_tree) / 1e6
        total += saved
        lines.append(f"  {c:<22} {_seconds(spent):>10} {_seconds(saved):>11} "
                     f"{saved / region['wall_s']:>7.2%}  {counted} scored"
                     + (f", {untunable} not tunable (P = 1 or no m)" if untunable else "")
                     + (f", {unmeasured} without a measured time" if unmeasured else ""))
    lines.append(f"  expected saving against {default}: {_seconds(total)} per rank, "
                 f"{total / region['wall_s']:.2%} of the profiled run (in sample: the tune's "
                 "own measurements, on which the trees were chosen; the out-of-sample penalty "
                 "above says how much of a choice holds on other launches)")
    return "\n".join(lines) + "\n"


def _seconds(value):
    return f"{value * 1e3:.3g} ms" if abs(value) < 1 else f"{value:.3g} s"
