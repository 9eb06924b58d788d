"""The compiled decision.c agrees with `collsel query` everywhere, and stats.json can be
recomputed from the compiled function's decisions alone."""
import csv
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from collsel.core import algorithms

INT_MAX = 2**31 - 1
SIZE_MAX = 2**64 - 1
CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O1"]
DRIVER = pathlib.Path(__file__).parent / "c" / "decision_driver.c"


def collsel(*args, **kw):
    return subprocess.run([sys.executable, "-m", "collsel.cli", *map(str, args)],
                          capture_output=True, text=True, **kw)


def synthetic_3d(path, categorical=False):
    """A small octree input: 3 methods whose ranking depends on P, m and ppn."""
    rng = np.random.default_rng(7)
    zs = ["bynode", "byslot", "bycore"] if categorical else [1, 2, 4]
    with open(path, "w") as f:
        f.write("collective,comm_size,msg_size,algorithm,segsize,time_us,ppn\n")
        for p in (2, 3, 4, 8, 16):
            for m in [0] + [2**k for k in range(0, 23, 2)]:
                for zi, z in enumerate(zs):
                    for alg, seg, cost in ((1, 0, p * (1 + m / 1e3)),
                                           (6, 0, np.log2(p + 1) * (3 + m / 1e3) * (1 + zi)),
                                           (3, 8192, 40 + m / 4e3 * (1 + zi / 2))):
                        t = cost * (1 + 0.05 * rng.random())
                        f.write(f"bcast,{p},{m},{alg},{seg},{t:.4f},{z}\n")
    return path


def build(tmp_path, table, collective, *options):
    out = tmp_path / "out"
    r = collsel("build", table, "--collective", collective, "--prefix", "t",
                "--out", out, *options)
    assert r.returncode == 0, r.stderr
    return out


def compile_decision(out, three_d):
    exe = out / "decide"
    macro = "-DDECIDE3=t_decide3" if three_d else "-DDECIDE=t_decide"
    subprocess.run(["gcc", *CFLAGS, macro, f"-I{out}", str(DRIVER), str(out / "decision.c"),
                    "-o", str(exe)], check=True)
    return exe


def query_points(doc, n_random, seed=1):
    """Every measured point, every cut and the value just below it, extremes, and random points."""
    rng = np.random.default_rng(seed)
    axes = doc["axes"]
    p_vals = sorted(set(axes[0]["values"] + axes[0]["cuts"] + [c - 1 for c in axes[0]["cuts"]]
                        + [1, 2, INT_MAX]))
    m_vals = sorted(set(axes[1]["values"] + axes[1]["cuts"] + [c - 1 for c in axes[1]["cuts"]]
                        + [0, 1, SIZE_MAX]))
    p_vals = [p for p in p_vals if p >= 1]
    p_rand = np.concatenate([rng.integers(1, 2 * max(axes[0]["values"]) + 2, n_random // 2),
                             np.exp(rng.uniform(0, np.log(INT_MAX), n_random - n_random // 2))
                             .astype(np.int64)])
    m_rand = [int(x) for x in np.exp2(rng.uniform(0, 64, n_random)).astype(np.float64)]
    m_rand = [min(SIZE_MAX, x) for x in m_rand]
    points = [(p, m) for p in p_vals for m in m_vals] + list(zip(p_rand.tolist(), m_rand))
    if len(axes) == 3:
        z_vals = axes[2]["values"]
        z_all = z_vals + [c - 1 for c in axes[2]["cuts"]] + [min(z_vals) - 5, max(z_vals) + 5]
        if axes[2]["kind"] == "category":
            z_all = z_vals
        points = [(p, m, z_all[i % len(z_all)]) for i, (p, m) in enumerate(points)]
    return points


CASES = [
    ("bcast", []), ("bcast", ["--split", "replicate"]), ("bcast", ["--max-depth", "3"]),
    ("bcast", ["--split", "replicate", "--max-depth", "2"]),
    ("bcast", ["--threshold", "80", "--leaf", "penalty"]),
    ("reduce", []), ("reduce", ["--max-depth", "2", "--leaf", "penalty"]),
    ("reduce", ["--split", "replicate", "--threshold", "70"]),
]


@pytest.mark.parametrize("collective,options", CASES)
def test_compiled_agrees_with_query_tanjaderin(tmp_path, tanjaderin, collective, options):
    out = build(tmp_path, tanjaderin[collective], collective, *options)
    _agree(out, n_random=100_000)


@pytest.mark.parametrize("categorical", [False, True])
@pytest.mark.parametrize("options", [[], ["--max-depth", "2"], ["--split", "replicate"]])
def test_compiled_agrees_with_query_octree(tmp_path, categorical, options):
    table = synthetic_3d(tmp_path / "t3.csv", categorical)
    out = build(tmp_path, table, "bcast", "--z", "ppn", *options)
    assert "t_decide3(int comm_size, size_t msg_size, long z" in (out / "decision.h").read_text()
    _agree(out, n_random=100_000)


def _agree(out, n_random):
    doc = json.loads((out / "tree.json").read_text())
    agree_with_query(out, compile_decision(out, len(doc["axes"]) == 3), n_random)


def agree_with_query(out, exe, n_random):
    """The decision program `exe` (points on stdin) answers as `collsel query` on the tree in
    `out` over every cut, cut-1, extreme and n_random random points."""
    doc = json.loads((out / "tree.json").read_text())
    points = query_points(doc, n_random)
    text = "".join(" ".join(map(str, pt)) + "\n" for pt in points)
    c_out = subprocess.run([str(exe)], input=text, capture_output=True, text=True, check=True)
    q = collsel("query", out / "tree.json", "--points", "-", input=text)
    assert q.returncode == 0, q.stderr
    c_lines, q_lines = c_out.stdout.splitlines(), q.stdout.splitlines()
    assert len(c_lines) == len(points) >= n_random
    bad = [(pt, c, py) for pt, c, py in zip(points, c_lines, q_lines) if c != py]
    assert not bad, f"{len(bad)} disagreements, first: {bad[:3]}"


def read_points(table_path):
    """Independent reading of a canonical table with plain csv:
    ({(P, m): {(alg, seg, fan): time}}, {(P, m): algorithm-0 time})."""
    times, base = {}, {}
    with open(table_path) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            alg = int(r["algorithm"]) if r["algorithm"].isdigit() else \
                algorithms.algorithm_id(r["collective"], r["algorithm"])
            key = (int(r["comm_size"]), int(r["msg_size"]))
            if alg == 0:
                base[key] = float(r["time_us"])
            else:
                times.setdefault(key, {})[(alg, int(r["segsize"]), int(r.get("faninout") or 0))] \
                    = float(r["time_us"])
    return times, base


@pytest.mark.parametrize("collective,options", CASES)
def test_stats_recomputed_from_compiled_decisions(tmp_path, tanjaderin, collective, options):
    out = build(tmp_path, tanjaderin[collective], collective, *options)
    stats = json.loads((out / "stats.json").read_text())
    exe = compile_decision(out, False)
    times, base = read_points(tanjaderin[collective])
    keys = sorted(times)
    text = "".join(f"{p} {m}\n" for p, m in keys)
    decided = subprocess.run([str(exe)], input=text, capture_output=True, text=True,
                             check=True).stdout.splitlines()
    penalties, unmeasured = [], 0
    for key, line in zip(keys, decided):
        method = tuple(int(x) for x in line.split())
        best = min(times[key].values())
        if method in times[key]:
            penalties.append(100 * (times[key][method] / best - 1))
        else:
            unmeasured += 1
    assert stats["unmeasured_choices"] == unmeasured
    assert stats["measured_cells"] == len(keys)
    assert stats["penalty_mean"] == pytest.approx(np.mean(penalties), abs=1e-9)
    assert stats["penalty_median"] == pytest.approx(np.median(penalties), abs=1e-9)
    assert stats["penalty_max"] == pytest.approx(max(penalties), abs=1e-9)
    assert stats["penalty_min"] == pytest.approx(min(penalties), abs=1e-9)
    base_pen = [100 * (base[k] / min(times[k].values()) - 1) for k in keys if k in base]
    assert stats["baseline_cells"] == len(base_pen)
    assert stats["baseline_penalty_mean"] == pytest.approx(np.mean(base_pen), abs=1e-9)

    # depth statistics and sizes from tree.json alone, walking it with a plain loop
    doc = json.loads((out / "tree.json").read_text())
    nodes, axes = doc["nodes"], doc["axes"]
    first, split, depth = nodes["first_child"], nodes["split"], nodes["depth"]
    leaves = [i for i, fc in enumerate(first) if fc == -1]
    assert stats["nodes"] == len(first) and stats["leaves"] == len(leaves)
    assert stats["max_depth"] == max(depth[i] for i in leaves)
    assert stats["min_depth"] == min(depth[i] for i in leaves)
    cell_depths = []
    for i in range(len(axes[0]["values"])):
        for j in range(len(axes[1]["values"])):
            node = 0
            while first[node] != -1:
                offset = 0
                for d, cell in ((0, i), (1, j)):
                    if split[d][node] != -2:
                        offset = 2 * offset + (cell >= split[d][node])
                node = first[node] + offset
            cell_depths.append(depth[node])
    assert stats["mean_depth"] == pytest.approx(np.mean(cell_depths), abs=1e-12)


def test_exact_tree_has_zero_penalty(tmp_path, tanjaderin):
    for collective in ("bcast", "reduce"):
        for split in ("balanced", "replicate"):
            out = build(tmp_path / f"{collective}{split}", tanjaderin[collective], collective,
                        "--split", split)
            stats = json.loads((out / "stats.json").read_text())
            assert stats["penalty_max"] == 0 and stats["unmeasured_choices"] == 0
            assert stats["measured_cells"] == 160


@pytest.mark.parametrize("collective", ["bcast", "reduce"])
def test_exact_tree_has_zero_penalty_on_our_sweeps(tmp_path, collective):
    """Our own measured sweeps (bench-data/, made with `collsel sweep`)."""
    table = pathlib.Path(__file__).resolve().parents[1] / "bench-data" / f"{collective}-sweep.csv"
    out = build(tmp_path, table, collective)
    stats = json.loads((out / "stats.json").read_text())
    assert stats["measured_cells"] == 15 * 44   # P = 2..16, 44 message sizes
    assert stats["penalty_max"] == 0 and stats["unmeasured_choices"] == 0
    _agree(out, n_random=20_000)
