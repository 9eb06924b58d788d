"""Models across nodes: the network channel (c = 1) of `collsel model fit --cluster` (gamma1, Q,
per-method network parameters), experiment placements on the emulated cluster, and predictions
and validation at each cell's own nodes x ppn placement. Hand-computed cases and exact recovery
from noise-free synthetic experiments."""
import json

import numpy as np
import pytest

from collsel.errors import InputError
from collsel.research.models import bcast, experiments, fit, params, validation
from collsel.research.models.bcast import Platform
from collsel.research.models.cluster_launch import ROOT_ALONE, ClusterLauncher, host_counts
from collsel.research.models.predict import model_choices, predict_times

from helpers import collsel


def run_cli(*argv):
    return collsel(*argv, timeout=300)


class FakeCluster:
    node_names = ["n1", "n2", "n3"]
    launch_env = {"OMPI_MCA_plm_rsh_agent": "/state/agent", "OMPI_MCA_btl": "self,vader,tcp"}

    def describe(self):
        return "emulated 3 nodes"


# --- placements on the cluster -----------------------------------------------------------------

def test_host_counts_blocks_and_root_alone():
    assert host_counts(4, 2, 2) == [2, 2]
    assert host_counts(6, 3, 2) == [2, 2, 2]
    # root alone: 1 on the first node, the other P - 1 as even as possible over the next ones
    assert host_counts(6, 3, ROOT_ALONE) == [1, 3, 2]
    assert host_counts(3, 3, ROOT_ALONE) == [1, 1, 1]
    assert host_counts(2, 3, ROOT_ALONE) == [1, 1]          # one receiver: one other node
    with pytest.raises(ValueError):
        host_counts(5, 2, 2)                                # not nodes x ppn
    with pytest.raises(ValueError):
        host_counts(4, 1, ROOT_ALONE)                       # the root alone needs a 2nd node


def test_cluster_launcher_command(monkeypatch):
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    launcher = ClusterLauncher(FakeCluster(), program="mpirun")
    argv, env = launcher.command(6, {"coll_tuned_bcast_algorithm": 6}, ["bench", "--x"],
                                 nodes=3, ppn=ROOT_ALONE)
    assert argv == ["mpirun", "-np", "6", "--host", "n1:1,n2:3,n3:2", "--map-by", "slot",
                    "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1",
                    "--mca", "coll_tuned_bcast_algorithm", "6", "bench", "--x"]
    assert env == FakeCluster.launch_env
    assert launcher.hosts(4, 2, 2) == ["n1", "n1", "n2", "n2"]
    assert launcher.hosts(4, 3, ROOT_ALONE) == ["n1", "n2", "n2", "n3"]
    with pytest.raises(ValueError):
        launcher.hosts(8, 4, 2)                              # the cluster has 3 nodes


def test_plan_across_nodes():
    launches = experiments.plan(msg_sizes=(1, 64), methods=[(6, 1024)], nbft_max=3,
                                placements=[(1, 2), (2, 2)], net_nodes=3)
    got = [(l.experiment, l.comm_size, l.nodes, l.ppn) for l in launches]
    assert got == [("nbft", 2, 1, 2), ("nbft", 3, 1, 3),
                   ("nbft-net", 2, 2, ROOT_ALONE), ("nbft-net", 3, 3, ROOT_ALONE),
                   ("bcast-gather", 2, 1, 2), ("bcast-gather", 4, 2, 2)]
    # P = 2 of each NBFT at every size (the Hockney fit), the others at the segment sizes
    assert launches[2].sizes == sorted({1, 64, *experiments.SEGMENT_SIZES})
    assert launches[3].sizes == list(experiments.SEGMENT_SIZES)
    # without the cluster: one node at each P, as before
    one = experiments.plan((4, 8), (1,), methods=[(1, 0)], nbft_max=2)
    assert [(l.experiment, l.comm_size, l.nodes, l.ppn) for l in one] == [
        ("nbft", 2, 1, 2), ("bcast-gather", 4, 1, 4), ("bcast-gather", 8, 1, 8)]


class StubLauncher:
    def __init__(self, hosts):
        self._hosts = hosts

    def hosts(self, P, nodes, ppn):
        return self._hosts


def test_placement_check_refuses_ranks_elsewhere():
    runner = experiments.Runner.__new__(experiments.Runner)
    runner.cluster, runner.launcher = FakeCluster(), StubLauncher(["n1", "n1", "n2", "n2"])
    runner.placements_checked = 0
    spec = experiments.Launch("bcast-gather", 4, [1], 6, 0, 8192, 2, 2)
    runner.check_placement(spec, "n1,n1,n2,n2", ["mpirun"], {})
    runner.check_placement(spec, None, ["mpirun"], {})          # a benchmark that cannot tell
    assert runner.placements_checked == 1
    with pytest.raises(Exception, match="ranks ran on n1,n1,n1,n1"):
        runner.check_placement(spec, "n1,n1,n1,n1", ["mpirun"], {})


# --- the fit's platform parameters ---------------------------------------------------------------

def nbft_row(experiment, P, s, t):
    nodes, ppn = (1, P) if experiment == "nbft" else (min(P, 3), ROOT_ALONE)
    return {"experiment": experiment, "comm_size": P, "msg_size": s, "algorithm": 0,
            "segsize": 0, "gather_size": 0, "nodes": nodes, "ppn": ppn, "time_us": t, "n": 5}


def test_gamma1_and_Q_by_hand():
    rows = [nbft_row("nbft", 2, 1024, 10.0), nbft_row("nbft", 3, 1024, 15.0),
            nbft_row("nbft", 2, 8192, 20.0), nbft_row("nbft", 3, 8192, 26.0),
            nbft_row("nbft-net", 2, 1024, 100.0), nbft_row("nbft-net", 3, 1024, 180.0),
            nbft_row("nbft-net", 2, 8192, 300.0), nbft_row("nbft-net", 3, 8192, 570.0)]
    shm, net = fit.nbft_times(rows, "nbft"), fit.nbft_times(rows, "nbft-net")
    assert fit.fit_gamma(shm) == {3: pytest.approx(1.4)}            # median(1.5, 1.3)
    assert fit.fit_gamma(net) == {3: pytest.approx(1.85)}           # median(1.8, 1.9)
    assert fit.channel_ratios(shm, net) == {1024: 10.0, 8192: 15.0}
    assert fit.fit_Q(shm, net) == 12.5                              # eq. 15, median
    assert fit.fit_Q(shm, {}) is None                               # one node: no Q
    # a network faster than shared memory is measurement noise: Q is at least 1
    assert fit.fit_Q(shm, {(2, 1024): 5.0}) == 1.0


# --- predictions with both channels ------------------------------------------------------------

THETA = np.array([0.0, 0.0, 1.0, 0.001, 10.0, 0.01])   # o0 o1 L0 L0p L1 L1p


def test_linear_two_nodes_by_hand():
    # P = 4, 2 per node: rank 1 by shared memory, ranks 2, 3 over the network.
    # T0(1000) = 2 (1 + 1) = 4; T1(1000) = 4 + 10 + 10 = 24 -> 4 + 2 x 24 = 52
    plat = Platform(Q=12.5)
    assert bcast.tlop_coefficients(1, 4, 1000, 0, plat.mapped(2)) @ THETA == pytest.approx(52)
    # the same P on one node: 3 T0 = 12
    assert bcast.tlop_coefficients(1, 4, 1000, 0, plat.mapped(4)) @ THETA == pytest.approx(12)


def test_binomial_mixed_tree_by_hand():
    # binomial P = 4: 0 -> {1, 2}, 1 -> 3. With 2 per node, nodes {0, 1} {2, 3}:
    # root NBFT (P 3, C 1): gamma1(1 + floor((3 - 1 - 1) / 12.5) + 1) = gamma1(2) = 1;
    # rank 1 -> 3 (P 2, C 1): gamma1(2) = 1. Two stages of T1(1000) = 24: 48.
    plat = Platform({3: 1.4}, {3: 1.85}, Q=12.5)
    assert bcast.tlop_coefficients(6, 4, 1000, 0, plat.mapped(2)) @ THETA == pytest.approx(48)
    # 3 per node, nodes {0, 1, 2} {3}: root NBFT all shared memory -> gamma0(3) / Q = 0.112;
    # rank 1 -> 3 crosses: 1. (1.112) T1 = 26.688
    assert bcast.tlop_coefficients(6, 4, 1000, 0, plat.mapped(3)) @ THETA == pytest.approx(
        1.112 * 24)
    # one node: gamma0(3) T0 + gamma0(2) T0 = 2.4 x 4
    assert bcast.tlop_coefficients(6, 4, 1000, 0, plat.mapped(4)) @ THETA == pytest.approx(9.6)


def test_mapped_is_a_copy():
    plat = Platform(Q=3, ppn=8)
    two = plat.mapped(2)
    assert (two.ppn, plat.ppn) == (2, 8) and plat.mapped(None) is plat


def two_channel_params(tmp_path, methods):
    doc = {"format": params.FORMAT, "version": params.VERSION,
           "platform": {"Q": 12.5, "gamma0": {"3": 1.4}, "gamma1": {"3": 1.85}},
           "methods": [{"collective": "bcast", "algorithm": a, "segsize": s,
                        "tlop": dict(zip(bcast.TLOP_PARAMS, theta))}
                       for a, s, theta in methods]}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    return params.load(path)


def test_choices_use_each_cells_placement(tmp_path):
    # linear: 3 transfers one after another; binomial: 2 stages. On one node linear's cheap
    # shared-memory parameters win; across nodes (2 per node) its two network transfers lose.
    par = two_channel_params(tmp_path, [(1, 0, [0, 0, 0.5, 0, 50, 0]),
                                        (6, 0, [0, 0, 1.0, 0, 30, 0])])
    one = predict_times(par, 4, [8], platform=par.platform.mapped(4))
    two = predict_times(par, 4, [8], platform=par.platform.mapped(2))
    assert one[(1, 0)][0] == pytest.approx(3 * 1.0)              # 3 T0, T0 = 1
    assert one[(6, 0)][0] == pytest.approx(2.4 * 2.0)            # (1.4 + 1) T0, T0 = 2
    assert two[(1, 0)][0] == pytest.approx(1.0 + 2 * 51.0)       # T0 + 2 T1
    assert two[(6, 0)][0] == pytest.approx(2 * 32.0)             # 2 stages of T1
    got = model_choices(par, {(4, 8, 4): {}, (4, 8, 2): {}, (4, 8): {}}, "tlop")
    assert got == {(4, 8, 4): (1, 0), (4, 8, 2): (6, 0), (4, 8): (1, 0)}


# --- exact recovery from noise-free experiments ----------------------------------------------

PLACEMENTS = [(1, 2), (1, 4), (2, 2), (2, 4), (4, 2)]
TRUTH = {(1, 0): [0, 0, 2.0, 0.0005, 40.0, 0.008],
         (6, 1024): [0, 0, 1.5, 0.001, 25.0, 0.012],
         (3, 8192): [0, 0, 0.8, 0.0008, 60.0, 0.009],
         (9, 0): [0, 0, 3.0, 0.0004, 35.0, 0.011]}
GAMMA0, GAMMA1, Q = {3: 1.2, 4: 1.5}, {3: 1.6, 4: 2.3}, 8.0


def synthetic_rows(ignore_placement=False):
    """Noise-free experiments of a platform with both channels and the methods of TRUTH."""
    t0 = {s: 1.0 + s / 5000 for s in experiments.SEGMENT_SIZES}     # T0(2, s)
    rows = []
    for P in (2, 3, 4):
        for s in experiments.SEGMENT_SIZES:
            rows.append(nbft_row("nbft", P, s, GAMMA0.get(P, 1.0) * t0[s]))
            rows.append(nbft_row("nbft-net", P, s, GAMMA1.get(P, 1.0) * Q * t0[s]))
    plat = Platform(GAMMA0, GAMMA1, Q)
    for (alg, seg), theta in TRUTH.items():
        for nodes, ppn in PLACEMENTS:
            P = nodes * ppn
            for m in (1, 64, 4096, 65536, 1 << 20):
                g = bcast.gather_size(m, seg)
                mapped = plat.mapped(P if ignore_placement else ppn)
                y = (bcast.tlop_coefficients(alg, P, m, seg, mapped)
                     + bcast.flat_gather_coefficients(P, g, mapped)) @ np.array(theta)
                rows.append({"experiment": "bcast-gather", "comm_size": P, "msg_size": m,
                             "algorithm": alg, "segsize": seg, "gather_size": g,
                             "nodes": nodes, "ppn": ppn, "time_us": y, "n": 5})
    return rows


def test_exact_recovery_of_both_channels():
    doc = fit.fit(synthetic_rows())
    plat = doc["platform"]
    assert plat["Q"] == Q
    assert plat["gamma0"] == {"3": 1.2, "4": 1.5} and plat["gamma1"] == {"3": 1.6, "4": 2.3}
    got = {(m["algorithm"], m["segsize"]): [m["tlop"][k] for k in bcast.TLOP_PARAMS]
           for m in doc["methods"]}
    assert set(got) == set(TRUTH)
    for key, theta in TRUTH.items():
        assert got[key] == pytest.approx(theta, rel=1e-4, abs=1e-9), key
    # the Hockney baseline comes from the network point-to-point when there is one:
    # T1(2, s) = Q (1 + s / 5000)
    assert doc["hockney"] == {"alpha": pytest.approx(Q), "beta": pytest.approx(Q / 5000)}


def test_recovery_needs_each_rows_placement():
    # Rows measured across nodes but described as one node (the fit ignoring the placement)
    # cannot be fitted exactly: this is what the test above would catch.
    rows = synthetic_rows()
    for r in rows:
        if r["experiment"] == "bcast-gather":
            r["ppn"] = r["comm_size"]
    doc = fit.fit(rows)
    errors = [m["fit_median_rel_error"] for m in doc["methods"]]
    assert max(errors) > 0.05


def test_parameter_document_carries_both_channels():
    rows = [{**r, "launch": 1} for r in synthetic_rows()]
    doc = fit.parameter_document(rows, {"cluster": "emulated 4 nodes"})
    assert doc["fit"]["channels"] == {"c0": "shared memory (one node: nbft)",
                                      "c1": "network (root alone on its node: nbft-net)"}
    assert doc["fit"]["placements"] == "1x2,1x4,2x2,2x4,4x2"
    assert doc["fit"]["channel_ratio_by_segsize"] == {str(s): Q for s in
                                                      experiments.SEGMENT_SIZES}
    assert doc["fit"]["hockney_from"] == "nbft-net P=2"
    assert doc["fit"]["cluster"] == "emulated 4 nodes"
    params.Params(doc, "x")                             # loads as a parameter file


# --- experiment files -----------------------------------------------------------------------

def test_experiment_file_round_trip_and_placement_checks(tmp_path):
    rows = [{**r, "launch": 1} for r in synthetic_rows()[:30]]
    rows += [{**r, "launch": 1} for r in synthetic_rows() if r["experiment"] == "bcast-gather"
             and r["nodes"] == 2][:5]
    path = tmp_path / "e.csv"
    path.write_text(experiments.save(rows, {"source": "test"}))
    back = experiments.load(str(path))
    assert [(r["experiment"], r["nodes"], r["ppn"]) for r in back] == [
        (r["experiment"], r["nodes"], r["ppn"]) for r in rows]
    # a network NBFT row claiming a nodes x ppn placement is refused, located
    text = path.read_text().replace(",3,0,1,", ",3,2,1,", 1)
    path.write_text(text)
    with pytest.raises(InputError, match=r"e\.csv:\d+: nbft-net places the root alone"):
        experiments.load(str(path))


def test_one_node_experiment_files_still_load(tmp_path):
    path = tmp_path / "old.csv"
    header = ",".join(experiments.ONE_NODE_COLUMNS)
    path.write_text(f"{header}\nnbft,2,1,0,0,0,1,5.0,10\nnbft,2,1024,0,0,0,1,6.0,10\n"
                    "bcast-gather,4,1,6,0,1,1,9.0,10\n")
    rows = experiments.load(str(path))
    assert [(r["nodes"], r["ppn"]) for r in rows] == [(1, 2), (1, 2), (1, 4)]


def test_across_nodes_without_network_nbft_is_refused(tmp_path):
    rows = [{**r, "launch": 1} for r in synthetic_rows() if r["experiment"] != "nbft-net"]
    path = tmp_path / "e.csv"
    path.write_text(experiments.save(rows, {}))
    with pytest.raises(InputError, match="channel ratio Q"):
        experiments.load(str(path))


# --- validation on a table measured across nodes --------------------------------------------

def mapped_table(tmp_path, journal=True):
    """P = 4 at 1 x 4 and 2 x 2, one size; linear wins on one node, binomial across nodes."""
    times = {(1, 4): {0: [5, 5, 5], 1: [3, 3.2, 2.8], 6: [4, 4, 4]},
             (2, 2): {0: [60, 60, 60], 1: [100, 110, 90], 6: [70, 50, 60]}}
    lines = ["# links=tbf 1gbit", "collective,comm_size,msg_size,algorithm,segsize,time_us,"
             "launches,nodes,ppn"]
    jlines = ["collective,comm_size,msg_size,algorithm,segsize,faninout,launch,seed,mean_us,"
              "median_us,min_us,max_us,stdev_us,ci_halfwidth_us,n,ci_met,nodes,ppn"]
    for (nodes, ppn), methods in times.items():
        for alg, ts in methods.items():
            lines.append(f"bcast,4,8,{alg},0,{np.mean(ts)},3,{nodes},{ppn}")
            for k, t in enumerate(ts, 1):
                jlines.append(f"bcast,4,8,{alg},0,0,{k},7,{t},{t},{t},{t},0,0,5,1,{nodes},{ppn}")
    for nodes, ppn in times:
        for k in (1, 2, 3):
            jlines.append(f"# launch.4.{k}=nodes {nodes}")
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n")
    if journal:
        (tmp_path / "m.csv.launches").write_text("\n".join(jlines) + "\n")
    return str(tmp_path / "m.csv")


def test_validate_predicts_each_row_at_its_placement(tmp_path):
    table = mapped_table(tmp_path)
    par = two_channel_params(tmp_path, [(1, 0, [0, 0, 0.5, 0, 50, 0]),
                                        (6, 0, [0, 0, 1.0, 0, 30, 0])])
    par.doc["fit"] = {"placements": "1x4", "measurements": 9}
    result = validation.validate(par, "p.json", table)
    # linear on one node (3 vs 4: best), binomial across nodes (60 vs 100: best)
    assert result["all"]["model_tlop"]["picks_best"] == 2
    assert result["all"]["model_tlop"]["mean_penalty_pct"] == 0.0
    assert result["held_out_placements"]["model_tlop"]["cells"] == 1        # 2x2 only
    assert list(result["by_placement"]) == ["1x4", "2x2"]
    assert result["by_placement"]["2x2"]["open_mpi_default"]["mean_penalty_pct"] == 0.0
    assert result["links"] == {"measured": "tbf 1gbit", "fit": None}
    floor = result["reproducibility"]
    assert floor["launches"] == 3
    # launch 2 picks binomial at 2x2 (50 < 110), launch 1 linear at 1x4: all best on the rest
    assert floor["mean_penalty_pct_over_splits"]["measured_best_of_that_launch"] == 0.0
    text = validation.summary(result)
    assert "| 2x2 | 1 |" in text and "reproducibility floor" in text


def test_validate_on_a_placement_blind_model_differs(tmp_path):
    # The same parameters predicting every cell on one node choose linear across nodes too:
    # scored on the same table, that costs 66.7 % at 2x2 (100 vs 60).
    table = mapped_table(tmp_path, journal=False)
    par = two_channel_params(tmp_path, [(1, 0, [0, 0, 0.5, 0, 50, 0]),
                                        (6, 0, [0, 0, 1.0, 0, 30, 0])])
    cells, _, _ = validation.measured_cells(table)
    blind = model_choices(par, {(P, m): t for (P, m, _), t in cells.items()}, "tlop")
    choice = {c: blind[c[:2]] for c in cells}
    assert validation.score(cells, choice)["max_penalty_pct"] == 66.7


def test_one_node_parameters_refuse_a_table_across_nodes(tmp_path):
    table = mapped_table(tmp_path, journal=False)
    done = run_cli("model", "validate", str(params.preset_path("gros")), "--measured", table)
    assert done.returncode == 0, done.stderr        # gros has Q: it predicts across nodes
    one_node = tmp_path / "one.json"
    doc = json.loads(params.preset_path("gros").read_text())
    doc["platform"]["Q"] = None
    one_node.write_text(json.dumps(doc))
    done = run_cli("model", "validate", str(one_node), "--measured", table)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "cannot predict the measured table's cells" in done.stderr
    assert "no Q" in done.stderr


def test_validate_refuses_inconsistent_placement_columns(tmp_path):
    table = tmp_path / "bad.csv"
    table.write_text("collective,comm_size,msg_size,algorithm,segsize,time_us,nodes,ppn\n"
                     "bcast,4,8,1,0,3.0,2,3\n")
    with pytest.raises(InputError, match="bad.csv:2: nodes 2 x ppn 3 is not comm_size 4"):
        validation.measured_cells(str(table))


def test_journal_without_ppn_cannot_score_a_placed_table(tmp_path):
    table = mapped_table(tmp_path)
    text = (tmp_path / "m.csv.launches").read_text().splitlines()
    cut = [",".join(line.split(",")[:-2]) if not line.startswith("#") else line for line in text]
    (tmp_path / "m.csv.launches").write_text("\n".join(cut) + "\n")
    with pytest.raises(InputError, match="no ppn column"):
        validation.journal_launches(str(tmp_path / "m.csv.launches"), mapped=True)
    assert table
