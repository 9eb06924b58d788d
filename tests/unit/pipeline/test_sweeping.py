"""collsel.pipeline.sweep in this process: a dry run's plan and warnings come back as records
and nothing is written; a replayed sweep (sources/sweep/replay.py: no MPI) writes the table
that `collsel sweep` writes, its recorded options the result's; numbers are taken as numbers or
as their flags' text, and checked as the command checks them."""
import pathlib

import pytest

from collsel import pipeline
from collsel.core.io import csvfile
from collsel.errors import InputError

from helpers import run_in_process

RECORDED = pathlib.Path(__file__).parents[3] / "bench-data" / "paired" / "bcast-openmpi.csv"


def replayed(out, **given):
    return pipeline.SweepRequest(**{
        "collective": "bcast", "out": str(out), "replay": str(RECORDED), "comm_sizes": "2,4",
        "msg_sizes": "1,1024", "launches": 3, "progress_interval": 1000, **given})


def test_a_dry_run_returns_its_plan_and_writes_nothing(tmp_path):
    request = replayed(tmp_path / "t.csv", dry_run=True)
    result = pipeline.sweep(request)
    assert result.status == 0 and result.sbatch is None
    assert any(line.startswith("# 6 paired launches") for line in result.plan)
    assert "--replay" in result.options and "--comm-sizes 2,4" in result.options
    assert list(tmp_path.iterdir()) == []
    # the request is checked on a copy: the caller's is left as given
    assert (request.launches, request.mpi, request.algorithms) == (3, "openmpi", None)
    printed = run_in_process("sweep", "--collective", "bcast", "--out", tmp_path / "t.csv",
                             "--replay", RECORDED, "--comm-sizes", "2,4", "--msg-sizes",
                             "1,1024", "--launches", "3", "--dry-run")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.splitlines() == list(result.plan)
    assert printed.stderr.splitlines() == list(result.warnings)


def test_a_replayed_sweep_writes_the_table_its_options_recorded(tmp_path):
    result = pipeline.sweep(replayed(tmp_path / "t.csv"))
    assert result.status == 0 and result.plan is None
    table = csvfile.read(str(tmp_path / "t.csv"), "a sweep table")
    assert table.metadata["options"] == result.options
    assert (tmp_path / "t.csv.launches").exists()


def test_numbers_as_text_or_numbers_make_the_same_sweep(tmp_path):
    as_text = pipeline.sweep(replayed(tmp_path / "t.csv", time_cap="0.01", seed="7",
                                      equivalence="2", dry_run=True))
    as_numbers = pipeline.sweep(replayed(tmp_path / "t.csv", time_cap=0.01, seed=7,
                                         equivalence=2.0, dry_run=True))
    assert as_text == as_numbers
    assert "--time-cap 0.01" in as_text.options and "--equivalence 2" in as_text.options


@pytest.mark.parametrize("given, message", [
    ({"time_cap": "abc"}, "--time-cap 'abc' is not a number"),
    ({"launches": 0}, "--launches 0 out of range"),
    ({"resume": True, "force": True}, "--resume and --force contradict each other"),
    ({"raw": "r.csv"}, "--replay with --raw"),
])
def test_bad_values_are_refused_naming_their_flag(tmp_path, given, message):
    with pytest.raises(InputError, match=message):
        pipeline.sweep(replayed(tmp_path / "t.csv", dry_run=True, **given))
    assert list(tmp_path.iterdir()) == []
