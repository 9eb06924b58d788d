"""`collsel tune`'s stages, run in order, each skipped when DIR/progress.json records it done:
per collective the coarse sweep, its refinement, the recommended tree and its blob, then (live)
the deploy file and each report, or (replayed) each anytime curve; and the dry runs of every
sweep before anything is written (`preflight`). Each step is collsel.pipeline's, so what tune
writes is what the commands write; what the commands print of a step goes into the collective's
log through the command's own printers (Printers). The tune's progress lines go to stderr, as
the sweep's do."""
from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable

from collsel import pipeline
from collsel.core.mpi import intel_algorithms
from collsel.core.trees import extrapolation
from collsel.core.io.files import write_file
from collsel.errors import CollselError, InputError
from collsel.sinks.emit import mpich_json
from collsel.sinks.emit.ompi_rules_reader import COLLECTIVE_IDS
from collsel.sources.sweep import estimate, racing
from collsel.sources.sweep.engine import PointsFailed
from collsel.pipeline.sweeping import SweepRequest
from collsel.pipeline.tune import curve, densify, layout, profile_region, refinement, summary
from collsel.pipeline.tune.plan import Grid, TunePlan
from collsel.pipeline.tune.planning import POST_S


@dataclass(frozen=True)
class Printers:
    """What the command prints of each step's result (the commands' own printers, so a tune's
    log holds what `collsel build`, `emit` and `report` print), and how it reads --score's
    build flags into the curve's scoring configuration."""
    sweep: Callable[[Any], int]            # a SweepResult; returns its exit status
    built: Callable[[Any], None]           # a BuildResult
    emitted: Callable[[str, Any, Any], None]    # (out, pipeline.emit's result, its options)
    report: Callable[[Any], None]          # a ReportResult
    score_config: Callable[[str], Any]     # --score's text -> core.evaluate.build_config.Config


_SWEEP_FIELDS = {f.name for f in dataclasses.fields(SweepRequest)}


def sweep_request(out: str, plan: TunePlan, grid: Grid, refine_s: float | None = None,
                  dry_run: bool = False) -> SweepRequest:
    """The sweep of `grid` into its table in tune DIR `out` (its --refine within `refine_s`
    seconds when given), resumed when the table exists. The plan records the sweep's options
    as `--flag=value` words, each the request's field of that flag; the grid's values come after
    them (tests/unit/pipeline/test_pipeline.py holds this the sweep parser's request of the same
    flags)."""
    table = layout.table(out, grid.collective)
    fields = {}
    for word in plan.sweep_options:
        flag, is_set, value = word.partition("=")
        name = flag[2:].replace("-", "_")
        if not (flag.startswith("--") and is_set and name in _SWEEP_FIELDS):
            raise InputError(f"{os.path.join(out, layout.PLAN)}: sweep option {word!r} is not "
                             "one of collsel sweep's (--FLAG=VALUE)")
        fields[name] = value
    # the grid's own values after the recorded options, as text as the flags would give them
    fields.update(launches=str(grid.launches), mode=grid.mode)
    strategy = plan.strategy or racing.DEFAULT     # a tune.json of an older collsel: none
    if grid.comm_sizes:
        fields["comm_sizes"] = ",".join(map(str, grid.comm_sizes))
    if grid.algorithms:
        fields["algorithms"] = grid.algorithms
    if grid.mode == "paired" and strategy != racing.DEFAULT:
        fields["strategy"] = strategy
    if grid.msg_sizes and tuple(grid.msg_sizes) != (0,):
        fields["msg_sizes"] = ",".join(map(str, grid.msg_sizes))
    if refine_s is not None:
        fields["refine"] = f"{refine_s:.0f}s"
    return SweepRequest(collective=grid.collective, out=table, resume=os.path.exists(table),
                        dry_run=dry_run, **fields)


def run_sweep(request: SweepRequest, printers: Printers, stdout=None) -> int:
    """The sweep `request` in this process, printed as `collsel sweep` prints it (to `stdout`
    when given); returns its exit status."""
    with contextlib.redirect_stdout(stdout or sys.stdout):
        return printers.sweep(pipeline.sweep(request))


def preflight(plan: TunePlan, printers: Printers) -> list[str]:
    """Every sweep of the plan through the sweep's own checks (its --dry-run, its plan thrown
    away), before anything is written: a bad launcher option is refused now, not after an
    hour of measuring. Returns the warnings those dry runs gave, each once, and one when the
    grid has a single P (every tree would be extrapolated to every other P). A dry run that
    fails has what it said on stderr shown, and the tune stops there, naming the collective."""
    warnings = {}
    with tempfile.TemporaryDirectory(prefix="collsel-tune-") as scratch:
        for grid in plan.grids:
            os.makedirs(os.path.join(scratch, grid.collective))
            said = io.StringIO()
            try:
                with open(os.devnull, "w") as devnull, contextlib.redirect_stderr(said):
                    status = run_sweep(sweep_request(scratch, plan, grid, dry_run=True),
                                       printers, devnull)
            except CollselError:
                _echo(said)
                raise
            lines = said.getvalue().splitlines()
            if status:
                _echo(said)
                failed = [line for line in lines if not line.startswith(("warning: ", "note: "))]
                raise CollselError(f"the dry run of {grid.collective}'s sweep failed (exit "
                                   f"status {status})" + (f": {failed[0]}" if failed else ""))
            warnings.update(dict.fromkeys(line for line in lines
                                          if line.startswith("warning: ")))
    ps = {p for g in plan.grids for p in g.comm_sizes}
    if len(ps) == 1:
        warnings[f"warning: {extrapolation.tree_note(sorted(ps))}"] = None
    return list(warnings)


def _echo(said):
    """What a sweep said on stderr (a StringIO), on stderr."""
    print(said.getvalue(), file=sys.stderr, end="", flush=True)


class Stages:
    """The tune's stages in order; each is skipped when progress.json records it done. A sweep
    whose launches failed (a node lost, a launch killed by --timeout) costs those launches, not
    the tune: the stages go on with what was measured, and none of that collective's stages
    nor the deploy file is recorded done, so --resume measures them again and redoes the rest."""

    def __init__(self, out: str, plan: TunePlan, printers: Printers):
        self.out, self.plan, self.grids, self.printers = out, plan, plan.grids, printers
        self.done = layout.done(out)
        self.started = time.monotonic()
        self.lost: dict[str, str] = {}      # collective -> what its sweep said failed

    def stages(self):
        """(name, estimated seconds or None, function) of every stage, in order."""
        for g in self.grids:
            yield f"{g.collective}:coarse", g.coarse_s, lambda g=g: self.sweep(g)
        for i, g in enumerate(self.grids):
            yield f"{g.collective}:refine", g.refine_s, lambda i=i: self.refine(i)
        for i, g in enumerate(self.grids):
            if g.mode == "paired" and g.comm_sizes:
                # (no estimate of its own: it spends what the refinement left of the budget)
                yield f"{g.collective}:densify", None, lambda i=i: self.densify(i)
        for g in self.grids:
            yield f"{g.collective}:tree", POST_S / 2, lambda g=g: self.tree(g.collective)
        if self.plan.replayed:
            # a replay's result is its curve: no deploy file, no report (nothing ran here)
            for g in self.grids:
                yield f"{g.collective}:curve", POST_S, lambda g=g: self.curve(g.collective)
            return
        # the deploy files before the reports: each report's deploy box points at them
        yield "deploy", 1, self.deploy
        for g in self.grids:
            yield f"{g.collective}:report", POST_S / 2, lambda g=g: self.report(g.collective)

    def run(self) -> str:
        """Every stage not done; returns the summary (written to DIR/summary.txt)."""
        try:
            return self._run()
        except KeyboardInterrupt:
            # the tune's own hint, not the sweep's it was inside
            raise KeyboardInterrupt("continue with: " + shlex.join(
                ["collsel", "tune", "--resume", "--out", self.out])) from None

    def _run(self):
        todo = [s for s in self.stages() if s[0] not in self.done]
        total = len(list(self.stages()))
        for i, (name, seconds, work) in enumerate(todo):
            left = sum(s or 0 for _, s, _ in todo[i:])
            about = ("what the refinement left" if seconds is None
                     else f"about {estimate.duration(seconds)}")
            self.progress(f"[{total - len(todo) + i + 1}/{total}] {name.replace(':', ' ')} "
                          f"({about}); ETA {_clock(left)}")
            work()
            if not (name.split(":")[0] in self.lost or (name == "deploy" and self.lost)):
                layout.mark_done(self.out, name)
        text = (self.replay_summary() if self.plan.replayed
                else summary.table(self.out, self.plan)
                + profile_region.saving_lines(self.out, self.plan)) + "".join(
            f"{line}\n" for line in self.lost_lines())
        write_file(os.path.join(self.out, layout.SUMMARY), text)
        self.progress(f"done in {_clock(time.monotonic() - self.started)}; summary in "
                      f"{os.path.join(self.out, layout.SUMMARY)}")
        return text

    def progress(self, text):
        print(f"collsel tune: {text} (elapsed {_clock(time.monotonic() - self.started)})",
              file=sys.stderr, flush=True)

    def sweep(self, grid, refine_s=None):
        # every P the table asks for: a sweep run again after densifying must not shrink it
        try:
            run_sweep(sweep_request(self.out, self.plan, densify.grown(self.out, grid),
                                    refine_s), self.printers)
        except PointsFailed as e:
            self.lost[grid.collective] = str(e)
            self.progress(f"{grid.collective}: {e}; going on with what was measured")

    def lost_lines(self):
        """What the tune lost (the summary's last lines), with how to measure it again."""
        if not self.lost:
            return []
        resume = shlex.join(["collsel", "tune", "--resume", "--out", self.out])
        return [f"lost: {c}: {why}" for c, why in self.lost.items()] + [
            f"lost: {', '.join(self.lost)}: {'trees' if len(self.lost) > 1 else 'tree'} built "
            f"from what was measured; once the cause is fixed (a lost node back), {resume} "
            "measures the failed launches again and redoes what follows from them"]

    def refine(self, index):
        """Refinement of collective `index`, within its part of what the budget has left
        (pipeline/tune/refinement.py)."""
        grid = self.grids[index]
        part = refinement.share(self.out, self.plan, self.grids, index)
        if part.seconds is None:
            self.progress(f"{grid.collective}: {part.why}")
        else:
            self.sweep(grid, part.seconds)

    def densify(self, index):
        """New P where the decisions change, in rounds, within the collective's allowance
        (pipeline/tune/densify.py). A round's P go into the table's grid as its sweep starts,
        so a resumed tune first completes that round (the sweep of the grown grid), then
        chooses the next from the same table."""
        grid = self.grids[index]
        if grid.collective in self.lost:
            self.progress(f"{grid.collective}: not densified (launches of its sweep failed)")
            return
        allowed = densify.allowance(self.out, self.plan, self.grids, index)
        if not allowed.seconds:
            self.progress(f"{grid.collective}: {allowed.why}")
            return
        current = densify.grown(self.out, grid)
        if current != grid:
            self.sweep(current)         # a round a kill interrupted, completed
        rounds = 0
        while grid.collective not in self.lost:
            current, new = densify.round_of(self.out, grid, allowed.seconds)
            if not new:
                break
            rounds += 1
            self.progress(f"{grid.collective}: densify round {rounds}: P "
                          f"{','.join(map(str, new))} (between measured P whose decisions "
                          "differ)")
            self.sweep(dataclasses.replace(
                current, comm_sizes=tuple(sorted({*current.comm_sizes, *new}))))
        if not rounds:
            self.progress(f"{grid.collective}: no P added (no gap between measured P whose "
                          "decisions differ has a P to measure within the allowance)")

    def tree(self, collective):
        """The recommended tree and its blob, as `collsel build --recommend` and `collsel emit
        --target blob` write them and say it (into the collective's log). Intel MPI: a tree that
        never defers (its tuning file cannot defer one range), and no blob (libcollsel cannot
        force an Intel preset at run time)."""
        with open(layout.log(self.out, collective), "a") as log, contextlib.redirect_stdout(log):
            self.printers.built(pipeline.build_recommended(
                layout.table(self.out, collective), collective=collective,
                out=layout.tree_dir(self.out, collective), defer=self.plan.mpi != "intel"))
            if layout.has_blobs(self.plan.mpi):
                os.makedirs(layout.blobs(self.out), exist_ok=True)   # a tune of an older collsel
                self.emit("blob", [layout.tree_json(self.out, collective)],
                          layout.blob(self.out, collective))

    def emit(self, target, trees, out):
        """The trees rendered for `target` into `out`, said as `collsel emit` says it."""
        options = pipeline.emit_options(target, trees)
        rendered = pipeline.emit(target, trees, options=options)
        pipeline.write_emitted(out, rendered.files)
        self.printers.emitted(out, rendered, options)

    def curve(self, collective):
        """The anytime curve of a replayed collective (pipeline/tune/curve.py), saved."""
        from collsel.sinks.report import curve_plot     # matplotlib, only for a replay
        replayed = self.plan.replayed
        # matplotlib loads while the scoring processes work, not after them
        rows = curve.curve(collective, layout.table(self.out, collective), replayed.replay,
                           self.printers.score_config(replayed.score), replayed.full_cost_s,
                           replayed.checkpoints, self.progress, meanwhile=curve_plot.preload)
        write_file(layout.curve(self.out, collective), curve.text(rows))
        title = f"{collective}, strategy {self.plan.strategy or racing.DEFAULT}"
        write_file(layout.curve_plot(self.out, collective),
                   curve_plot.figure_svg(title, [curve_plot.curve_series(title, rows)]))

    def replay_summary(self):
        """What a replayed tune prints: the budget against the full table's cost, and each
        collective's curve (its last point is the tune's tree)."""
        plan, replayed = self.plan, self.plan.replayed
        lines = [f"replay of {replayed.replay}: budget {plan.budget} = "
                 f"{plan.budget_s:.1f} s of its full cost {replayed.full_cost_s:.1f} s "
                 f"(simulated); trees scored with '{replayed.score}' on the full table; "
                 "penalties in % against the fastest forced method"]
        for g in self.grids:
            with open(layout.curve(self.out, g.collective)) as f:
                lines += [f"{g.collective}: {layout.curve(self.out, g.collective)}", f.read()]
        return "\n".join(lines)

    def report(self, collective):
        """The report, its deploy box pointing at the tune's own files: the tree, the MPI's
        file when it holds this collective, the blob directory."""
        deployed = [f"blob={layout.blobs(self.out)}"] if layout.has_blobs(self.plan.mpi) else []
        target, name, known = self.deploy_file()
        if target and collective in known and os.path.exists(os.path.join(self.out, name)):
            deployed.append(f"{target}={os.path.join(self.out, name)}")
        with open(layout.log(self.out, collective), "a") as log, contextlib.redirect_stdout(log):
            self.printers.report(pipeline.report(pipeline.ReportRequest(
                tables=[layout.table(self.out, collective)], collective=collective, quiet=True,
                tree_dir=layout.tree_dir(self.out, collective), deployed=deployed,
                out=layout.report_dir(self.out, collective))))

    def deploy_file(self):
        """(emit target, file name in DIR, the collectives it can hold) of the MPI's own
        deployment file, or (None, None, ()) when the MPI has none."""
        if self.plan.mpi == "openmpi":
            return "ompi-rules", layout.RULES, COLLECTIVE_IDS
        if self.plan.mpi == "mpich":
            return "mpich-json", layout.MPICH, mpich_json.MPICH_NAMES
        if self.plan.mpi == "intel":
            return "intel-json", layout.INTEL, intel_algorithms.INTEL_ALGORITHMS
        return None, None, ()

    def deploy(self):
        """Open MPI: one rules file for every collective; MPICH: the selection file of the
        collectives it maps; Intel MPI: its JSON tuning file."""
        target, name, known = self.deploy_file()
        if target is None:
            self.progress(f"no deployment file for --mpi {self.plan.mpi}: its trees, blobs "
                          f"and reports are in {self.out}")
            return
        trees = [layout.tree_json(self.out, c) for c in self.plan.collectives if c in known]
        outside = [c for c in self.plan.collectives if c not in known]
        if outside:
            self.progress(f"{name} holds {len(trees)} of the collectives; left out (emit "
                          f"--target {target} maps none of their algorithms): "
                          f"{', '.join(outside)}; their trees, blobs and reports are in {self.out}")
        if not trees:
            return
        with open(os.path.join(self.out, layout.DEPLOY_LOG), "w") as log, \
                contextlib.redirect_stdout(log):
            self.emit(target, trees, os.path.join(self.out, name))


def _clock(seconds):
    seconds = int(max(seconds, 0))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"
