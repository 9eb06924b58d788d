"""pipeline.run_tune in this process, on a replayed table: it plans, records and runs the
stages, returns the summary `collsel tune` prints and writes what the command writes; a dry run
returns the plan's lines and writes nothing; a resume of a finished tune redoes nothing."""
import json
import pathlib

from collsel import pipeline
from collsel.commands import tune as tune_command
from collsel.pipeline.tune import layout

from helpers import run_in_process

REPO = pathlib.Path(__file__).resolve().parents[4]
PAIRED = REPO / "bench-data" / "paired" / "bcast-openmpi.csv"


def request(out, **more):
    return pipeline.TuneRequest(out=str(out), replay=str(PAIRED), budget="10%", score="",
                                checkpoints="2", **more)


def test_run_tune_on_a_replay_writes_what_the_command_writes(tmp_path, capsys):
    api = tmp_path / "api"
    got = pipeline.run_tune(request(api), tune_command.PRINTERS)
    assert got.status == 0 and got.lines is None
    assert got.plan.replayed and got.plan.collectives == ("bcast",)
    assert got.summary == (api / layout.SUMMARY).read_text()
    assert got.summary.startswith(f"replay of {PAIRED}: budget 10% = ")
    assert "collsel tune: [5/5] bcast curve" in capsys.readouterr().err

    cli = tmp_path / "cli"
    done = run_in_process("tune", "--out", cli, "--replay", PAIRED, "--budget", "10%",
                          "--score=", "--checkpoints", "2")
    assert done.returncode == 0, done.stderr
    assert done.stdout == got.summary.replace(str(api), str(cli))
    for name in ("bcast/curve.csv", "bcast/tree/tree.json", "bcast/log.txt",
                 "trees/bcast.bin", layout.PROGRESS):
        mine = (api / name).read_bytes().replace(str(api).encode(), str(cli).encode())
        assert mine == (cli / name).read_bytes(), name
    plans = [json.loads((d / layout.PLAN).read_text()) for d in (api, cli)]
    for plan in plans:
        plan.pop("command")
    assert plans[0] == plans[1]

    again = pipeline.run_tune(pipeline.TuneRequest(out=str(api), resume=True),
                              tune_command.PRINTERS)
    assert again.summary == got.summary
    assert "[" not in capsys.readouterr().err.split("done in")[0]


def test_a_dry_run_returns_the_plan_and_writes_nothing(tmp_path):
    out = tmp_path / "t"
    got = pipeline.run_tune(request(out, dry_run=True), tune_command.PRINTERS)
    assert got.status == 0 and got.summary is None
    assert got.lines[0].startswith("collsel tune: 1 collective (bcast), budget 10%")
    assert not out.exists()
