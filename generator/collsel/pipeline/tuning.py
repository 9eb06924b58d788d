"""`collsel tune`'s step: plan the tune of a TuneRequest (pipeline/tune/planning.py), check
every sweep of it by its dry run, record it in --out and run its stages (pipeline/tune/
stages.py); or, with --resume, read the plan back from --out and run the stages not done; or,
with --dry-run, only plan. The command prints the TuneResult; the stages' progress, and what a
left-out collective is, go to stderr on the way."""
from __future__ import annotations

import sys
from dataclasses import dataclass

from collsel.pipeline.tune import layout, planning
from collsel.pipeline.tune.plan import TunePlan
from collsel.pipeline.tune.planning import TuneRequest
from collsel.pipeline.tune.stages import Printers, Stages, preflight

__all__ = ["Printers", "TuneRequest", "TuneResult", "run_tune"]


@dataclass(frozen=True)
class TuneResult:
    """What run_tune() did: with --dry-run, `lines` holds the plan's lines and `warnings` what
    to say first on stderr; otherwise `summary` is the summary (DIR/summary.txt) to print, and
    `lost` what the tune lost (status 1: launches failed), one line each."""
    status: int
    plan: TunePlan
    warnings: tuple[str, ...] = ()
    lines: tuple[str, ...] | None = None
    summary: str | None = None
    lost: tuple[str, ...] = ()


def run_tune(request: TuneRequest, printers: Printers) -> TuneResult:
    """Plan, check and run the tune of `request` (module docstring); `printers` are the
    command's (pipeline/tune/stages.Printers)."""
    if request.resume:
        planning.check_resume(request)
        plan = layout.load(request.out)
        if request.dry_run:
            return TuneResult(0, plan, lines=tuple(planning.plan_lines(
                plan, layout.done(request.out))))
        return _run(request.out, plan, printers)
    layout.check_new(request.out)
    plan = planning.plan(request, printers.score_config)
    warnings = tuple(preflight(plan, printers))
    if request.dry_run:
        # the sweeps' own warnings (oversubscription: the sweep's one check), as `collsel
        # sweep --dry-run` prints them, each once
        return TuneResult(0, plan, warnings, tuple(planning.plan_lines(plan)))
    layout.create(request.out, plan)
    for _, why in plan.left_out:
        print(f"collsel tune: left out: {why}", file=sys.stderr)
    return _run(request.out, plan, printers)


def _run(out: str, plan: TunePlan, printers: Printers) -> TuneResult:
    """The stages of `plan` not done in `out`; exit status 1 when launches failed."""
    stages = Stages(out, plan, printers)
    text = stages.run()
    return TuneResult(1 if stages.lost else 0, plan, summary=text,
                      lost=tuple(stages.lost_lines()))
