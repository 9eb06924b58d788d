"""Extrapolation is said, never silent (issue "Lean", point 5): a tree built from one P warns in
`build`, its report and every emitted file's comments; `query` at a P outside the measured ones
notes it on stderr; `tune --dry-run` warns of oversubscription with the sweep's own line, and
of a single P."""
import json
import os

import pytest

from collsel.core.trees import extrapolation

from helpers import collsel, synthetic_table


def test_notes():
    assert extrapolation.tree_note([4]) == ("measured at P = 4 only: every P gets the decisions "
                                           "measured there (extrapolated; measure more P to "
                                           "know)")
    assert extrapolation.tree_note([2, 4, 16]) == (
        "measured at P = 2-16: above P = 16 the decisions at P = 16 are extrapolated, below "
        "P = 2 those at P = 2")
    assert extrapolation.tree_note([1, 16], 16) == ("measured at P = 1-16: above P = 16 it "
                                                    "defers to the MPI's default")
    note = extrapolation.query_note
    assert note(8, [2, 16]) is None and note(2, [2, 16]) is None       # measured range
    assert note(64, [2, 16]) == "P = 64: beyond the measured P = 2-16, extrapolated from P = 16"
    assert note(1, [2, 16]) == "P = 1: below the measured P = 2-16, extrapolated from P = 2"
    assert note(64, [2, 16], beyond_above=16) is None                  # the MPI decides there
    assert note(8, [4]) == "P = 8: extrapolated, the tree was measured at P = 4 only"
    assert note(4, [4]) is None


@pytest.fixture(scope="module")
def one_p(tmp_path_factory):
    d = tmp_path_factory.mktemp("one_p")
    table = synthetic_table(d / "t.csv", "bcast", comm_sizes=(4,))
    r = collsel("build", table, "--out", d / "tree", timeout=300)
    assert r.returncode == 0, r.stderr
    return {"dir": d, "table": table, "tree": d / "tree" / "tree.json", "build": r}


NOTE = extrapolation.tree_note([4])


def test_build_from_one_p_warns(one_p):
    assert f"collsel: warning: {one_p['dir'] / 'tree'}: {NOTE}" in one_p["build"].stderr


def test_build_from_several_p_says_where_it_extrapolates(tmp_path):
    table = synthetic_table(tmp_path / "t.csv", "bcast", comm_sizes=(2, 4, 8))
    r = collsel("build", table, "--out", tmp_path / "tree", timeout=300)
    assert r.returncode == 0, r.stderr
    assert extrapolation.tree_note([2, 4, 8]) in r.stdout.splitlines()
    assert "warning" not in r.stderr


@pytest.mark.parametrize("target, name, comment", [
    ("c", "out/decision.c", " * "), ("c-fast", "out/decision.c", " * "),
    ("ompi-dec-fixed", "dec_fixed.c", " * "), ("ompi-rules", "rules.conf", "# ")])
def test_emitted_files_say_it_in_their_comments(one_p, tmp_path, target, name, comment):
    out = tmp_path / name.split("/")[0]
    r = collsel("emit", "--target", target, one_p["tree"], "--out", out, timeout=120)
    assert r.returncode == 0, r.stderr
    text = (tmp_path / name).read_text()
    assert any(line.startswith(comment) and NOTE in line for line in text.splitlines()), text[:800]


def test_query_outside_the_measured_p_notes_it(one_p, tmp_path):
    r = collsel("query", one_p["tree"], "--comm-size", "4", "--msg-size", "64", timeout=60)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    r = collsel("query", one_p["tree"], "--comm-size", "64", "--msg-size", "64", timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("P=64 m=64: ")
    assert r.stderr == ("collsel query: note: P = 64: extrapolated, the tree was measured at "
                        "P = 4 only\n")
    table = synthetic_table(tmp_path / "t.csv", "bcast", comm_sizes=(2, 4, 8))
    assert collsel("build", table, "--out", tmp_path / "tree", timeout=300).returncode == 0
    points = tmp_path / "points"
    points.write_text("".join(f"{p} 64\n" for p in (1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15)))
    r = collsel("query", tmp_path / "tree" / "tree.json", "--points", points, "--ids",
                timeout=60)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 11
    assert r.stderr.splitlines() == [
        "collsel query: note: P = 1: below the measured P = 2-8, extrapolated from P = 2",
        *(f"collsel query: note: P = {p}: beyond the measured P = 2-8, extrapolated from P = 8"
          for p in (9, 10, 11, 12)),
        "collsel query: note: 3 more P values outside the measured P = 2-8, extrapolated"]


def test_report_of_one_p_warns(one_p):
    out = one_p["dir"] / "report"
    r = collsel("report", one_p["table"], "--quiet", "--depths", "2", "--thresholds", "80",
                "--out", out, cwd=one_p["dir"], timeout=300)
    assert r.returncode == 0, r.stderr
    data = json.loads((out / "report.json").read_text())["data"]
    assert data["extrapolation"] == {"p": "P = 4", "one_p": True, "note": NOTE}
    page = (out / "index.html").read_text()
    box = page[page.index('id="recommended-tree"'):page.index('id="out-of-sample"')]
    assert f'id="one-p"><b>Extrapolated:</b> {NOTE}.' in box


def test_tune_dry_run_warns_as_sweep_does(tmp_path):
    over = (os.cpu_count() or 1) + 1
    grid = ["--comm-sizes", f"2,{over}", "--msg-sizes", "1,64"]
    sweep = collsel("sweep", "--collective", "bcast", "--out", tmp_path / "s.csv", *grid,
                    "--dry-run", timeout=120)
    assert sweep.returncode == 0, sweep.stderr
    warning = [line for line in sweep.stderr.splitlines() if "oversubscribed" in line]
    assert len(warning) == 1, sweep.stderr
    tune = collsel("tune", "--out", tmp_path / "t", "--collectives", "bcast,reduce", *grid,
                   "--budget", "2h", "--dry-run", timeout=120)
    assert tune.returncode == 0, tune.stderr
    assert tune.stderr.splitlines() == warning          # once, though two sweeps are planned
    one = collsel("tune", "--out", tmp_path / "t", "--collectives", "bcast", "--comm-sizes",
                  "2", "--msg-sizes", "1,64", "--dry-run", timeout=120)
    assert one.returncode == 0, one.stderr
    assert f"warning: {extrapolation.tree_note([2])}" in one.stderr.splitlines()
