"""core.evaluate.held_out: `collsel evaluate`'s folds scored by worker processes, one fold a task, give
the figures one process gives (each fold's trees built whole in one process)."""
from collsel.core.evaluate import build_config, held_out, out_of_sample, parallel
from collsel.core.maps import table
from collsel.core.trees import tree

from helpers import synthetic_table


def test_folds_scored_by_workers_are_those_of_one_process(tmp_path):
    measured = table.read_table(synthetic_table(tmp_path / "t.csv", "bcast")).select("bcast")
    configs = [build_config.Config(name, tree.BuildOptions(), out_of_sample.DEFAULT_SETTINGS,
                                   recommend=name == "--recommend")
               for name in ("--recommend", "exact")]
    alone = held_out.evaluate(measured, configs, ["P", "m", "edge"])
    with parallel.pool() as workers:
        shared = held_out.evaluate(measured, configs, ["P", "m", "edge"], workers=workers)
    assert alone == shared
    assert alone["P"]["folds"] == 3 and alone["m"]["folds"] == 2 and alone["edge"]["folds"] == 1
