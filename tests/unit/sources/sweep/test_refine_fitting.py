"""A seconds --refine budget (how collsel tune gives each collective its part) starts only the
refinement launches estimated to fit what it has left, cut to the sizes that do
(sources/sweep/refine.fitting): before, the last launch began whatever it cost."""
import re

from collsel.sources.sweep import refine
from helpers import REPO, run_in_process

PAIRED = REPO / "bench-data" / "paired" / "bcast-mpich.csv"     # a journal: replayed launches
GRID = ("--comm-sizes", "2,4,8", "--msg-sizes", "1,64,4096,262144,4194304")
LAUNCH = re.compile(r"^# launch\.(\d+)\.(\d+)=.* sizes=(\d+) wall_s=([\d.]+)")


def _costs(per_size, startup=1.0):
    """prefix_costs of launches costing `startup` + per_size[P] a size."""
    return lambda p, sizes: [startup + per_size[p] * n for n in range(1, len(sizes) + 1)]


def test_the_most_undecided_p_is_cut_to_the_sizes_that_fit():
    undecided = {8: [1, 64, 4096], 2: [64]}
    assert refine.fitting(undecided, 100.0, _costs({8: 2.0, 2: 0.5})) == (8, [1, 64, 4096])
    assert refine.fitting(undecided, 5.5, _costs({8: 2.0, 2: 0.5})) == (8, [1, 64])


def test_a_p_whose_first_size_does_not_fit_gives_way_to_one_that_does():
    undecided = {8: [1, 64, 4096], 2: [64]}
    assert refine.fitting(undecided, 2.0, _costs({8: 2.0, 2: 0.5})) == (2, [64])
    assert refine.fitting(undecided, 1.2, _costs({8: 2.0, 2: 0.5})) is None


def _launches(table):
    """{(P, K): (sizes, wall_s)} of a replayed sweep's journal."""
    with open(str(table) + ".launches") as f:
        return {(int(m[1]), int(m[2])): (int(m[3]), float(m[4]))
                for m in map(LAUNCH.match, f) if m}


def _sweep(tmp_path, name, refine_budget):
    out = tmp_path / name
    got = run_in_process("sweep", "--collective", "bcast", "--replay", PAIRED, "--out", out,
                         *GRID, "--launches", "1", "--strategy", "adaptive",
                         "--refine", refine_budget)
    assert got.returncode == 0, got.stderr
    return _launches(out), got.stderr


def test_a_seconds_budget_is_not_overrun_by_its_last_launch(tmp_path):
    free, _ = _sweep(tmp_path, "free.csv", "20")             # 20 launches: nothing cut
    cut, stderr = _sweep(tmp_path, "cut.csv", "6s")
    refined = [wall for (_, k), (_, wall) in cut.items() if k > 1]
    assert refined and sum(refined) <= 6.0, cut
    assert "refine: stopped: no launch at an undecided cell fits" in stderr
    # what ran is what was cut: a refinement launch measured fewer sizes than the same launch
    # of the sweep whose budget counts launches
    assert any(k > 1 and (p, k) in free and sizes < free[(p, k)][0]
               for (p, k), (sizes, _) in cut.items()), (cut, free)
