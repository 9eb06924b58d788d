"""The paper's Table 3 (Nuriyev et al. 2022, "Model-based" column) beside the choices of the
shipped presets at the same P and message sizes."""
from collsel.research.models import params
from collsel.research.models.predict import predict_times

PAPER_TABLE3 = {
    # Nuriyev et al. 2022, Table 3, "Model-based" column, m = 16 KiB .. 4 MiB (9 sizes).
    ("grisou", 450): ["chain"] * 9,
    ("grisou", 600): ["chain"] * 9,
    ("gros", 400): ["binary", "binary"] + ["split_binary"] * 2 + ["k-chain"] * 5,
    ("gros", 1000): ["binomial"] + ["split_binary"] * 5 + ["k-chain"] * 3,
    ("marenostrum4", 96): ["k-chain"] * 7 + ["chain"] * 2,
    ("marenostrum4", 480): ["k-chain"] * 9,
}
PAPER_NAMES = {1: "flat", 2: "k-chain", 3: "chain", 4: "split_binary", 5: "binary",
               6: "binomial"}
PAPER_SIZES = [2 ** k * 1024 for k in range(4, 13)]


def paper_comparison():
    """Rows (preset, P, m KiB, ours, paper) for the paper's Table 3 cases."""
    rows = []
    for (name, P), paper in PAPER_TABLE3.items():
        par = params.load(params.preset_path(name))
        pred = predict_times(par, P, PAPER_SIZES)
        for i, m in enumerate(PAPER_SIZES):
            alg, _ = min(pred, key=lambda k: (pred[k][i], k))
            rows.append((name, P, m // 1024, PAPER_NAMES[alg], paper[i]))
    return rows
