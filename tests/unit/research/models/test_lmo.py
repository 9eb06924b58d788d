"""The heterogeneous LMO model (Lastovetsky & Rychkov 2009): the estimation equations on
hand-computed cases (exact recovery without noise, 3 and 4 processors), thresholds, the
parameter file and its schema, predictions by hand (linear and binomial scatter/gather, bcast
and reduce trees), mapping advice on a constructed heterogeneous cluster, and `collsel model
lmo-fit` / `predict` / `lmo-mapping` on synthetic experiment files (no MPI here; the real
experiments are in tests/integration/test_lmo_fit.py)."""
import copy
import itertools
import json

import numpy as np
import pytest

from collsel.cli import main
from collsel.core.maps.table import read_table
from collsel.errors import InputError
from collsel.research.models import lmo, lmo_experiments, lmo_fit, lmo_params, lmo_predict
from collsel.research.models.lmo_predict import HockneyModel, LmoModel

# --- a hand-computed 3-processor case ------------------------------------------------------
# C = 10, 20, 30 µs; t = 0.001, 0.002, 0.003 µs/B; 1/beta: 0-1 0.01, 1-2 0.02, 0-2 0.04 µs/B;
# M = 1000 B. Every time below is worked out by hand from the model's formulas:
#   T0[i,j] = 2 C_i + 2 C_j                    -> 60, 100, 80
#   TM[i,j] = T0 + M (t_i + t_j + 1/beta_ij)   -> 60 + 13, 100 + 25, 80 + 44
#   T2[r]   = 4 C_r + 2 M t_r + max(tau_p, tau_q), tau_p = 2 C_p + M t_p + M / beta_rp
#     root 0: 42 + max(40+2+10, 60+3+40) = 145;   root 1: 84 + max(20+1+10, 60+3+20) = 167
#     root 2: 126 + max(20+1+40, 40+2+20) = 188
HAND_C = [10.0, 20.0, 30.0]
HAND_T = [0.001, 0.002, 0.003]
HAND_INV_BETA = [[0, 0.01, 0.04], [0.01, 0, 0.02], [0.04, 0.02, 0]]
HAND_T0 = [[0, 60, 80], [60, 0, 100], [80, 100, 0]]
HAND_TM = [[0, 73, 124], [73, 0, 125], [124, 125, 0]]
HAND_T2 = {(0, 1, 2): 145.0, (1, 0, 2): 167.0, (2, 0, 1): 188.0}
M = 1000


def hand_arrays():
    T2 = np.zeros((3, 3, 3))
    for (r, p, q), v in HAND_T2.items():
        T2[r, p, q] = T2[r, q, p] = v
    return np.array(HAND_T0, float), {M: np.array(HAND_TM, float)}, {M: T2}


def test_three_processors_by_hand():
    T0, TM, T2 = hand_arrays()
    est = lmo.estimate(T0, TM, T2)
    np.testing.assert_allclose(est["C"]["mean"], HAND_C, rtol=1e-12)
    np.testing.assert_allclose(est["t"]["mean"], HAND_T, rtol=1e-9)
    np.testing.assert_allclose(np.nan_to_num(est["inv_beta"]["mean"]), HAND_INV_BETA, rtol=1e-9)
    # one triplet: one estimate each, no spread
    assert est["C"]["count"].tolist() == [1, 1, 1] and est["t"]["count"].tolist() == [1, 1, 1]
    assert est["inv_beta"]["count"].tolist() == [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
    # the triplet's own solution, with the receiver that finished last chosen per root:
    # root 1 waits for 2 (tau 83 > 31), root 2 for 1 (62 > 61)
    C, t, inv_beta = lmo.triplet_solution(T0, TM[M], T2[M], M, lmo.triplets(3))
    assert C.tolist() == [[10.0, 20.0, 30.0]]
    np.testing.assert_allclose(inv_beta, [[0.01, 0.02, 0.04]], rtol=1e-9)   # (0,1) (1,2) (0,2)


def test_hockney_from_the_same_round_trips_by_hand():
    T0, TM, _ = hand_arrays()
    alpha, beta = lmo.hetero_hockney(T0, TM)
    assert alpha.tolist() == [[0, 30, 40], [30, 0, 50], [40, 50, 0]]
    np.testing.assert_allclose(beta, [[0, 0.013, 0.044], [0.013, 0, 0.025],
                                      [0.044, 0.025, 0]], rtol=1e-12)
    a, b = lmo.homogeneous_hockney(alpha, beta)
    assert a == pytest.approx(40.0) and b == pytest.approx((0.013 + 0.044 + 0.025) / 3)


# --- 4 processors: times from an independent, loop-by-loop statement of the model ----------

def model_times(C, t, inv_beta, sizes):
    """T0, {M: TM}, {M: T2} written out pair by pair and triplet by triplet (no lmo.py code)."""
    n = len(C)
    T0 = np.zeros((n, n))
    TM = {m: np.zeros((n, n)) for m in sizes}
    T2 = {m: np.zeros((n, n, n)) for m in sizes}
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            T0[i, j] = (C[i] + C[j]) + (C[i] + C[j])                 # empty there and back
            for m in sizes:
                there = C[i] + m * t[i] + C[j] + m * t[j] + m * inv_beta[i][j]
                TM[m][i, j] = there + (C[i] + C[j])                # empty reply
                for k in range(n):
                    if k in (i, j):
                        continue
                    tau_j = 2 * C[j] + m * t[j] + m * inv_beta[i][j]
                    tau_k = 2 * C[k] + m * t[k] + m * inv_beta[i][k]
                    T2[m][i, j, k] = 4 * C[i] + 2 * m * t[i] + max(tau_j, tau_k)
    return T0, TM, T2


FOUR_C = [12.0, 7.0, 30.0, 18.0]
FOUR_T = [0.0005, 0.002, 0.0011, 0.004]
FOUR_INV_BETA = [[0, 0.008, 0.02, 0.011],
                 [0.008, 0, 0.009, 0.03],
                 [0.02, 0.009, 0, 0.015],
                 [0.011, 0.03, 0.015, 0]]


def test_four_processors_exact_recovery_and_redundancy():
    sizes = (1024, 16384)
    T0, TM, T2 = model_times(FOUR_C, FOUR_T, FOUR_INV_BETA, sizes)
    est = lmo.estimate(T0, TM, T2)
    np.testing.assert_allclose(est["C"]["mean"], FOUR_C, rtol=1e-12)
    np.testing.assert_allclose(est["t"]["mean"], FOUR_T, rtol=1e-9)
    np.testing.assert_allclose(np.nan_to_num(est["inv_beta"]["mean"]), FOUR_INV_BETA, rtol=1e-9)
    # each processor is in C(3, 2) = 3 triplets, each link in n - 2 = 2, at both sizes;
    # without noise every redundant estimate is the same
    assert est["C"]["count"].tolist() == [3] * 4
    assert est["t"]["count"].tolist() == [6] * 4
    assert (est["inv_beta"]["count"] == 4 * (1 - np.eye(4))).all()
    assert np.nanmax(est["t"]["std"]) < 1e-12 and np.nanmax(est["inv_beta"]["std"]) < 1e-12


def test_redundant_estimates_average_noise():
    """Noise on the one-to-two times (independent in every triplet): the average of t_i over
    its C(n-1, 2) triplets is closer to the truth than a single triplet's estimate typically is
    (its spread), and the spread shows the noise. (The round-trip T_ij(M) of a link is shared by
    all its triplets, so its own noise does not average out: that is the method's, not
    tested here.)"""
    rng = np.random.default_rng(7)
    n = 8
    C = rng.uniform(5, 30, n)
    t = rng.uniform(1e-4, 2e-3, n)
    ib = rng.uniform(5e-3, 3e-2, (n, n))
    ib = np.triu(ib, 1) + np.triu(ib, 1).T
    T0, TM, T2 = model_times(C, t, ib, (65536,))
    noisy = T2[65536] * (1 + rng.normal(0, 0.01, T2[65536].shape))
    est = lmo.estimate(T0, TM, {65536: noisy})
    assert est["t"]["count"].tolist() == [21] * n
    err_avg = np.abs(est["t"]["mean"] - t).mean()
    assert 0 < err_avg < 0.5 * est["t"]["std"].mean()


def test_estimation_needs_three_processors():
    with pytest.raises(ValueError, match="3 processors"):
        lmo.estimate(np.zeros((2, 2)), {}, {})


# --- thresholds ----------------------------------------------------------------------------

SCAN = np.array(lmo_experiments.SCAN_SIZES, dtype=float)


def test_scatter_leap_found_and_absent():
    smooth = 20 + 0.01 * SCAN
    assert lmo.scatter_threshold(SCAN, smooth) is None
    leap = np.where(SCAN <= 65536, 20 + 0.01 * SCAN, 900 + 0.03 * SCAN)
    assert lmo.scatter_threshold(SCAN, leap) == 65536


def test_one_noisy_point_is_no_leap():
    """A straight series whose smallest size came out 20 % fast (a token bucket that let it
    through unshaped, on the emulated cluster): splitting it off halves the relative residual,
    but both lines are the same, so there is no leap."""
    sizes = np.array([64, 128, 256, 512, 768, 1024, 1536, 2048], dtype=float) * 1024
    times = sizes / 6.0
    times[0] *= 0.8
    assert lmo.scatter_threshold(sizes, times) is None
    leap = np.where(sizes <= 524288, times, 2 * times)
    assert lmo.scatter_threshold(sizes, leap) == 524288


def test_gather_escalation_and_large_range():
    times = np.where(SCAN < 4096, 30 + 0.02 * SCAN, 0.0)
    times = np.where((SCAN >= 4096) & (SCAN <= 24576), 4000.0, times)          # escalated level
    times = np.where(SCAN > 24576, 100 + 0.05 * SCAN, times)                   # large, linear
    assert lmo.gather_thresholds(SCAN, times) == (3072, 24576)
    assert lmo.gather_thresholds(SCAN, 30 + 0.02 * SCAN) == (None, None)


# --- synthetic experiment rows, the parameter file and its schema ----------------------------

def synthetic_rows(C, t, inv_beta, sizes, scan_model=None, schedule="parallel"):
    """Experiment rows (as lmo_experiments writes them) of noise-free times; with scan_model,
    also the linear scatter/gather scan it predicts (root 0, every processor)."""
    n = len(C)
    T0, TM, T2 = model_times(C, t, inv_beta, sizes)
    rows = []

    def row(kind, r, a, b, m, v, sched=schedule):
        rows.append({"kind": kind, "root": r, "a": a, "b": b, "msg_size": m, "schedule": sched,
                     "mapping": "", "launch": 1, "mean_us": v, "median_us": v,
                     "ci_halfwidth_us": 0.01 * v, "n": 5, "ci_met": 1})

    if scan_model is not None:
        procs = np.arange(n)
        for m in lmo_experiments.SCAN_SIZES:
            row("lscatter", 0, -1, -1, m, float(scan_model.linear_scatter(procs, [m])[0]), "")
            row("lgather", 0, -1, -1, m, float(scan_model.linear_gather(procs, [m])[0]), "")
    for i, j in itertools.combinations(range(n), 2):
        row("rt0", i, j, -1, 0, float(T0[i, j]))
    for m in sizes:
        for i, j in itertools.combinations(range(n), 2):
            row("rt", i, j, -1, m, float(TM[m][i, j]))
        for i, j, k in itertools.combinations(range(n), 3):
            for r, a, b in ((i, j, k), (j, i, k), (k, i, j)):
                row("o2t", r, a, b, m, float(T2[m][r, a, b]))
    return rows


@pytest.fixture(scope="module")
def four_doc():
    truth = LmoModel(FOUR_C, FOUR_T, FOUR_INV_BETA, S=65536)
    rows = synthetic_rows(FOUR_C, FOUR_T, FOUR_INV_BETA, (4096, 16384), scan_model=truth)
    return lmo_fit.document(rows, {"rank_hosts": "a,b,c,d"})


def test_document_recovers_parameters_and_thresholds(four_doc):
    lmo_params.check_document(four_doc, "doc")
    assert four_doc["processors"] == ["a", "b", "c", "d"]
    np.testing.assert_allclose(four_doc["lmo"]["C_us"], FOUR_C, rtol=1e-5)
    np.testing.assert_allclose(four_doc["lmo"]["t_us_per_byte"], FOUR_T, rtol=1e-5)
    np.testing.assert_allclose(four_doc["lmo"]["inv_beta_us_per_byte"], FOUR_INV_BETA,
                               rtol=1e-5)
    assert four_doc["lmo"]["beta_bytes_per_us"][0][1] == pytest.approx(125.0)     # 1 / 0.008
    assert four_doc["thresholds"]["scatter_S"] == 65536
    # the scan was made by the true model without slope corrections: none is needed
    assert abs(four_doc["thresholds"]["kappa1_us_per_byte"]) < 1e-9
    assert four_doc["fit"]["experiments"]["o2t parallel"]["experiments"] == 2 * 12
    assert four_doc["fit"]["clipped_to_zero"] == 0


def test_missing_experiment_is_refused():
    rows = synthetic_rows(FOUR_C, FOUR_T, FOUR_INV_BETA, (4096,))
    rows = [r for r in rows if not (r["kind"] == "o2t" and r["root"] == 3 and r["a"] == 0)]
    with pytest.raises(InputError, match="o2t rows missing at message size 4096"):
        lmo_fit.document(rows, {})


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["lmo"]["C_us"].__setitem__(1, -2.0), r"lmo\.C_us\[1\]: -2\.0 is less than"),
    (lambda d: d["lmo"]["C_us"].pop(), "lmo.C_us: 3 entries, expected 4"),
    (lambda d: d["lmo"]["inv_beta_us_per_byte"][0].__setitem__(2, 0.5),
     r"inv_beta_us_per_byte\[0\]\[2\] differs from \[2\]\[0\]"),
    (lambda d: d["hockney_hetero"]["alpha_us"][2].__setitem__(2, 1.0), "diagonal must be 0"),
    (lambda d: d["thresholds"].__setitem__("scatter_S", 1.5), "1.5 is not of type"),
    (lambda d: d["lmo"].__setitem__("C_us", [float("nan")] * 4), "nan is not of type"),
    (lambda d: d.pop("hockney"), "'hockney' is a required property"),
    (lambda d: d["processors"].__setitem__(0, "a\nb"), "does not match"),
])
def test_schema_and_shape_checks(four_doc, tmp_path, edit, message):
    doc = copy.deepcopy(four_doc)
    edit(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=message):
        lmo_params.load(path)


def test_parameter_file_round_trip(four_doc, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(lmo_params.dumps(four_doc))
    par = lmo_params.load(path)
    assert par.n == 4 and set(par.models) == set(lmo_predict.MODELS)
    assert lmo_params.is_lmo_file(path)


# --- predictions by hand ------------------------------------------------------------------

def hand_model(**kw):
    return LmoModel(HAND_C, HAND_T, HAND_INV_BETA, **kw)


def test_linear_scatter_and_gather_by_hand():
    """Eq. 8: 2 (C_0 + M t_0) + max_i (C_i + M t_i + M / beta_0i) = 2 (10 + 1)
    + max(20 + 2 + 10, 30 + 3 + 40) = 95 at M = 1000; above S the sum: 22 + 32 + 73 = 127.
    Gather adds kappa1 M (eq. 9) up to M2 and uses the sum plus kappa2 M (eq. 10) beyond."""
    procs = np.arange(3)
    assert hand_model().linear_scatter(procs, [M]).tolist() == pytest.approx([95.0])
    assert hand_model(S=999).linear_scatter(procs, [M]).tolist() == pytest.approx([127.0])
    g = hand_model(M1=500, M2=999, kappa1=0.01, kappa2=0.002)
    assert g.linear_gather(procs, [900, M]).tolist() == pytest.approx(
        [2 * (10 + 0.9) + (30 + 2.7 + 36) + 9, 127 + 2])
    # root 2: 2 (30 + 3) + max(10 + 1 + 40, 20 + 2 + 20) = 117
    assert hand_model().linear_scatter(np.array([2, 0, 1]), [M]).tolist() == pytest.approx([117])
    # Hockney: transfers one after another, alpha 30 + 40, beta (0.013 + 0.044) M
    T0, TM, _ = hand_arrays()
    h = HockneyModel(*lmo.hetero_hockney(T0, TM))
    assert h.linear_scatter(procs, [M]).tolist() == pytest.approx([70 + 57])


def test_binomial_scatter_and_gather_by_hand():
    """4 ranks, in-order binomial tree: 0 -> 2 (2 blocks), then 0 -> 1; 2 -> 3. Hockney with
    alpha 1 and beta_ij = (i + j + 1) / 1000, m = 1000: p2p(a, b, k blocks) = 1 + k (a + b + 1).
    Scatter: p(0,2,2) + max(p(2,3,1), p(0,1,1)) = 7 + max(7, 3) = 14.
    Gather (mirror): max(p(1,0,1) = 3, p(3,2,1) + p(2,0,2) = 7 + 7) = 14; mapping 0,3,1,2
    (processor 3 at node 1, 1 at node 2, 2 at node 3): scatter p(0,1,2) + max(p(1,2,1),
    p(0,3,1)) = 5 + max(5, 5) = 10."""
    beta = (np.add.outer(np.arange(4), np.arange(4)) + 1) / 1000.0
    h = HockneyModel(np.ones((4, 4)), beta)
    ident = np.arange(4)[None, :]
    assert lmo_predict.binomial_times(h, ident, [1000]).tolist() == [[14.0]]
    assert lmo_predict.binomial_times(h, ident, [1000], gather=True).tolist() == [[14.0]]
    assert lmo_predict.binomial_times(h, np.array([[0, 3, 1, 2]]), [1000]).tolist() == [[10.0]]
    # 8 ranks: the paper's eq. 2 written out
    rng = np.random.default_rng(3)
    a = rng.uniform(50, 150, (8, 8))
    b = rng.uniform(0.01, 0.03, (8, 8))
    a, b = a + a.T, b + b.T
    p = lambda i, j, k: a[i, j] + k * b[i, j] * 500                         # noqa: E731
    eq2 = p(0, 4, 4) + max(p(0, 2, 2) + max(p(0, 1, 1), p(2, 3, 1)),
                           p(4, 6, 2) + max(p(4, 5, 1), p(6, 7, 1)))
    got = lmo_predict.binomial_times(HockneyModel(a, b), np.arange(8)[None, :], [500])
    assert got[0, 0] == pytest.approx(eq2)


def test_bcast_and_reduce_trees_by_hand():
    """Binomial bcast, 4 ranks on processors 0-3 (Open MPI's bmtree: 0 -> {1, 2}, 1 -> 3), one
    segment of m: stage 1 is root 0's flat tree, 2 (C_0 + m t_0) + max over 1, 2 of
    (C + m t + m / beta_0.), stage 2 is 1 -> 3."""
    mdl = LmoModel(FOUR_C, FOUR_T, FOUR_INV_BETA)
    m = 2000.0
    recv = lambda u, w: FOUR_C[w] + m * FOUR_T[w] + m * FOUR_INV_BETA[u][w]   # noqa: E731
    root = 2 * (FOUR_C[0] + m * FOUR_T[0]) + max(recv(0, 1), recv(0, 2))
    second = FOUR_C[1] + m * FOUR_T[1] + recv(1, 3)
    got = lmo_predict.predict(mdl, "bcast", 4, [2000])
    assert got[(6, 0)][0] == pytest.approx(root + second)
    # linear bcast: one flat tree of all ranks
    assert got[(1, 0)][0] == pytest.approx(3 * (FOUR_C[0] + m * FOUR_T[0])
                                           + max(recv(0, w) for w in (1, 2, 3)))
    # segments of 1024 (two): stages {root}, {root, 1}, {1}, each its slowest flat tree
    s = 1024.0
    rs = lambda u, w: FOUR_C[w] + s * FOUR_T[w] + s * FOUR_INV_BETA[u][w]     # noqa: E731
    r0 = 2 * (FOUR_C[0] + s * FOUR_T[0]) + max(rs(0, 1), rs(0, 2))
    r1 = FOUR_C[1] + s * FOUR_T[1] + rs(1, 3)
    assert got[(6, 1024)][0] == pytest.approx(r0 + max(r0, r1) + r1)
    # reduce binomial on the in-order tree (0 <- {1, 2}, 2 <- 3), upwards: 2's tree, then 0's
    red = lmo_predict.predict(mdl, "reduce", 4, [2000])
    up0 = 2 * (FOUR_C[0] + m * FOUR_T[0]) + max(recv(0, 1), recv(0, 2))
    up2 = FOUR_C[2] + m * FOUR_T[2] + recv(2, 3)
    assert red[(5, 0)][0] == pytest.approx(up0 + up2)
    # Hockney: a flat tree is its transfers one after another
    h = HockneyModel(np.full((4, 4), 5.0), np.full((4, 4), 0.001))
    assert lmo_predict.predict(h, "bcast", 4, [2000])[(6, 0)][0] == pytest.approx(3 * 7.0)


# --- mapping advice ----------------------------------------------------------------------

def test_mapping_advice_puts_the_large_block_on_the_fast_link():
    """4 processors, root 0; every link costs 0.01 µs/B except 0-3 (0.001). Scatter of 1000 B
    per rank: node 2 receives 2 blocks from the root, then node 1 one block, node 3 one from
    node 2. Processor 3 at node 2: 2 + max(10, 10) = 12; anywhere else 20 + max(10, ...) = 30."""
    beta = np.full((4, 4), 0.01)
    beta[0, 3] = beta[3, 0] = 0.001
    h = HockneyModel(np.zeros((4, 4)), beta)
    advice = lmo_predict.mapping_advice(h, "scatter", 1000)
    assert advice["method"] == "exhaustive" and advice["searched"] == 6
    assert advice["best"][0][2] == 3 and advice["best"][1] == pytest.approx(12.0)
    assert advice["worst"][1] == pytest.approx(30.0) and advice["worst"][0][2] != 3
    assert advice["identity"] == ([0, 1, 2, 3], pytest.approx(30.0))
    # the paper's greedy mapping alone: the largest subtree's root takes the fastest link
    # (worst: the slowest)
    assert lmo_predict.greedy_mapping(h, 0, [1, 2, 3], 4, 1000)[2] == 3
    assert lmo_predict.greedy_mapping(h, 0, [1, 2, 3], 4, 1000, worst=True)[2] != 3


def test_mapping_search_beyond_exhaustive_finds_the_optimum(monkeypatch):
    """7 processors: the greedy + swap search (forced) finds the exhaustive best and worst."""
    rng = np.random.default_rng(11)
    n = 7
    C = rng.uniform(5, 50, n)
    t = rng.uniform(1e-4, 1e-3, n)
    ib = rng.uniform(1e-3, 3e-2, (n, n))
    ib = np.triu(ib, 1) + np.triu(ib, 1).T
    mdl = LmoModel(C, t, ib)
    full = lmo_predict.mapping_advice(mdl, "gather", 8192)
    monkeypatch.setattr(lmo_predict, "EXHAUSTIVE_MAX", 1)
    quick = lmo_predict.mapping_advice(mdl, "gather", 8192)
    assert quick["method"].startswith("greedy") and full["method"] == "exhaustive"
    assert quick["best"][1] == pytest.approx(full["best"][1])
    assert quick["worst"][1] == pytest.approx(full["worst"][1])


# --- the commands, on synthetic experiment files ------------------------------------------

@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """`collsel model lmo-fit --experiments` on a saved synthetic experiment file."""
    d = tmp_path_factory.mktemp("lmo")
    truth = LmoModel(FOUR_C, FOUR_T, FOUR_INV_BETA, S=65536)
    rows = synthetic_rows(FOUR_C, FOUR_T, FOUR_INV_BETA, (4096, 16384), scan_model=truth)
    rows += synthetic_rows(FOUR_C, FOUR_T, FOUR_INV_BETA, (4096, 16384), schedule="serial")
    exp = d / "exp.csv"
    exp.write_text(lmo_experiments.save(rows, {"rank_hosts": "h0,h1,h2,h3",
                                               "wall_s": "lmo parallel 1.0; lmo serial 3.0"}))
    out = d / "p.json"
    assert main(["model", "lmo-fit", "--experiments", str(exp), "--out", str(out)]) == 0
    return d, out


def test_fit_command_from_saved_experiments(fitted):
    _, out = fitted
    doc = json.loads(out.read_text())
    np.testing.assert_allclose(doc["lmo"]["C_us"], FOUR_C, rtol=1e-5)
    assert doc["fit"]["serial_vs_parallel_max_rel_diff"]["inv_beta"] < 1e-5
    assert doc["fit"]["wall_s"] == "lmo parallel 1.0; lmo serial 3.0"


@pytest.mark.parametrize("collective, methods", [("scatter", 2), ("gather", 2), ("bcast", 26),
                                                 ("reduce", 21)])
def test_predict_writes_a_table_trees_can_use(fitted, collective, methods):
    d, out = fitted
    table = d / f"{collective}.csv"
    assert main(["model", "predict", str(out), "--collective", collective, "--comm-sizes",
                 "2-4", "--msg-sizes", "1K-64K", "--out", str(table)]) == 0
    t = read_table(table)
    assert len(t) == 3 * 7 * methods
    assert main(["build", str(table), "--collective", collective, "--out",
                 str(d / f"tree-{collective}")]) == 0


def test_predict_refuses_what_it_cannot(fitted, tmp_path, capsys):
    _, out = fitted
    base = ["model", "predict", str(out), "--msg-sizes", "1K", "--out", str(tmp_path / "x.csv")]
    for extra, message in [(["--comm-sizes", "5"], "more than the 4 processors"),
                           (["--comm-sizes", "3", "--mapping", "0,0,1"], "--mapping"),
                           (["--comm-sizes", "3", "--model", "tlop"], "--model tlop"),
                           (["--comm-sizes", "3", "--collective", "allreduce"], "--collective")]:
        assert main(base + extra) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


def test_mapping_command(fitted, capsys):
    _, out = fitted
    assert main(["model", "lmo-mapping", str(out), "--msg-size", "64K"]) == 0
    text = capsys.readouterr().out
    assert "exhaustive, 6 mappings" in text and text.count("--mapping 0,") == 3


def test_experiment_file_errors(tmp_path):
    rows = synthetic_rows(FOUR_C, FOUR_T, FOUR_INV_BETA, (4096,))
    good = lmo_experiments.save(rows, {})
    for old, new, message in [("rt0,0,1", "rtx,0,1", "kind 'rtx'"),
                              ("rt0,0,1,-1,0,parallel", "rt0,0,1,-1,0,sometimes",
                               "schedule 'sometimes'"),
                              ("rt0,0,1,-1", "rt0,0,99,-1", "a 99 out of range")]:
        path = tmp_path / "e.csv"
        path.write_text(good.replace(old, new, 1))
        with pytest.raises(InputError, match=message):
            lmo_experiments.load(path)


def test_expected_lines_follow_the_benchmark_order():
    lines = lmo_experiments.expected_lines("lmo", 4, [64])
    assert lines[:6] == [("rt0", "0", "1", "-1", "0"), ("rt0", "0", "2", "-1", "0"),
                         ("rt0", "0", "3", "-1", "0"), ("rt0", "1", "2", "-1", "0"),
                         ("rt0", "1", "3", "-1", "0"), ("rt0", "2", "3", "-1", "0")]
    o2t = [x for x in lines if x[0] == "o2t"]
    assert len(o2t) == 12 and o2t[:3] == [("o2t", "0", "1", "2", "64"),
                                          ("o2t", "1", "0", "2", "64"),
                                          ("o2t", "2", "0", "1", "64")]


def test_against_configuration():
    doc = {"processors": ["n1", "n2", "n3"],
           "lmo": {"beta_bytes_per_us": [[None, 100.0, 12.0], [100.0, None, 13.0],
                                         [12.0, 13.0, None]],
                   "inv_beta_us_per_byte": [[0, 0.01, 1 / 12], [0.01, 0, 1 / 13],
                                            [1 / 12, 1 / 13, 0]],
                   "C_us": [5.0, 6.0, 20.0], "t_us_per_byte": [1e-4, 2e-4, 9e-4]},
           "fit": {"cluster_nodes": "n1:1gbit:1;n2:1gbit:1;n3:100mbit:0.25"}}
    got = lmo_fit.against_configuration(doc)
    # configured: n1-n2 125 B/µs, n1-n3 and n2-n3 12.5 B/µs (the slower node)
    assert [x["beta_rel_error"] for x in got["links"]] == [-0.2, -0.04, 0.04]
    assert got["beta_rel_error_max_abs"] == 0.2
    # the whole per-byte rate of n1 -> n3: 1 / (1e-4 + 9e-4 + 1/12) B/µs
    assert got["links"][1]["effective"] == pytest.approx(1 / (1e-3 + 1 / 12), rel=1e-5)
    assert got["spearman_C_vs_inverse_share"] > 0.8 and got["spearman_t_vs_inverse_share"] > 0.8
    assert got["spearman_t_vs_inverse_rate"] > 0.8


# --- the emulated cluster, without running anything ----------------------------------------

class FakeNode:
    def __init__(self, name, rate, share):
        self.name, self.rate, self.cpu_share = name, rate, share


class FakeCluster:
    nodes = [FakeNode("n1", "1gbit", 1.0), FakeNode("n2", "1gbit", 1.0),
             FakeNode("n3", "100mbit", 0.5), FakeNode("n4", "1gbit", 0.25)]
    node_names = ["n1", "n2", "n3", "n4"]
    launch_env = {"OMPI_MCA_plm_rsh_agent": "/state/agent"}

    def describe(self):
        return "emulated 4 nodes"


def test_cluster_launches_place_one_rank_per_node(monkeypatch):
    """On the cluster every rank is alone on its node (every experiment crosses the network),
    the collectives are timed on the shared clock, the hosts the benchmark reports are checked,
    and the configuration goes into the metadata."""
    seen = []

    class Result:
        failure = None
        meta = {"rank_hosts": "n1,n2,n3,n4"}

    def fake_launch(cmd, env, sizes, timeout, on_point, lines, names):
        seen.append((cmd, env))
        for lead in lines:
            on_point(dict(zip(names, lead + ("5", "5", "4", "6", "0.1", "0.01", "9", "1"))))
        return Result()

    monkeypatch.setattr(lmo_experiments, "run_launch", fake_launch)
    runner = lmo_experiments.Runner(bench_path="/bin/true", cluster=FakeCluster())
    scan, _ = runner.launch("lmo-scan", 4, [1024, 2048])
    rows, _ = runner.launch("lmo", 4, [4096], "serial")
    cmd = " ".join(seen[0][0])
    assert "--host n1:1,n2:1,n3:1,n4:1" in cmd and "--runtime global" in cmd
    assert "--schedule serial" in " ".join(seen[1][0]) and "--runtime" not in seen[1][0]
    assert seen[0][1]["OMPI_MCA_plm_rsh_agent"] == "/state/agent"
    assert len(scan) == 4 and len(rows) == 6 + 6 + 12
    assert {r["schedule"] for r in rows} == {"serial"}
    meta = lmo_experiments.launch_metadata(runner, "collsel model lmo-fit --cluster", 4)
    assert meta["cluster_nodes"] == "n1:1gbit:1;n2:1gbit:1;n3:100mbit:0.5;n4:1gbit:0.25"

    class Elsewhere(Result):
        meta = {"rank_hosts": "n1,n1,n3,n4"}

    monkeypatch.setattr(lmo_experiments, "run_launch", lambda *a, **k: Elsewhere())
    with pytest.raises(Exception, match="ranks ran on n1,n1,n3,n4"):
        runner.launch("lmo", 4, [4096])
