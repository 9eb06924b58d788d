"""`collsel model fit` on real Open MPI: the benchmark's --experiment modes run, a parameter file
comes out, and predict/validate read it (small plan: one P, three sizes)."""
import csv
import json
import subprocess
import sys

from collsel.research.models import params
from collsel.core.mpi import fallbacks
from collsel.core.maps.table import read_table


def run_cli(*argv, timeout=900):
    return subprocess.run([sys.executable, "-m", "collsel.cli", *argv], capture_output=True,
                          text=True, timeout=timeout)


def test_fit_predict_validate(tmp_path):
    exp, out = tmp_path / "exp.csv", tmp_path / "params.json"
    done = run_cli("model", "fit", "--out", str(out), "--experiments", str(exp),
                   "--comm-sizes", "3", "--msg-sizes", "1,4096,65536", "--time-cap", "0.02",
                   "--launches", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    par = params.load(out)
    assert len(par.methods) == 33
    # NBFT: P = 2 at the 3 sizes + 4 segment sizes, P = 3..8 at the segment sizes; 2 launches
    assert par.doc["fit"]["measurements"] == 2 * (7 + 6 * 4 + 33 * 3)
    launches = [r["launch"] for r in csv.DictReader(
        line for line in exp.read_text().splitlines() if line[0] != "#")]
    assert launches.count("1") == launches.count("2") == 7 + 6 * 4 + 33 * 3
    assert all(v >= 0 for theta in par.methods.values() for v in theta)
    table = tmp_path / "pred.csv"
    done = run_cli("model", "predict", str(out), "--comm-sizes", "2-5", "--msg-sizes", "1K-8K",
                   "--out", str(table))
    assert done.returncode == 0, done.stderr
    # every method at 4 P x 4 sizes; read for decisions, less the rows where Open MPI would
    # silently run another algorithm (core/mpi/fallbacks.py: predictions too)
    every = read_table(table, measured=True)
    assert len(every) == 4 * 4 * 33
    falls_back = sum(not fallbacks.usable("bcast", int(a), int(p), int(m), int(s))
                     for a, p, m, s in zip(every.algorithm, every.comm_size, every.msg_size,
                                           every.segsize))
    assert falls_back > 0 and len(read_table(table)) == len(every) - falls_back
    # a second fit from the saved experiments measures nothing and gives the same file
    again = tmp_path / "again.json"
    done = run_cli("model", "fit", "--out", str(again), "--experiments", str(exp))
    assert done.returncode == 0 and "from " + str(exp) in done.stderr
    assert json.loads(again.read_text())["methods"] == json.loads(out.read_text())["methods"]
