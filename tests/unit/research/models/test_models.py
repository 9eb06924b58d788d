"""Analytical models (collsel.research.models): Open MPI tree shapes, NBFT stages, tau-Lop and Hockney
bcast models, reduce models, the Huber fit and `collsel model` on hand-computed small cases."""
import json

import numpy as np
import pytest

from collsel.research.models import bcast, experiments, fit, params, reduce, topology, validation
from collsel.research.models.bcast import Platform
from collsel.research.models.paper import paper_comparison, PAPER_TABLE3
from collsel.sources.sweep import journal as sweep_journal
from collsel.core.maps.table import read_table

from helpers import collsel


# --- tree shapes (coll_base_topo.c) -------------------------------------------------------

def test_chain_shapes():
    assert topology.chain(8, 4).tolist() == [-1, 0, 1, 0, 3, 0, 5, 0]   # chains 1-2, 3-4, 5-6, 7
    assert topology.chain(10, 4).tolist() == [-1, 0, 1, 2, 0, 4, 0, 6, 0, 8]
    assert topology.chain(4, 1).tolist() == [-1, 0, 1, 2]               # pipeline
    assert topology.chain(3, 4).tolist() == [-1, 0, 0]                  # fanout > P-1
    assert topology.chain(2, 4).tolist() == [-1, 0]


def test_binary_binomial_knomial_inorder_shapes():
    assert topology.kary_tree(4, 2).tolist() == [-1, 0, 0, 1]
    assert topology.kary_tree(8, 2).tolist() == [-1, 0, 0, 1, 2, 1, 2, 3]
    assert topology.binomial(3).tolist() == [-1, 0, 0]
    assert topology.binomial(8).tolist() == [-1, 0, 0, 1, 0, 1, 2, 3]
    assert topology.knomial(8, 4).tolist() == [-1, 0, 0, 0, 0, 4, 4, 4]
    assert topology.knomial(10, 3).tolist() == [-1, 0, 0, 0, 3, 3, 0, 6, 6, 0]
    assert topology.in_order_bintree(4).tolist() == [1, 3, 3, -1]
    assert topology.in_order_bintree(9).tolist() == [1, 3, 3, 8, 5, 7, 7, 8, -1]
    assert topology.depths(topology.binomial(8)).tolist() == [0, 1, 1, 2, 1, 2, 2, 3]
    assert topology.depths(topology.chain(5, 1)).tolist() == [0, 1, 2, 3, 4]
    assert topology.depths(topology.in_order_bintree(4)).tolist() == [2, 1, 1, 0]


@pytest.mark.parametrize("P", [1, 2, 3, 7, 64, 129])
def test_depths_equal_a_walk_to_the_root(P):
    for parent in (topology.chain(P, 1), topology.chain(P, 4), topology.binomial(P),
                   topology.kary_tree(P, 2), topology.knomial(P, 4), topology.in_order_bintree(P)):
        walked = []
        for rank in range(P):
            d = 0
            while parent[rank] >= 0:
                rank, d = parent[rank], d + 1
            walked.append(d)
        assert topology.depths(parent).tolist() == walked


# --- NBFT stage lists -----------------------------------------------------------------------

def test_stage_list_pipeline_p3_one_node():
    stages = topology.stage_list(topology.chain(3, 1), nseg=2, ppn=3)
    assert stages == [[(0, 2, 0)], [(0, 2, 0), (1, 2, 0)], [(1, 2, 0)]]   # P + ns - 2 stages


def test_stage_list_binomial_p8_two_nodes():
    # Paper Fig. 5: P = 8 on two quad-core nodes, 3 segments, floor(log2 P) + ns - 1 = 5 stages.
    stages = topology.stage_list(topology.binomial(8), nseg=3, ppn=4)
    assert stages == [
        [(0, 4, 1)],
        [(0, 4, 1), (1, 3, 1), (2, 2, 1)],
        [(0, 4, 1), (1, 3, 1), (2, 2, 1), (3, 2, 1)],
        [(1, 3, 1), (2, 2, 1), (3, 2, 1)],
        [(3, 2, 1)],
    ]


def test_stage_list_binary_p8_two_nodes():
    stages = topology.stage_list(topology.kary_tree(8, 2), nseg=1, ppn=4)
    assert stages == [[(0, 3, 0)], [(1, 3, 1), (2, 3, 2)], [(3, 2, 1)]]


def test_stage_list_chain_p2():
    assert topology.stage_list(topology.chain(2, 4), nseg=1, ppn=1) == [[(0, 2, 1)]]


@pytest.mark.parametrize("P,ppn", [(2, 1), (3, 3), (4, 2), (8, 4), (13, 4), (16, 16)])
@pytest.mark.parametrize("nseg", [1, 2, 3, 7, 20])
def test_stage_sum_equals_stage_list(P, ppn, nseg):
    rng = np.random.default_rng(P * 100 + nseg)
    for parent in (topology.binomial(P), topology.kary_tree(P, 2), topology.chain(P, 4),
                   topology.chain(P, 1), topology.knomial(P, 4)):
        sender, depth, pv, cv = topology.nbfts(parent, ppn)
        cost = rng.uniform(1, 5, len(sender))
        by_sender = dict(zip(sender.tolist(), cost))
        expect = sum(max(by_sender[s] for s, _, _ in st)
                     for st in topology.stage_list(parent, nseg, ppn))
        assert topology.stage_sum(depth, cost, nseg) == pytest.approx(expect)


# --- tau-Lop bcast ----------------------------------------------------------------------------
# coefficient order: o0, o1, L0, L0p, L1, L1p ; T0(s) = o0 + 2(L0 + s L0p)

def one_node(**gamma0):
    return Platform({int(k[1:]): v for k, v in gamma0.items()})


def test_tlop_p2_pipeline_unsegmented():
    coef = bcast.tlop_coefficients(3, 2, 100, 0, one_node())
    assert coef.tolist() == [1, 0, 2, 200, 0, 0]


def test_tlop_linear_two_nodes():
    # P = 4, 2 ranks per node: rank 1 by shared memory, ranks 2 and 3 over the network.
    coef = bcast.tlop_coefficients(1, 4, 10, 0, Platform(Q=2, ppn=2))
    assert coef.tolist() == [1, 2, 6, 60, 2, 20]


def test_tlop_binomial_p4_one_node_two_segments():
    # tree 0->{1,2}, 1->3; gamma0(3) = 1.5; stages 1.5, max(1.5, 1), 1 -> 4 T0(1024)
    coef = bcast.tlop_coefficients(6, 4, 2048, 1024, one_node(g3=1.5))
    assert coef.tolist() == [4, 0, 8, 8 * 1024, 0, 0]


def test_tlop_mixed_nbfts_two_nodes():
    # binomial P = 4 (0->{1,2}, 1->3), nodes {0,1} {2,3}: root NBFT P=3, C=1 ->
    # gamma1(1 + floor(1/Q) + 1) = gamma1(2) = 1 (Q = 2); rank 1 -> 3 crosses too: 1; T1 units
    plat = Platform({3: 1.5}, {3: 1.2}, Q=2, ppn=2)
    coef = bcast.tlop_coefficients(6, 4, 100, 0, plat)
    assert coef == pytest.approx(2 * np.array([0, 1, 2, 200, 1, 100]))
    # binary P = 4 (0->{1,2}, 1->3) on nodes {0,1,2} {3}: root NBFT all shared memory ->
    # gamma0(3) / Q = 0.75; rank 1 -> 3 crosses: gamma1(2) = 1
    plat = Platform({3: 1.5}, {3: 1.2}, Q=2, ppn=3)
    coef = bcast.tlop_coefficients(5, 4, 100, 0, plat)
    assert coef == pytest.approx(1.75 * np.array([0, 1, 2, 200, 1, 100]))
    # P = 8 binary, ppn 4, Q = 2: 0 (3, C=0): 1.5/2; 1 (3, C=1): gamma1(1+0+1) = 1;
    # 2 (3, C=2): gamma1(2 + 0 + 1) = 1.2; 3 (2, C=1): 1 -> 0.75 + 1.2 + 1
    plat = Platform({3: 1.5}, {3: 1.2}, Q=2, ppn=4)
    coef = bcast.tlop_coefficients(5, 8, 100, 0, plat)
    assert coef == pytest.approx(2.95 * np.array([0, 1, 2, 200, 1, 100]))


def test_tlop_gamma_beyond_table_uses_last_value():
    plat = Platform({3: 1.5, 4: 2.0})
    assert plat.gamma(0, [2, 3, 4, 9]).tolist() == [1.0, 1.5, 2.0, 2.0]


def test_tlop_split_binary_p4():
    # halves of 2048 B in 1 KiB segments down 0->{1,2}, 1->3: stages 1.5, 1.5, 1; then the
    # exchange of one half: T0(2048)
    coef = bcast.tlop_coefficients(4, 4, 4096, 1024, one_node(g3=1.5))
    assert coef.tolist() == [5, 0, 10, 8 * 1024 + 4096, 0, 0]
    # a half shorter than a segment: Open MPI falls back to the pipeline
    assert (bcast.tlop_coefficients(4, 4, 1000, 1024, one_node()).tolist()
            == bcast.tlop_coefficients(3, 4, 1000, 1024, one_node()).tolist())


def test_tlop_kchain_p8_one_node():
    # 4 chains (1-2, 3-4, 5-6, 7): root NBFT of 5, then 3 NBFTs of 2; one segment
    coef = bcast.tlop_coefficients(2, 8, 64, 0, one_node(g3=1.2, g5=2.0))
    assert coef.tolist() == pytest.approx([3, 0, 6, 6 * 64, 0, 0])


def test_scatter_allgather_falls_back_to_linear_below_p():
    plat = one_node()
    assert (bcast.tlop_coefficients(8, 8, 4, 0, plat).tolist()
            == bcast.tlop_coefficients(1, 8, 4, 0, plat).tolist())


# --- Hockney bcast ----------------------------------------------------------------------------

def test_hockney_linear_and_binomial():
    assert bcast.hockney_coefficients(1, 5, 100, 0).tolist() == [4, 400]
    # binomial P = 8: root sends to 3 children, then 2 (rank 1), then 1 (rank 3): 6 transfers
    assert bcast.hockney_coefficients(6, 8, 100, 0).tolist() == [6, 600]
    # pipeline P = 4, 4 segments of 25 B: P + ns - 2 = 6 transfers of 25 B
    assert bcast.hockney_coefficients(3, 4, 100, 25).tolist() == [6, 150]


def test_hockney_scatter_allgather_p4():
    # scatter: 50 B then 25 B; recursive doubling: 25 B then 50 B
    assert bcast.hockney_coefficients(8, 4, 100, 0).tolist() == [4, 150]
    # ring: scatter 75 B, then 3 steps of 25 B
    assert bcast.hockney_coefficients(9, 4, 100, 0).tolist() == [5, 150]


# --- reduce (Hasanov & Lastovetsky) --------------------------------------------------------

A, B, G_ = 1.0, 0.1, 0.01


def test_reduce_models_small_cases():
    assert reduce.flat(4, 10, A, B, G_) == pytest.approx(6.3)
    assert reduce.flat(4, 10, A, B, G_, X=2) == pytest.approx(2 * 3 * 1.55)
    assert reduce.linear(4, 10, A, B, G_) == pytest.approx(6.3)
    assert reduce.pipeline(4, 10, A, B, G_, X=2) == pytest.approx(4 * 1.55)
    assert reduce.binary(7, 10, A, B, G_) == pytest.approx(2 * 2 * 2.1)
    assert reduce.binomial(8, 10, A, B, G_) == pytest.approx(3 * 2.1)
    assert reduce.rabenseifner(4, 8, A, B, G_) == pytest.approx(4 + 1.2 + 0.06)
    assert reduce.binomial(np.array([2, 4]), 10, A, B, G_).tolist() == pytest.approx([2.1, 4.2])


def test_hierarchical_reduce():
    # flat, p = 16, G = 4: (G + p/G - 2) steps (eq. 8); optimum at sqrt(p) (eq. 9)
    assert reduce.hierarchical("flat", 16, 4, 10, A, B, G_) == pytest.approx(6 * 2.1)
    assert reduce.optimal_groups("flat", 16, 10, A, B, G_) == (4, pytest.approx(6 * 2.1))
    assert reduce.flat_hierarchical_closed_form(16, 10, A, B, G_)[1] == pytest.approx(6 * 2.1)
    # pipeline eq. 10: (2X + G + p/G - 4) steps of m/X
    assert reduce.hierarchical("pipeline", 16, 4, 10, A, B, G_, X=2) == pytest.approx(8 * 1.55)
    # binomial: unchanged by the transformation (section 3.4)
    assert reduce.hierarchical("binomial", 16, 4, 10, A, B, G_) == pytest.approx(
        reduce.binomial(16, 10, A, B, G_))
    # Rabenseifner: grouping only adds cost, so G = 1 (section 3.5)
    assert reduce.optimal_groups("rabenseifner", 8, 1000, A, B, G_)[0] == 1
    # P = 2 has no proper grouping: G = 1
    assert reduce.optimal_groups("linear", 2, 10, A, B, G_)[0] == 1


# --- fitting ----------------------------------------------------------------------------------

def test_huber_fit_recovers_parameters_despite_an_outlier():
    rng = np.random.default_rng(1)
    X = rng.uniform(1, 100, (30, 2))
    truth = np.array([2.0, 0.5])
    y = X @ truth
    y[3] *= 5                       # one wild measurement
    huber = fit.huber_fit(X, y)
    assert huber == pytest.approx(truth, rel=1e-2)
    plain = np.linalg.lstsq(X / y[:, None], np.ones(len(y)), rcond=None)[0]
    # least squares on the same relative residuals is pulled further by the outlier
    assert np.abs(huber / truth - 1).max() < 0.5 * np.abs(plain / truth - 1).max()


def test_fit_from_synthetic_experiments():
    plat = Platform({3: 1.3, 4: 1.6})
    truth = np.array([0, 0, 3.0, 0.002, 0, 0])
    rows = []
    for P, s, t in ((2, 1024, 10.0), (3, 1024, 13.0), (4, 1024, 16.0), (2, 8192, 20.0),
                    (3, 8192, 26.0), (4, 8192, 32.0)):
        rows.append({"experiment": "nbft", "comm_size": P, "msg_size": s, "algorithm": 0,
                     "segsize": 0, "gather_size": 0, "nodes": 1, "ppn": P, "time_us": t,
                     "n": 5})
    for P in (4, 8):
        for m in (1, 64, 4096, 65536):
            g = bcast.gather_size(m, 1024)
            y = (bcast.tlop_coefficients(6, P, m, 1024, plat)
                 + bcast.flat_gather_coefficients(P, g, plat)) @ truth
            rows.append({"experiment": "bcast-gather", "comm_size": P, "msg_size": m,
                         "algorithm": 6, "segsize": 1024, "gather_size": g, "nodes": 1,
                         "ppn": P, "time_us": y, "n": 5})
    doc = fit.fit(rows)
    assert doc["platform"]["gamma0"] == {"3": 1.3, "4": 1.6}
    (method,) = doc["methods"]
    assert method["fit_median_rel_error"] < 1e-3
    assert doc["hockney"]["alpha"] >= 0


def test_plan_runs_rounds_and_fit_uses_the_mean_of_launches():
    launches = experiments.plan((4,), (1, 64), methods=[(6, 1024)], nbft_max=3, launches=3)
    one = len(launches) // 3
    assert [l[-1] for l in launches] == [1] * one + [2] * one + [3] * one
    assert [l[:-1] for l in launches[:one]] == [l[:-1] for l in launches[2 * one:]]
    row = {"experiment": "nbft", "comm_size": 2, "msg_size": 64, "algorithm": 0, "segsize": 0,
           "gather_size": 0, "nodes": 1, "ppn": 2}
    rows = [{**row, "launch": k, "time_us": t, "n": 10} for k, t in ((1, 3.0), (2, 5.0), (3, 7.0))]
    (mean,) = experiments.mean_over_launches(rows)
    assert mean["time_us"] == 5.0 and mean["n"] == 30 and mean["launches"] == 3


# --- validation against measurements ------------------------------------------------------------

def test_score_penalties_by_hand():
    cells = {(2, 1): {(0, 0): 3.0, (1, 0): 2.0, (6, 0): 4.0},
             (2, 8): {(0, 0): 5.0, (1, 0): 10.0, (6, 0): 5.0}}
    got = validation.score(cells, {(2, 1): (6, 0), (2, 8): (6, 0)})
    assert (got["cells"], got["picks_best"]) == (2, 1)
    assert got["mean_penalty_pct"] == 50.0 and got["max_penalty_pct"] == 100.0
    ompi = validation.score(cells, {c: (0, 0) for c in cells})
    assert ompi["mean_penalty_pct"] == 25.0 and ompi["picks_best"] == 0   # never a candidate


def write_journal(path, medians):
    """A sweep journal: medians[(P, m, alg, seg)] = [median of launch 1, 2, ...]."""
    lines = ["# source=collsel sweep", ",".join(sweep_journal.JOURNAL_COLUMNS)]
    for (P, m, a, s), values in medians.items():
        for k, v in enumerate(values, 1):
            lines.append(f"bcast,{P},{m},{a},{s},{k},{v},{v},{v},{v},0,0,5,1")
    path.write_text("\n".join(lines) + "\n")


def test_reproducibility_floor_by_hand(tmp_path):
    # A = (1, 0) is best in launch 1 only, B = (6, 0) in launches 2 and 3
    journal = tmp_path / "t.csv.launches"
    write_journal(journal, {(2, 1, 1, 0): [1.0, 4.0, 4.0], (2, 1, 6, 0): [2.0, 2.0, 2.0],
                            (2, 1, 0, 0): [3.0, 3.0, 3.0]})
    floor = validation.reproducibility(str(journal), {"always_B": {(2, 1): (6, 0)}})
    assert floor["launches"] == 3
    first, second, third = floor["splits"]
    # from launch 1: A; on launches 2+3 A takes 4, B 2 -> penalty 100 %
    assert first["measured_best_of_that_launch"]["mean_penalty_pct"] == 100.0
    # from launch 2: B; on launches 1+3 A takes 2.5, B 2 -> 0 %
    assert second["measured_best_of_that_launch"]["mean_penalty_pct"] == 0.0
    assert third["always_B"]["mean_penalty_pct"] == 0.0
    assert floor["mean_penalty_pct_over_splits"] == {"measured_best_of_that_launch": 33.3,
                                                     "always_B": 0.0}


def test_validate_reports_the_floor_from_the_journal(tmp_path):
    table = tmp_path / "m.csv"
    table.write_text("collective,comm_size,msg_size,algorithm,segsize,time_us,launches\n"
                     "bcast,4,1024,0,0,9,3\nbcast,4,1024,6,0,3,3\nbcast,4,1024,1,0,3.2,3\n")
    write_journal(tmp_path / "m.csv.launches", {(4, 1024, 0, 0): [9, 9, 9],
                                                (4, 1024, 6, 0): [2, 3, 4],
                                                (4, 1024, 1, 0): [3.5, 3.0, 3.1]})
    out = tmp_path / "v.json"
    done = run_cli("model", "validate", str(params.preset_path("gros")), "--measured", str(table),
                   "--json", str(out))
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["measurements"]["sweep"] == 9
    floor = result["reproducibility"]
    assert floor["launches"] == 3 and len(floor["splits"]) == 3
    assert set(floor["mean_penalty_pct_over_splits"]) == {
        "measured_best_of_that_launch", "model_tlop", "open_mpi_default"}
    done = run_cli("model", "validate", str(params.preset_path("gros")), "--measured",
                   str(table), "--journal", str(tmp_path / "missing.launches"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "missing.launches: cannot read: No such file" in done.stderr


# --- presets, paper comparison, commands ------------------------------------------------------

def test_presets_load_and_hold_the_paper_numbers():
    gros = params.load(params.preset_path("gros"))
    assert gros.platform.Q == 12 and gros.platform.ppn == 18
    assert gros.methods[("bcast", 6, 8192)] == pytest.approx([0, 19.0, 8.0, 0, 19.0, 0])
    for name in params.PRESETS:
        assert len(params.load(params.preset_path(name)).methods) == 6


def test_paper_table3_comparison_is_computed():
    rows = paper_comparison()
    assert len(rows) == 9 * len(PAPER_TABLE3) == 54
    names = {"flat", "chain", "k-chain", "binary", "split_binary", "binomial"}
    assert {r[3] for r in rows} <= names and {r[4] for r in rows} <= names
    agree = sum(r[3] == r[4] for r in rows)
    print(f"paper Table 3 agreement: {agree}/54")
    assert 0 <= agree <= 54


def run_cli(*argv):
    return collsel(*argv, timeout=120)


def test_predict_writes_a_canonical_table(tmp_path):
    out = tmp_path / "gros.csv"
    done = run_cli("model", "predict", "--preset", "gros", "--comm-sizes", "2-4,40",
                   "--msg-sizes", "16K-64K", "--out", str(out))
    assert done.returncode == 0, done.stderr
    table = read_table(out)
    assert len(table) == 4 * 3 * 6
    assert table.sources[0].metadata["predicted"] == "yes"
    assert table.sources[0].metadata["statistic"] == "model"
    assert "model prediction" in table.sources[0].metadata["statistic_detail"]
    assert set(table.algorithm.tolist()) == {1, 2, 3, 4, 5, 6}
    again = tmp_path / "again.csv"
    run_cli("model", "predict", "--preset", "gros", "--comm-sizes", "2-4,40",
            "--msg-sizes", "16K-64K", "--out", str(again))
    assert out.read_bytes() == again.read_bytes()


def test_predict_bad_input(tmp_path):
    done = run_cli("model", "predict", "--comm-sizes", "2", "--msg-sizes", "1", "--out",
                   str(tmp_path / "x.csv"))
    assert done.returncode == 2 and "--preset" in done.stderr
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "collsel-model-params", "version": 1,
                               "platform": {}, "methods": [{"collective": "bcast"}]}))
    done = run_cli("model", "predict", str(bad), "--comm-sizes", "2", "--msg-sizes", "1",
                   "--out", str(tmp_path / "x.csv"))
    assert done.returncode == 2 and "methods[0]" in done.stderr
    assert not (tmp_path / "x.csv").exists()
