"""collsel.pipeline: the typed steps the commands and `collsel tune` share write what the
commands write; the typed requests of the sweep and the report are what their parsers make of
the same flags; tune's dry runs show a failing sweep's stderr; the refinement's budget policy
(pipeline/tune/refinement.py) answers without a sweep when there is nothing to refine."""
import argparse
import dataclasses
import io
import json
import sys

import pytest

from collsel import pipeline
from collsel.commands import report as report_command, sweep as sweep_command
from collsel.core.trees import tree
from collsel.errors import CollselError, InputError
from collsel.pipeline.tune import plan as tune_plan, refinement, stages

from helpers import run_in_process, synthetic_table


def files_of(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_build_recommended_writes_what_build_recommend_writes(tmp_path):
    table = synthetic_table(tmp_path / "t.csv", "bcast")
    api_dir, cli_dir = tmp_path / "api", tmp_path / "cli"
    got = pipeline.build_recommended(str(table), collective="bcast", out=str(api_dir))
    done = run_in_process("build", table, "--collective", "bcast", "--recommend",
                          "--out", cli_dir)
    assert done.returncode == 0, done.stderr
    api, cli = files_of(api_dir), files_of(cli_dir)
    api_stats, cli_stats = (json.loads(side.pop("stats.json")) for side in (api, cli))
    assert api == cli and "tree.json" in api
    # the recorded command names its own --out; all else is the same
    command = cli_stats["recommendation"]["command"]
    cli_stats["recommendation"]["command"] = command.replace(str(cli_dir), str(api_dir))
    assert api_stats == cli_stats == json.loads(json.dumps(got.stats))
    assert got.recommend and got.out == str(api_dir)


def test_build_prints_from_the_result(tmp_path, capsys):
    """`collsel build`'s lines are build.print_built's of pipeline.build's result: tune's log
    holds the same lines."""
    from collsel.commands import build
    table = synthetic_table(tmp_path / "t.csv", "reduce")
    done = run_in_process("build", table, "--max-depth", "2", "--out", tmp_path / "cli")
    assert done.returncode == 0, done.stderr
    built = pipeline.build([str(table)], out=str(tmp_path / "cli"),
                           options=tree.BuildOptions(max_depth=2).check())
    build.print_built(built)
    printed = capsys.readouterr()
    assert (printed.out, printed.err) == (done.stdout, done.stderr)
    assert built.dmap.collective == "reduce" and not built.recommend


def test_emit_renders_what_emit_writes(tmp_path):
    table = synthetic_table(tmp_path / "t.csv", "bcast")
    pipeline.build([str(table)], out=str(tmp_path / "tree"))
    tree_json = str(tmp_path / "tree" / "tree.json")
    done = run_in_process("emit", "--target", "blob", tree_json, "--out", tmp_path / "t.bin")
    assert done.returncode == 0, done.stderr
    emitted = pipeline.emit("blob", [tree_json])
    assert list(emitted.files.values()) == [(tmp_path / "t.bin").read_bytes()]
    pipeline.write_emitted(str(tmp_path / "api.bin"), emitted.files)
    assert (tmp_path / "api.bin").read_bytes() == (tmp_path / "t.bin").read_bytes()
    (data,) = emitted.files.values()
    assert done.stdout == f"{tmp_path / 't.bin'}: {len(data)} bytes\n"


def test_emit_options_are_checked_as_flags():
    with pytest.raises(InputError, match="--prefix"):
        pipeline.emit_options("c", ["t.json"], prefix="not an identifier")
    assert pipeline.emit_options("blob", ["t.json"]).tree_names == ("t.json",)


def test_report_request_defaults_are_the_report_commands():
    parser = argparse.ArgumentParser()
    report_command.register(parser.add_subparsers())
    parsed = vars(parser.parse_args(["report", "t.csv", "--out", "DIR"]))
    parsed.pop("run")
    assert parsed == vars(pipeline.ReportRequest(tables=["t.csv"], out="DIR"))


def test_sweep_request_defaults_are_the_sweep_commands():
    parser = argparse.ArgumentParser()
    sweep_command.register(parser.add_subparsers())
    parsed = vars(parser.parse_args(["sweep", "--collective", "bcast", "--out", "t.csv"]))
    parsed.pop("run")
    assert parsed == vars(pipeline.SweepRequest(collective="bcast", out="t.csv"))


def test_a_tunes_sweep_request_is_its_grid_after_its_recorded_options(tmp_path):
    """tune hands pipeline.sweep the request the sweep's parser makes of the plan's recorded
    options and the grid's flags after them; an option the sweep has not is refused."""
    grid = tune_plan.Grid("barrier", (2, 4), (0,), 3, 2, 3, "paired", 10.0, 5.0)
    plan = dataclasses.replace(plan_of([grid]), sweep_options=(
        "--mpi=openmpi", "--launches=9", "--time-cap=0.01"))
    (tmp_path / "barrier").mkdir()
    (tmp_path / "barrier" / "table.csv").write_text("")
    request = stages.sweep_request(str(tmp_path), plan, grid, refine_s=41.6)
    assert request == parsed_sweep(tmp_path, "barrier", plan.sweep_options, "--launches=3",
                                   "--mode=paired", "--comm-sizes=2,4", "--refine=42s",
                                   "--resume")
    assert (request.collective, request.mpi, request.launches, request.time_cap) == (
        "barrier", "openmpi", "3", "0.01")
    assert (request.mode, request.comm_sizes, request.msg_sizes, request.refine) == (
        "paired", "2,4", None, "42s")
    assert request.resume and not request.dry_run and request.strategy == "coarse-refine"
    sized = tune_plan.Grid("bcast", (2,), (1, 8), 3, 1, 3, "paired", 1.0, 0.0, "1:0")
    request = stages.sweep_request(str(tmp_path), dataclasses.replace(plan, strategy="adaptive"),
                                   sized, dry_run=True)
    assert (request.msg_sizes, request.algorithms, request.strategy) == ("1,8", "1:0",
                                                                         "adaptive")
    assert request.dry_run and not request.resume
    with pytest.raises(InputError, match="sweep option '--frobnicate=1' is not one of"):
        stages.sweep_request(str(tmp_path), dataclasses.replace(
            plan, sweep_options=("--frobnicate=1",)), grid)


def parsed_sweep(tmp_path, collective, options, *words):
    """The request the sweep's parser makes of the plan's options and the grid's words."""
    parser = argparse.ArgumentParser()
    sweep_command.register(parser.add_subparsers())
    table = str(tmp_path / collective / "table.csv")
    return sweep_command.request(parser.parse_args(
        ["sweep", f"--collective={collective}", f"--out={table}", *options, *words]))


def plan_of(grids, budget_s=15.0):
    """A TunePlan of these grids (the rest placeholders)."""
    return tune_plan.TunePlan("host h", "collsel tune", "openmpi", "local", f"{budget_s}s",
                              budget_s, tuple(g.collective for g in grids), "coarse-refine",
                              (), ("--mpi=openmpi",), tuple(grids))


def one_grid_plan(mode="paired"):
    return plan_of([tune_plan.Grid("bcast", (2, 4), (8,), 3, 2, 3, mode, 10.0, 5.0)])


def test_a_failing_dry_run_shows_what_the_sweep_said(monkeypatch, capsys):
    def fails(request, printers, stdout=None):
        assert request.dry_run
        print("warning: oversubscribed", file=sys.stderr)
        print("mpirun: cannot start", file=sys.stderr)
        return 3
    monkeypatch.setattr(stages, "run_sweep", fails)
    with pytest.raises(CollselError, match=r"the dry run of bcast's sweep failed \(exit status "
                                           r"3\): mpirun: cannot start"):
        stages.preflight(one_grid_plan(), None)
    assert capsys.readouterr().err == "warning: oversubscribed\nmpirun: cannot start\n"


def test_a_dry_run_that_raises_shows_its_stderr_first(monkeypatch, capsys):
    def raises(request, printers, stdout=None):
        print("collsel sweep: looking for the benchmark", file=sys.stderr)
        raise InputError("--mpirun /x: not found")
    monkeypatch.setattr(stages, "run_sweep", raises)
    with pytest.raises(InputError, match="/x: not found"):
        stages.preflight(one_grid_plan(), None)
    assert capsys.readouterr().err == "collsel sweep: looking for the benchmark\n"


def test_a_passing_dry_run_keeps_only_its_warnings(monkeypatch, capsys):
    def passes(request, printers, stdout=None):
        print("warning: oversubscribed\nnote: left out 5", file=sys.stderr)
        print("the plan", file=stdout or io.StringIO())
        return 0
    monkeypatch.setattr(stages, "run_sweep", passes)
    assert stages.preflight(one_grid_plan(), None) == ["warning: oversubscribed"]
    assert capsys.readouterr() == ("", "")


def test_a_per_method_collective_gets_no_refinement(tmp_path):
    plan = one_grid_plan("per-method")
    got = refinement.share(str(tmp_path), plan, plan.grids, 0)
    assert got == refinement.Refinement(None, "measured per-method, not refined")


def test_refinement_shares_what_is_left_by_undecided_cells_times_methods(tmp_path, monkeypatch):
    """The budget less the coarse sweeps and the refinements before, shared by the paired
    collectives from this one on, by undecided cells x methods (read from their sweeps)."""
    grids = [tune_plan.Grid(c, (2, 4), (8,), methods, 2, 3, "paired", 10.0, 5.0)
             for c, methods in (("bcast", 4), ("reduce", 2), ("scan", 3))]
    plan = plan_of(grids, 100.0)
    undecided = {"bcast": {2: [8]}, "reduce": {2: [8], 4: [8]}, "scan": {}}
    monkeypatch.setattr(refinement, "coarse_seconds", lambda out, g: 10.0)
    monkeypatch.setattr(refinement, "launches", lambda out, c: c)
    monkeypatch.setattr(refinement.refine, "spent", lambda meta, launches: (1, 6.0))
    monkeypatch.setattr(refinement.refine, "undecided_in_table",
                        lambda path: undecided[path.split("/")[-2]])
    # 100 - 3 x 10 s of coarse sweeps, bcast's need 4 x 1 of (4 + 2 x 2)
    assert refinement.share(str(tmp_path), plan, grids, 0).seconds == pytest.approx(70 * 4 / 8)
    # reduce: after bcast's 6 s, all that is left (scan has nothing undecided)
    assert refinement.share(str(tmp_path), plan, grids, 1).seconds == pytest.approx(64.0)
    assert refinement.share(str(tmp_path), plan, grids, 2) == refinement.Refinement(
        None, "every cell decided, nothing to refine")
    plan = plan_of(grids, 30.5)
    assert refinement.share(str(tmp_path), plan, grids, 0).why == "no budget left to refine"
