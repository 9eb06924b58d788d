"""`collsel model fit --cluster` on the emulated cluster: the NBFTs run across nodes (root alone)
and the bcast+gather experiments at 1 x 2 and 2 x 2, with the ranks where the placement says
(the benchmark's #@rank_hosts, checked by the fit), and the parameter file carries the network
channel: gamma1, Q and per-method network parameters, positive and unlike the shared-memory ones.
Small plan: 3 methods, 3 sizes, one launch per point."""
import csv
import subprocess
import sys

from collsel.core.maps.table import read_table
from collsel.research.models import params

METHODS = "basic_linear,binomial:0,knomial:8192"


def run_cli(*argv, timeout=600):
    return subprocess.run([sys.executable, "-m", "collsel.cli", *map(str, argv)],
                          capture_output=True, text=True, timeout=timeout)


def test_fit_across_nodes_gives_the_network_channel(cluster, tmp_path):
    exp, out = tmp_path / "exp.csv", tmp_path / "params.json"
    done = run_cli("model", "fit", "--cluster", cluster.state_dir, "--nodes", "1,2",
                   "--ppn", "2", "--algorithms", METHODS, "--msg-sizes", "1,4096,65536",
                   "--time-cap", "0.02", "--launches", "1", "--nbft-max", "3",
                   "--out", out, "--experiments", exp)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = list(csv.DictReader(line for line in exp.read_text().splitlines()
                               if not line.startswith("#")))
    placed = {(r["experiment"], r["comm_size"], r["nodes"], r["ppn"]) for r in rows}
    assert placed == {("nbft", "2", "1", "2"), ("nbft", "3", "1", "3"),
                      ("nbft-net", "2", "2", "0"), ("nbft-net", "3", "3", "0"),
                      ("bcast-gather", "2", "1", "2"), ("bcast-gather", "4", "2", "2")}
    meta = exp.read_text()
    assert "# cluster=emulated 4 nodes" in meta and "--host n1:1,n2:1,n3:1" in meta
    # every launch's ranks were where its placement says (the fit stops otherwise)
    assert "# placements_checked=10 of 10 launches" in meta

    par = params.load(out)
    plat = par.doc["platform"]
    # the network channel exists and is its own: Q > 1 (TCP across namespaces is slower than
    # shared memory), gamma1 measured at P = 3
    assert plat["Q"] is not None and plat["Q"] > 1
    assert set(plat["gamma1"]) == {"3"} and plat["gamma1"]["3"] >= 1
    assert par.doc["fit"]["placements"] == "1x2,2x2"
    assert par.doc["fit"]["hockney_from"] == "nbft-net P=2"
    assert len(par.methods) == 3
    for key, theta in par.methods.items():
        t = dict(zip(("o0", "o1", "L0", "L0p", "L1", "L1p"), theta))
        assert all(v >= 0 for v in theta), key
        network = t["L1"] + 8192 * t["L1p"]            # L1(8 KiB): the c = 1 part of T1
        shared = t["L0"] + 8192 * t["L0p"]
        assert network > 0 and network != shared, (key, t)

    # predictions and validation take a placement: 2 ranks per node is across nodes
    table = tmp_path / "pred.csv"
    done = run_cli("model", "predict", out, "--comm-sizes", "4", "--msg-sizes", "4K",
                   "--ranks-per-node", "2", "--out", table)
    assert done.returncode == 0, done.stderr
    assert len(read_table(table)) == 3
