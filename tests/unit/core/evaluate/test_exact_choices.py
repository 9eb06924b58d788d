"""A tie-blind exact tree answers every cell with its map's best method, so the selection asks
the map instead of building the tree (candidates.Trained.choices); the tree built, queried at
the same held-out cells, must answer the same, on ragged maps with gaps and "defer" too."""
import numpy as np
import pytest

from collsel.core.evaluate import candidates, fold_maps
from collsel.core.maps import decision_map, table as tables

EXACT = [candidates.Candidate("exact", None, split, leaf, defer=defer)
         for split in ("balanced", "replicate") for leaf in ("majority", "penalty")
         for defer in (True, False)] + [candidates.INTERPOLATED_EXACT]


def ragged_table(path, seed):
    """Four methods and the default at P 2..40 (some), m powers of 2, a fifth of the (cell,
    method) pairs missing, times whose ranking changes with P and m."""
    rng = np.random.default_rng(seed)
    sizes = sorted(rng.choice(np.arange(2, 41), 9, replace=False).tolist())
    with open(path, "w") as f:
        f.write("collective,comm_size,msg_size,algorithm,segsize,time_us\n")
        for p in sizes:
            for e in range(0, 20, 2):
                for alg in range(5):
                    if alg and rng.random() < 0.2:
                        continue
                    slope = 1.0 + 0.3 * alg * np.sin(p / 7.0 + e / 5.0 + alg)
                    t = (5.0 + alg) * p ** 0.5 * 2 ** (e * slope / 10) * rng.uniform(0.9, 1.1)
                    f.write(f"bcast,{p},{2 ** e},{alg},0,{t:.3f}\n")
    return path


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_exact_trees_answer_is_the_maps_best(tmp_path, seed):
    table = tables.read_tables([ragged_table(tmp_path / "t.csv", seed)]).select("bcast")
    grid = fold_maps.FoldGrid(decision_map.MapSettings().build(table))
    for removal in grid.folds("P") + grid.folds("m"):
        trained = candidates.Trained(candidates.maps_for(grid, removal, EXACT), EXACT)
        held = grid.held_out(removal)
        asked = trained.choices(held)
        for i in range(len(EXACT)):
            t, on = trained.tree(i), trained.map_of(i)
            leaf = t.leaf_of_cells(fold_maps.query_cells(on, held))
            assert (asked[i] == t.method[leaf]).all(), (EXACT[i].label(), removal)
