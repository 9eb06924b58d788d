"""core.evaluate.model_selection.shared_training: studies of overlapping data share the trees of
an equal training set (keyed by DecisionMap.content_key), and what they choose and score is what
they choose and score alone."""
import dataclasses

import numpy as np

from collsel.core.evaluate import build_config, fold_maps, held_out, model_selection
from collsel.core.maps import decision_map, table as tables
from collsel.core.trees import tree


def _table(tanjaderin):
    return tables.read_tables([tanjaderin["reduce"]]).select("reduce")


def test_content_key_tells_equal_maps_from_different_ones(tanjaderin):
    dmap = decision_map.build_map(_table(tanjaderin))
    again = decision_map.build_map(_table(tanjaderin))
    assert dmap.content_key() == again.content_key()
    times = dmap.times.copy()
    times.flat[np.flatnonzero(np.isfinite(times))[0]] += 1.0
    assert dataclasses.replace(dmap, times=times).content_key() != dmap.content_key()


def test_equal_training_sets_are_built_once_within(tanjaderin):
    dmap = decision_map.build_map(_table(tanjaderin))
    candidates = model_selection.cands.grid(dmap)

    def study():
        return model_selection.Study(fold_maps.FoldGrid(dmap), candidates)

    assert study().trained(()) is not study().trained(())
    with model_selection.shared_training():
        inside = study().trained(())
        assert study().trained(()) is inside
        assert study().trained((("P", 1),)) is not inside
    assert study().trained(()) is not inside


def test_shared_folds_score_as_each_alone(tanjaderin):
    """The held-out penalties of recommended trees built on a table's leave-one-P-out and
    leave-one-m-out folds (as a replayed tune's curve scores them): equal, shared or not."""
    table = _table(tanjaderin)
    config = build_config.Config("rec", tree.BuildOptions().check(), recommend=True)
    tasks = [(table, table)]
    for protocol in ("P", "m"):
        column = getattr(table, held_out.COLUMN[protocol])
        tasks += [(table.take(column != v), table.take(column == v))
                  for v in held_out.held_values(table, protocol)[:2]]

    def run():
        return [held_out.scores(train, test, [config], True) for train, test in tasks]

    alone = run()
    with model_selection.shared_training():
        shared = run()
    assert len(alone) == len(shared) > 3
    for a, s in zip(alone, shared):
        assert (a is None) == (s is None)
        if a is not None:
            for x, y in zip([*a[0], a[1], a[2]], [*s[0], s[1], s[2]]):
                np.testing.assert_array_equal(x, y)


def test_held_out_scores_reuse_the_builds_of_one_training_set(tanjaderin):
    """held_out.scores with a `builds` dict: the training set's tree built once, and each
    test's penalties those of a build of its own."""
    table = _table(tanjaderin)
    config = build_config.Config("exact", tree.BuildOptions().check())
    column = table.comm_size
    values = held_out.held_values(table, "P")[:2]
    train = table.take(~np.isin(column, values))
    builds = {}
    for v in values:
        test = table.take(column == v)
        alone = held_out.scores(train, test, [config], True)
        reused = held_out.scores(train, test, [config], True, builds=builds)
        first = builds[0]
        for x, y in zip([*alone[0], alone[1], alone[2]], [*reused[0], reused[1], reused[2]]):
            np.testing.assert_array_equal(x, y)
    assert list(builds) == [0] and builds[0] is first
