"""collsel.pipeline.report in this process: the result's records are what it wrote (report.json
is the Report's to_json() with its figures) and what `collsel report` prints of them; an
overview's result holds each collective's report; bad options are refused before anything is
written."""
import json

import pytest

from collsel import pipeline
from collsel.commands import report as report_command
from collsel.errors import InputError

from helpers import run_in_process, synthetic_table

SMALL = {"comm_sizes": (2, 4, 8), "msg_sizes": (1, 4096)}
QUICK = {"depths": 2, "thresholds": "90", "quiet": True}


def test_report_writes_what_its_result_holds(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    table = str(synthetic_table(tmp_path / "t.csv", "bcast", **SMALL))
    result = pipeline.report(pipeline.ReportRequest([table], out=str(tmp_path / "api"),
                                                    **QUICK))
    (one,) = result.reports
    assert result.overview is None and one.out == str(tmp_path / "api")
    assert one.report.collective == "bcast" and one.report.family == "openmpi"
    written = json.loads((tmp_path / "api" / "report.json").read_text())
    assert written.pop("figures") and written == json.loads(json.dumps(one.report.to_json()))
    assert {"report.json", "index.html"} <= set(one.files)
    assert all((tmp_path / "api" / name).is_file() for name in one.files)
    done = run_in_process("report", table, "--out", tmp_path / "cli", "--depths", "2",
                          "--thresholds", "90", "--quiet")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "cli" / "report.json").read_bytes() == (
        tmp_path / "api" / "report.json").read_bytes()
    report_command.print_result(result)
    assert capsys.readouterr().out == done.stdout.replace(str(tmp_path / "cli"),
                                                          str(tmp_path / "api"))


def test_an_overview_holds_each_collectives_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tables = [str(synthetic_table(tmp_path / f"{c}.csv", c, **SMALL)) for c in ("bcast", "reduce")]
    result = pipeline.report(pipeline.ReportRequest(tables, out=str(tmp_path / "r"), **QUICK))
    assert [one.report.collective for one in result.reports] == ["bcast", "reduce"]
    assert [one.out for one in result.reports] == [str(tmp_path / "r" / c)
                                                   for c in ("bcast", "reduce")]
    assert [row["collective"] for row in result.overview["collectives"]] == ["bcast", "reduce"]
    assert (tmp_path / "r" / "index.html").is_file()


@pytest.mark.parametrize("given, message", [
    ({"deployed": ["foo=bar"]}, "unknown target 'foo'"),
    ({"depths": 99}, "--depths 99 out of range"),
    ({"thresholds": ","}, "no percentage given"),
    ({"budget": -1.0}, "--budget -1 is not a percentage"),
])
def test_bad_options_are_refused_before_anything_is_written(tmp_path, given, message):
    table = str(synthetic_table(tmp_path / "t.csv", "bcast", **SMALL))
    with pytest.raises(InputError, match=message):
        pipeline.report(pipeline.ReportRequest([table], out=str(tmp_path / "r"), **given))
    assert not (tmp_path / "r").exists()
