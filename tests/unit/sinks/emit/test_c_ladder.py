"""The compiled decision.c agrees with `collsel query` everywhere, and stats.json can be
recomputed from the compiled function's decisions alone."""
import json
import pathlib
import subprocess

import numpy as np
import pytest

from helpers import agree, build, compile_decision, read_points, synthetic_3d

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
    agree(out, n_random=100_000)


@pytest.mark.parametrize("categorical", [False, True])
@pytest.mark.parametrize("options", [[], ["--max-depth", "2"], ["--split", "replicate"]])
def test_compiled_agrees_with_query_octree(tmp_path, categorical, options):
    table = synthetic_3d(tmp_path / "t3.csv", categorical)
    out = build(tmp_path, table, "bcast", "--z", "ppn", *options)
    assert "t_decide3(int comm_size, size_t msg_size, int64_t z" in (out / "decision.h").read_text()
    agree(out, n_random=100_000)


@pytest.mark.parametrize("collective,options", CASES)
def test_stats_recomputed_from_compiled_decisions(tmp_path, tanjaderin, collective, options):
    out = build(tmp_path, tanjaderin[collective], collective, *options)
    stats = json.loads((out / "stats.json").read_text())
    exe = compile_decision(out, False)
    times, base = read_points(tanjaderin[collective])
    for key, t in base.items():   # "defer to the MPI" (0, 0, 0) is a candidate where measured
        times.setdefault(key, {})[(0, 0, 0)] = t
    keys = sorted(times)
    text = "".join(f"{p} {m}\n" for p, m in keys)
    decided = subprocess.run([str(exe)], input=text, capture_output=True, text=True,
                             check=True).stdout.splitlines()
    penalties, unmeasured = [], 0
    for key, line in zip(keys, decided):
        method = tuple(int(x) for x in line.split())
        # against the fastest forced method (core.maps.cell_cost), "defer" at the default's time
        best = min(v for k, v in times[key].items() if k != (0, 0, 0))
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
    base_pen = [100 * (base[k] / min(v for a, v in times[k].items() if a != (0, 0, 0)) - 1)
                for k in keys if k in base]
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
@pytest.mark.slow
def test_exact_tree_has_zero_penalty_on_our_sweeps(tmp_path, collective):
    """Our own measured sweeps (bench-data/, made with `collsel sweep`)."""
    table = pathlib.Path(__file__).resolve().parents[4] / "bench-data" / f"{collective}-sweep.csv"
    out = build(tmp_path, table, collective)
    stats = json.loads((out / "stats.json").read_text())
    assert stats["measured_cells"] == 15 * 44   # P = 2..16, 44 message sizes
    assert stats["penalty_max"] == 0 and stats["unmeasured_choices"] == 0
    agree(out, n_random=20_000)
