"""`collsel model lmo-fit --cluster` on a heterogeneous emulated cluster (4 nodes, different tbf
rates and CPU shares), then lmo-check against the configuration and lmo-mapping --measure with
its measurements scored: every command runs end to end on real Open MPI across the nodes, the
ranks sit one per node, the configuration is recorded and compared link by link. Figures are
printed, not asserted (measured times; no timed assertions). Inside the cluster use lock when
other work shares the machine; the fixture `cluster_names_free` takes the session cluster down
and brings it back afterwards."""
import json
import shutil
import subprocess
import sys

import pytest

from collsel.research.models import lmo_experiments

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None or shutil.which("mpicc") is None,
                                reason="Open MPI (mpirun, mpicc) not installed; run make setup")

RATES = "n1=400mbit,n2=200mbit,n3=100mbit,n4=50mbit"
SHARES = "n1=0.5,n2=1.0,n3=0.3,n4=0.7"


def run_cli(*argv, timeout=240):
    return subprocess.run(["timeout", str(timeout), sys.executable, "-m", "collsel.cli",
                           *map(str, argv)], capture_output=True, text=True,
                          timeout=timeout + 10)


def test_lmo_fit_check_and_mapping_on_a_heterogeneous_cluster(cluster_names_free, tmp_path):
    up = run_cli("cluster", "up", "--nodes", 4, "--rates", RATES, "--cpu-shares", SHARES)
    assert up.returncode == 0, up.stderr
    exp, out = tmp_path / "e.csv", tmp_path / "lmo.json"
    done = run_cli("model", "lmo-fit", "--cluster", "--schedule", "serial",
                   "--compare-schedules", "--msg-sizes", "1M", "--scan-sizes", "none",
                   "--max-reps", 5, "--time-cap", 0.2, "--experiments", exp, "--out", out)
    assert done.returncode == 0, done.stderr[-3000:]
    rows, meta = lmo_experiments.load(exp)
    assert meta["rank_hosts"] == "n1,n2,n3,n4"
    assert meta["cluster_nodes"] == "n1:400mbit:0.5;n2:200mbit:1;n3:100mbit:0.3;n4:50mbit:0.7"
    assert {r["schedule"] for r in rows} == {"serial", "parallel"}

    measured = tmp_path / "sg.csv"
    done = run_cli("model", "lmo-mapping", out, "--msg-size", "1M", "--measure", "--cluster",
                   "--measure-sizes", "512K,1M", "--time-cap", 0.2, "--experiments", measured)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("measured") == 3, done.stdout
    sg, _ = lmo_experiments.load(measured)
    assert sorted({r["kind"] for r in sg}) == ["bgather", "bscatter", "lgather", "lscatter"]
    assert len({r["mapping"] for r in sg if r["kind"] == "bscatter"}) >= 2

    js = tmp_path / "check.json"
    done = run_cli("model", "lmo-check", out, "--measured", measured, "--json", js)
    assert done.returncode == 0, done.stderr[-3000:]
    print(done.stdout)
    doc = json.loads(js.read_text())
    links = doc["configuration"]["links"]
    assert [x["configured"] for x in links] == [25.0, 12.5, 6.25, 12.5, 6.25, 6.25]
    assert all(x["effective"] is not None for x in links)
    assert {c["schedule"] for c in doc["cost"]} == {"serial", "parallel"}
    groups = {(g["collective"], g["algorithm"]) for g in doc["prediction"]["groups"]}
    assert groups == {("scatter", "linear"), ("gather", "linear"), ("scatter", "binomial"),
                      ("gather", "binomial")}
