"""`collsel report` on an MPICH table: methods named as MPICH names them, MPICH's deploy lines
(no Open MPI target), MPICH's own decision as the baseline, the plain warning when a tree is
worse out of sample than a baseline, and a zero-penalty panel that says so."""
import html
import json
import pathlib
import re
import subprocess
import sys

import pytest

from collsel.core.mpi.algorithms import algorithm_name
from collsel.sinks.emit.deploy import deploy_line, libcollsel

REPO = pathlib.Path(__file__).resolve().parents[2]
MPICH_TABLE = REPO / "bench-data" / "paired" / "bcast-mpich.csv"


@pytest.fixture(scope="module")
def mpich(tmp_path_factory):
    out = tmp_path_factory.mktemp("mpich") / "r"
    r = subprocess.run([sys.executable, "-m", "collsel.cli", "report", str(MPICH_TABLE),
                        "--collective", "bcast", "--depths", "4", "--thresholds", "80",
                        "--quiet", "--out", str(out)], capture_output=True, text=True,
                       cwd=out.parent)
    assert r.returncode == 0, r.stderr
    page = html.unescape((out / "index.html").read_text())
    return {"json": json.loads((out / "report.json").read_text()), "page": page, "dir": out}


def box(page):
    return page[page.index('id="recommended-tree"'):page.index('id="out-of-sample"')]


def test_methods_named_in_the_tables_family(mpich):
    rep = mpich["json"]
    assert (rep["family"], rep["mpi"]) == ("mpich", "MPICH")
    by_index = {m["index"]: m for m in rep["data"]["methods"]}
    rec = rep["recommendation"]
    assert rec["methods"]
    for m in rep["data"]["methods"]:       # every method of the table, by MPICH's names
        if m["algorithm"]:
            assert m["name"] == algorithm_name("bcast", m["algorithm"], "mpich")
    for m in rec["methods"]:
        alg = by_index[m["index"]]["algorithm"]
        expect = by_index[m["index"]]["name"] if alg == 0 else algorithm_name("bcast", alg,
                                                                              "mpich")
        assert m["name"] == expect
        assert f"{m['name']}</b> in {m['cells']} of {rec['cells']} cells" in box(mpich["page"])
    # MPICH id 2 is nb (Open MPI's 2 would be chain)
    assert "nb" in {m["name"] for m in rep["data"]["methods"]}
    assert "chain" not in box(mpich["page"])


def test_mpich_deploy_lines(mpich):
    rec = mpich["json"]["recommendation"]
    assert [x["target"] for x in rec["deploy"]] == ["mpich-json", "blob", "c"]
    for x in rec["deploy"]:
        assert x["run"] == deploy_line(x["target"], x["file"], "mpich")
    assert rec["deploy"][0]["run"].startswith(
        f"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE={mpich['dir'].parent}/tree-bcast/"
        "mpich_selection.json MPIR_CVAR_DEVICE_COLLECTIVES=none mpirun.mpich")
    text = box(mpich["page"])
    assert "In sample, against MPICH's own decision" in text
    deploy = text[text.index('id="deploy"'):]
    lib, _ = libcollsel("mpich")       # absolute, the one of this checkout
    assert f"LD_PRELOAD {lib} " in deploy
    # an editable install names this checkout's library; the installed wheel says how to get one
    assert lib.endswith("build/libcollsel/mpich/libcollsel.so") or "make libcollsel" in lib
    assert "Open MPI" not in deploy and "coll_tuned" not in deploy


def test_worse_than_a_baseline_is_a_plain_warning(mpich):
    """Each (column, tree) where the tree's mean is above the MPI's own decision's or the best
    fixed method's by more than one standard error of the per-cell difference (core.evaluate.verdict:
    a gap the noise explains is no verdict) is a warning naming both figures, recomputed here
    from the table."""
    rep = mpich["json"]
    table = rep["out_of_sample"]
    rows = {r["key"]: r["cells"] for r in table["rows"]}
    expect = []
    for k, column in enumerate(table["columns"]):
        for tree in ("recommended", "exact"):
            for other in ("default", "best_fixed"):
                mine, theirs = rows[tree][k], rows[other][k]
                margin = max(1e-9, ((mine or {}).get("se_vs") or {}).get(other) or 0)
                if mine and theirs and mine["mean"] > theirs["mean"] + margin:
                    expect.append((column["label"], tree, other, mine["mean"], theirs["mean"]))
    got = [(w["column"], w["tree"], w["against"], w["tree_mean"], w["other_mean"])
           for w in rep["warnings"]]
    assert got == expect
    text = re.sub(r"<[^>]+>", "", mpich["page"])
    for w in rep["warnings"]:
        head = ("Worse than doing nothing" if w["against"] == "default"
                else "Worse than one fixed method")
        assert (f"{head} ({w['column']}): {w['tree_name']}'s mean penalty is "
                f"{w['tree_mean']:.2f} % on {w['tree_cells']} cells") in text
        assert f"{w['other_mean']:.2f} % on {w['other_cells']} cells." in text


def test_zero_penalty_panel_says_so(mpich):
    restricted = [p for p in mpich["json"]["pictured"] if p["limit"] != "exact"]
    zero = [p for p in restricted if p["panels"][0]["max"] == 0]
    assert zero                          # max depth 4 is exact on this 5 x 12 map
    svg = (mpich["dir"] / "penalty.svg").read_text()
    assert svg.count("<!-- 0 % everywhere -->") == len(zero)
    for p in restricted:
        s = p["panels"][0]
        assert f"<!-- mean {s['mean']:.2f} %, max {s['max']:.2f} % -->" in svg


def test_warning_on_stdout(tmp_path, monkeypatch, capsys):
    """A recommended tree worse than a baseline is also said on stdout, one line per finding
    (core.evaluate.verdict stubbed to find every baseline worse-off, so every column warns)."""
    from collsel import cli
    from collsel.core.evaluate import verdict
    monkeypatch.setattr(verdict, "worse_than", lambda mine, others, margins=None: [
        (name, -1.0) for name, mean in others.items() if name == "default" and mine is not None])
    out = tmp_path / "r"
    assert cli.main(["report", str(MPICH_TABLE), "--collective", "bcast", "--depths", "1",
                     "--thresholds", "80", "--quiet", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert re.search(r"\): (1 node|\d+ nodes), (1 leaf|\d+ leaves), in-sample", lines[0]), lines
    assert not re.search(r"\b1 (nodes|leaves)\b", lines[0])
    warned = [x for x in lines if ": warning: " in x]
    rep = json.loads((out / "report.json").read_text())
    columns = [c["label"] for c in rep["out_of_sample"]["columns"] if c["available"]]
    assert len(warned) == len(columns) and all(
        "the recommended tree's mean penalty" in x and "that of the MPI's own decision" in x
        and x.endswith("(-1.00%)") for x in warned), lines
    assert "Worse than doing nothing (in sample)" in (out / "index.html").read_text()
