"""`collsel model lmo-fit` on real Open MPI, on this machine (one rank per "processor", all
here, oversubscribed on 2 cores): the benchmark's --experiment lmo / lmo-scan / lmo-binomial
run, the LMO equations are solved from what they measured, and predict / lmo-mapping read the
parameter file. Small plans (P = 3 and 4, short time caps); nothing timed is asserted."""
import itertools
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from collsel.core.maps.table import read_table
from collsel.research.models import lmo_experiments, lmo_params

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None or shutil.which("mpicc") is None,
                                reason="Open MPI (mpirun, mpicc) not installed; run make setup")


def run_cli(*argv, timeout=120):
    return subprocess.run(["timeout", str(timeout), sys.executable, "-m", "collsel.cli",
                           *map(str, argv)], capture_output=True, text=True,
                          timeout=timeout + 10)


def test_three_processors_solve_their_own_experiments(tmp_path):
    """P = 3 at one message size: one triplet, so the 9 experiments (3 empty round-trips, 3
    round-trips with 4 KiB, 3 one-to-two) determine the 9 parameters exactly, and the raw
    estimates (the spread's unclipped means) give back every measured time."""
    exp, out = tmp_path / "e.csv", tmp_path / "p.json"
    done = run_cli("model", "lmo-fit", "--procs", 3, "--experiments", exp, "--out", out,
                   "--scan-sizes", "1K,2K,4K,8K,16K,32K", "--msg-sizes", "4K",
                   "--time-cap", "0.02")
    assert done.returncode == 0, done.stderr[-3000:]
    rows, meta = lmo_experiments.load(exp)
    kinds = [r["kind"] for r in rows]
    assert kinds.count("lscatter") == kinds.count("lgather") == 6
    assert kinds.count("rt0") == kinds.count("rt") == kinds.count("o2t") == 3
    assert meta["rank_hosts"].count(",") == 2
    doc = json.loads(out.read_text())
    lmo_params.load(out)
    spread = doc["spread"]
    C = np.array(spread["C_us"]["mean"])
    t = np.array(spread["t_us_per_byte"]["mean"])
    ib = np.array([[0 if x is None else x for x in r]
                   for r in spread["inv_beta_us_per_byte"]["mean"]])
    assert spread["C_us"]["count"] == [1, 1, 1] and spread["t_us_per_byte"]["count"] == [1, 1, 1]
    m = 4096
    p2p = {(i, j): 2 * C[i] + 2 * C[j] + m * (t[i] + t[j] + ib[i, j])
           for i, j in itertools.permutations(range(3), 2)}
    for r in rows:
        i, a, b, got = r["root"], r["a"], r["b"], r["median_us"]
        if r["kind"] == "rt0":
            want = 2 * C[i] + 2 * C[a]
        elif r["kind"] == "rt":
            want = p2p[(i, a)]
        elif r["kind"] == "o2t":
            tau = [2 * C[x] + m * t[x] + m * ib[i, x] for x in (a, b)]
            want = 4 * C[i] + 2 * m * t[i] + max(tau)
        else:
            continue
        assert want == pytest.approx(got, rel=1e-3, abs=1e-3), r


def test_four_processors_both_schedules_predict_and_mapping(tmp_path):
    exp, out = tmp_path / "e.csv", tmp_path / "p.json"
    done = run_cli("model", "lmo-fit", "--procs", 4, "--experiments", exp, "--out", out,
                   "--time-cap", "0.02", "--compare-schedules")
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads(out.read_text())
    fit = doc["fit"]
    # round-robin: 3 rounds of 2 pairs in parallel, 6 one at a time; no two triplets of 4
    # processors are disjoint
    assert fit["rounds_parallel"] == "3 pair, 4 triplet"
    assert fit["rounds_serial"] == "6 pair, 4 triplet"
    sizes = fit["msg_sizes"]
    assert 1 <= len(sizes) <= 2 and max(sizes) <= lmo_experiments.AUTO_MSG_SIZE_CAP
    for schedule in ("parallel", "serial"):
        counts = fit["experiments"]
        assert counts[f"rt0 {schedule}"]["experiments"] == 6
        assert counts[f"rt {schedule}"]["experiments"] == 6 * len(sizes)
        assert counts[f"o2t {schedule}"]["experiments"] == 12 * len(sizes)
        assert f"lmo {schedule}" in fit["wall_s"]
    assert "serial_vs_parallel_max_rel_diff" in fit
    # each processor's C from its C(3, 2) = 3 triplets, each link's 1/beta from 2 per size
    assert doc["spread"]["C_us"]["count"] == [3] * 4
    assert doc["spread"]["inv_beta_us_per_byte"]["count"][0][1] == 2 * len(sizes)
    # a second fit from the saved experiments measures nothing and gives the same parameters
    again = tmp_path / "again.json"
    done = run_cli("model", "lmo-fit", "--experiments", exp, "--out", again)
    assert done.returncode == 0 and "from " + str(exp) in done.stderr
    assert json.loads(again.read_text())["lmo"] == doc["lmo"]
    # predictions are tables like any other
    for collective, methods in (("scatter", 2), ("bcast", 26)):
        table = tmp_path / f"{collective}.csv"
        done = run_cli("model", "predict", out, "--collective", collective, "--comm-sizes",
                       "2-4", "--msg-sizes", "1K-16K", "--out", table)
        assert done.returncode == 0, done.stderr
        assert len(read_table(table)) == 3 * 5 * methods
        done = run_cli("build", table, "--collective", collective, "--out",
                       tmp_path / f"tree-{collective}")
        assert done.returncode == 0, done.stderr
    # mapping advice, measured: best, worst and identity through --experiment lmo-binomial
    done = run_cli("model", "lmo-mapping", out, "--msg-size", "16K", "--measure",
                   "--time-cap", "0.05")
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [x for x in done.stdout.splitlines() if "--mapping" in x]
    assert len(lines) == 3 and all("measured" in x for x in lines)
