"""`collsel report` over several collectives: each one's report in DIR/<collective>/, the
overview page and overview.json whose figures are those of each collective's report.json and
recommendation, the refusals, and (slow) the shipped paired bcast and reduce tables."""
import json
import os
import pathlib

import pytest

from collsel import cli
from collsel.sinks.report import overview
from helpers import REPO, synthetic_table

FAST = ("--depths", "2", "--thresholds", "80", "--quiet")


def run(capsys, *argv):
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def tables(tmp_path):
    return [synthetic_table(tmp_path / "alltoall.csv", "alltoall"),
            synthetic_table(tmp_path / "barrier.csv", "barrier", msg_sizes=(0,)),
            synthetic_table(tmp_path / "allreduce.csv", "allreduce", seed=9)]


def check_rows_against_pages(out, doc):
    """Each row's figures are its collective's report.json's (held-out column) and link there."""
    for row in doc["collectives"]:
        page = out / row["link"]
        assert page.is_file()
        rep = json.loads((page.parent / "report.json").read_text())
        assert rep["collective"] == row["collective"]
        assert row["leaves"] == rep["recommendation"]["leaves"]
        assert row["cells"] == rep["data"]["cells"]["total"]
        assert row["methods"] == sum(not m["defer"] for m in rep["data"]["methods"])
        held = row["held_out"]
        cols = [c["kind"] for c in rep["out_of_sample"]["columns"] if c["available"]]
        assert held["kind"] == next(k for k in overview.HEADLINE_KINDS if k in cols)
        at = [c["kind"] for c in rep["out_of_sample"]["columns"]].index(held["kind"])
        for r in rep["out_of_sample"]["rows"]:
            if r["key"] in overview.CHOICES:
                assert held[r["key"]] == r["cells"][at]["mean"], (row["collective"], r["key"])
        crit = row["criterion"]
        assert f"criterion {crit['scored_by']}: {crit['recommended']:.2f}% mean" in \
            rep["recommendation"]["why"]


def test_overview_of_three_collectives(tmp_path, capsys):
    out = tmp_path / "rep"
    status, text, err = run(capsys, "report", *tables(tmp_path), "--out", out, *FAST)
    assert status == 0, err
    doc = json.loads((out / "overview.json").read_text())
    assert [r["collective"] for r in doc["collectives"]] == ["alltoall", "barrier", "allreduce"]
    check_rows_against_pages(out, doc)
    barrier = doc["collectives"][1]
    assert (barrier["msg_sizes"], barrier["held_out"]["kind"]) == (1, "leave_one_P_out")
    lines = text.splitlines()
    assert lines[-1] == (f"{out}/index.html: overview of 3 collectives (alltoall, barrier, "
                         f"allreduce); largest held-out gain over the default: "
                         f"{doc['largest_gain']}")
    assert lines[-5] == overview.text_lines(doc)[0]
    page = (out / "index.html").read_text()
    for coll in ("alltoall", "barrier", "allreduce"):
        assert f'<a href="{coll}/index.html">{coll}</a>' in page
        assert (out / coll / "recommended-tree.json").is_file()
    assert sorted(os.listdir(out)) == ["allreduce", "alltoall", "barrier", "index.html",
                                       "overview.json", "report-files.txt"]


def test_one_collective_named_gives_its_report_alone(tmp_path, capsys):
    out = tmp_path / "rep"
    status, text, err = run(capsys, "report", *tables(tmp_path), "--collective", "barrier",
                            "--out", out, *FAST)
    assert status == 0, err
    assert json.loads((out / "report.json").read_text())["collective"] == "barrier"
    assert not (out / "overview.json").exists()


@pytest.mark.parametrize("flag", ["--launches", "--model-table"])
def test_one_file_options_are_refused_for_an_overview(flag, tmp_path, capsys):
    given = tables(tmp_path)
    out = tmp_path / "rep"
    status, text, err = run(capsys, "report", *given, flag, given[0], "--out", out, *FAST)
    assert (status, text) == (2, "")
    assert err == (f"collsel: error: {flag}: the tables hold 3 collectives (alltoall, barrier, "
                   f"allreduce) and {flag} names files of one; give --collective for that one's "
                   "report (each table's journal TABLE.launches is found beside it)\n")
    assert not out.exists()


def test_a_collective_collsel_does_not_know_is_refused(tmp_path, capsys):
    given = tables(tmp_path)
    odd = tmp_path / "alltoallw.csv"
    odd.write_text(given[0].read_text().replace("alltoall,", "alltoallw,"))
    out = tmp_path / "rep"
    status, text, err = run(capsys, "report", given[0], odd, "--out", out, *FAST)
    assert (status, text) == (2, "")
    assert err.startswith(f"collsel: error: {odd}: unknown collective 'alltoallw' (an MPI "
                          "collective collsel has no algorithms for) (known: "
                          "allgather, ")
    assert not out.exists()


@pytest.mark.slow
def test_shipped_bcast_and_reduce_with_a_synthetic_allreduce(tmp_path, capsys):
    paired = REPO / "bench-data" / "paired"
    allreduce = synthetic_table(tmp_path / "allreduce.csv", "allreduce")
    out = tmp_path / "rep"
    status, text, err = run(capsys, "report", paired / "bcast-openmpi.csv",
                            paired / "reduce-openmpi.csv", allreduce, "--out", out, "--quiet")
    assert status == 0, err
    doc = json.loads((out / "overview.json").read_text())
    check_rows_against_pages(out, doc)
    held = {r["collective"]: r["held_out"]["kind"] for r in doc["collectives"]}
    # the journals beside the shipped tables give the across-launch figures
    assert held == {"bcast": "launches", "reduce": "launches", "allreduce": "leave_one_P_out"}
    assert pathlib.Path(out / "bcast" / "report.json").is_file()
