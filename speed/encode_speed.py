"""`make bench`: exact tree + statistics of a synthetic 1024 x 1024 map with 40 methods, timed
as a ratio to one plain NumPy pass (argmin over the methods) on the same 1024 x 1024 x 40 cube,
both measured in this run. Target: ratio <= 20."""
import sys
import time

import numpy as np

from collsel.core.maps import decision_map
from collsel.core.trees import penalty, tree

SIDE, METHODS, REPEAT = 1024, 40, 3


def synthetic_cube(rng):
    """Smooth cost surfaces (latency + bandwidth terms per method) with 3 % noise, so the map
    has regions and ragged borders like measured data."""
    p = np.arange(2, 2 + SIDE, dtype=float)[:, None, None]
    m = np.exp2(np.linspace(0, 22, SIDE))[None, :, None]
    alpha = rng.uniform(1, 20, METHODS)
    beta = rng.uniform(1e-4, 1e-2, METHODS)
    shape = rng.uniform(0.5, 1.5, METHODS)
    cube = alpha * np.log2(p) ** shape + beta * m * p ** (shape - 0.5)
    return cube * rng.uniform(0.97, 1.03, cube.shape)


def dmap_from_cube(cube):
    axes = [decision_map.make_axis("comm_size", decision_map.LINEAR, range(2, 2 + SIDE)),
            decision_map.make_axis("msg_size", decision_map.LOG2,
                                   [k * 4096 + 1 for k in range(SIDE)])]
    methods = [decision_map.Method(1 + k % 9, 1024 * (k // 9), 0) for k in range(METHODS)]
    best = cube.argmin(-1)
    return decision_map.DecisionMap("bcast", axes, methods, cube, np.ones(best.shape, bool),
                                    best, cube.min(-1), np.full(best.shape, np.nan))


def best_of(fn):
    times = []
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main():
    cube = synthetic_cube(np.random.default_rng(0))
    dmap = dmap_from_cube(cube)
    assert len(dmap.axes[1].values) == SIDE
    numpy_pass, _ = best_of(lambda: cube.argmin(-1))
    encode, (t, stats) = best_of(lambda: (lambda t: (t, penalty.tree_stats(dmap, t)))(
        tree.build_tree(dmap)))
    ratio = encode / numpy_pass
    print(f"map {SIDE} x {SIDE}, {METHODS} methods: exact tree {stats['nodes']} nodes, "
          f"{stats['leaves']} leaves, depth {stats['min_depth']}-{stats['max_depth']}, "
          f"penalty max {stats['penalty_max']:.2f}%")
    print(f"numpy argmin pass     {numpy_pass * 1e3:9.1f} ms")
    print(f"exact tree + stats    {encode * 1e3:9.1f} ms")
    print(f"ratio                 {ratio:9.2f}   (target <= 20; best of {REPEAT} runs each)")
    return 0 if ratio <= 20 else 1


if __name__ == "__main__":
    sys.exit(main())
