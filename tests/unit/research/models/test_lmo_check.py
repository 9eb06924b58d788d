"""`collsel model lmo-check` and what it computes (research/models/lmo_score.py, lmo_fit's
against_configuration and estimation_cost), on synthetic experiment files: no MPI, no cluster."""
import csv
import json
from pathlib import Path

import numpy as np
import pytest

from collsel.cli import main
from collsel.research.models import lmo_experiments, lmo_fit, lmo_params, lmo_predict, lmo_score
from collsel.research.models.lmo_predict import LmoModel
from test_lmo import FOUR_C, FOUR_INV_BETA, FOUR_T, synthetic_rows

CLUSTER_NODES = "n1:400mbit:0.5;n2:200mbit:1;n3:100mbit:0.3;n4:50mbit:0.7"


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    d = tmp_path_factory.mktemp("lmocheck")
    truth = LmoModel(FOUR_C, FOUR_T, FOUR_INV_BETA, S=65536)
    rows = synthetic_rows(FOUR_C, FOUR_T, FOUR_INV_BETA, (4096, 16384), scan_model=truth,
                          schedule="serial")
    rows += synthetic_rows(FOUR_C, FOUR_T, FOUR_INV_BETA, (4096, 16384))
    exp = d / "exp.csv"
    exp.write_text(lmo_experiments.save(rows, {
        "rank_hosts": "n1,n2,n3,n4", "cluster_nodes": CLUSTER_NODES, "rel_ci": "0.025",
        "wall_s": "lmo-scan 2.00; lmo serial 3.00; lmo parallel 1.50"}))
    out = d / "p.json"
    assert main(["model", "lmo-fit", "--experiments", str(exp), "--out", str(out),
                 "--schedule", "serial"]) == 0
    return d, out, truth


def measured_file(d, truth, scale):
    """Binomial scatter under two mappings and the linear scatter/gather, measured as `scale`
    times what the true model predicts."""
    rows = []
    for mapping in ([0, 1, 2, 3], [0, 2, 1, 3]):
        for m in (65536, 262144):
            for kind, gather in (("bscatter", False), ("bgather", True)):
                t = float(lmo_predict.binomial_times(truth, [mapping], [m], gather)[0, 0])
                rows.append(dict(kind=kind, mapping=lmo_experiments.mapping_text(mapping),
                                 msg_size=m, t=t))
    for m in (65536, 262144):
        rows.append(dict(kind="lscatter", mapping="", msg_size=m,
                         t=float(truth.linear_scatter([0, 1, 2, 3], [m])[0])))
    out = [{"kind": r["kind"], "root": 0, "a": -1, "b": -1, "msg_size": r["msg_size"],
            "schedule": "", "mapping": r["mapping"], "launch": 1, "mean_us": scale * r["t"],
            "median_us": scale * r["t"], "ci_halfwidth_us": 0.0, "n": 5, "ci_met": 1}
           for r in rows]
    path = d / f"measured-{scale}.csv"
    path.write_text(lmo_experiments.save(out, {}))
    return path


def test_score_is_zero_on_the_models_own_predictions_and_follows_the_mapping(fitted):
    d, out, truth = fitted
    par = lmo_params.load(out)
    rows, _ = lmo_experiments.load(measured_file(d, truth, 1.0))
    got = lmo_score.score(par, rows)
    groups = {(g["collective"], g["algorithm"], g["mapping"]): g for g in got["groups"]}
    assert set(groups) == {("scatter", "binomial", "0-1-2-3"), ("scatter", "binomial", "0-2-1-3"),
                           ("gather", "binomial", "0-1-2-3"), ("gather", "binomial", "0-2-1-3"),
                           ("scatter", "linear", "identity")}
    for g in got["groups"]:
        assert g["models"]["lmo"]["max_abs"] < 1e-3, g
    # the two mappings take different times, so scoring one under the other's map would fail
    ident, swapped = (lmo_predict.binomial_times(truth, [m], [262144])[0, 0]
                      for m in ([0, 1, 2, 3], [0, 2, 1, 3]))
    assert abs(ident / swapped - 1) > 0.01
    # the homogeneous model does not fit a heterogeneous cluster exactly
    assert groups[("scatter", "binomial", "0-2-1-3")]["models"]["hockney"]["max_abs"] > 0.01


def test_check_command_figures(fitted, capsys, tmp_path):
    d, out, truth = fitted
    js = tmp_path / "check.json"
    assert main(["model", "lmo-check", str(out), "--measured",
                 str(measured_file(d, truth, 2.0)), "--json", str(js)]) == 0
    text = capsys.readouterr().out
    doc = json.loads(js.read_text())
    # measured twice the truth: the exact model's relative error is -0.5 everywhere
    for g in doc["prediction"]["groups"]:
        assert g["models"]["lmo"]["mean_abs"] == pytest.approx(0.5, abs=1e-3)
    conf = doc["configuration"]
    assert [x["link"] for x in conf["links"]] == ["n1-n2", "n1-n3", "n1-n4", "n2-n3", "n2-n4",
                                                  "n3-n4"]
    # configured link rate = the slower node's: n1-n4 is n4's 50 mbit = 6.25 B/µs
    assert conf["links"][2]["configured"] == pytest.approx(6.25)
    ib = np.array(FOUR_INV_BETA)
    assert conf["links"][0]["beta"] == pytest.approx(1 / ib[0, 1], rel=1e-4)
    cost = {c["schedule"]: c for c in doc["cost"]}
    assert cost["serial"]["wall_s"] == 3.0 and cost["parallel"]["wall_s"] == 1.5
    assert cost["serial"]["experiments"] == 6 + 2 * (6 + 12)
    assert "n1-n4  6.25" in text and "Spearman:" in text and "estimation cost" in text


def test_check_without_cluster_and_bad_input(fitted, capsys, tmp_path):
    d, out, _ = fitted
    doc = json.loads(out.read_text())
    del doc["fit"]["cluster_nodes"]
    plain = tmp_path / "plain.json"
    plain.write_text(lmo_params.dumps(doc))
    assert lmo_fit.against_configuration(doc) is None
    assert main(["model", "lmo-check", str(plain)]) == 0
    assert "no configured truth" in capsys.readouterr().out
    # a measured file with no scatter/gather rows: one line, exit 2, no JSON written
    exp = tmp_path / "p2p.csv"
    exp.write_text(lmo_experiments.save(
        synthetic_rows(FOUR_C, FOUR_T, FOUR_INV_BETA, (4096,)), {}))
    js = tmp_path / "x.json"
    assert main(["model", "lmo-check", str(out), "--measured", str(exp), "--json", str(js)]) == 2
    assert "no measured scatter or gather rows" in capsys.readouterr().err
    assert not js.exists()


def test_check_counts_a_sweeps_measurements(fitted, tmp_path):
    """--sweep: the sweep's points x launches (its launches column summed) beside the fit's
    experiments (the scan and the schedule of the parameters)."""
    _, out, _ = fitted
    sweep = Path(__file__).resolve().parents[4] / "bench-data" / "cluster" / "bcast-nodes-ppn.csv"
    rows = list(csv.DictReader(line for line in sweep.open() if not line.startswith("#")))
    js = tmp_path / "c.json"
    assert main(["model", "lmo-check", str(out), "--sweep", str(sweep), "--json", str(js)]) == 0
    doc = json.loads(js.read_text())
    assert doc["sweep_cost"]["measurements"] == sum(int(r["launches"]) for r in rows)
    assert doc["sweep_cost"]["repetitions"] == sum(int(r["n"]) for r in rows)
