"""The exact tree of the interpolated map as `build --recommend`'s preferred candidate: where two
methods' times cross between measured P, the recommendation decides by interpolated times
(core.maps.interpolated), the build writes that tree on its own map, its recorded command
makes it again, and the printed figure is the direct one."""
import json
import shlex

import numpy as np
import pytest

from collsel.core.evaluate import candidates, model_selection
from collsel.core.maps import decision_map, table as tables
import helpers
from helpers import collsel


def crossing_table(path):
    """helpers.crossing_table at P = 4, 8, 16, 32 and 64: the times cross at 12. Held out,
    P = 16 lies between 8 and 32: the plain map's midpoint hands it method 1 (40 us, 33 %),
    the interpolated times method 2 (0 %)."""
    return helpers.crossing_table(path, (4, 8, 16, 32, 64))


def test_interpolated_candidates_exist_only_where_values_can_be_inserted(tmp_path):
    table = tables.read_tables([crossing_table(tmp_path / "t.csv")]).select("bcast")
    plain = decision_map.MapSettings().build(table)
    dense = decision_map.MapSettings(interpolate=True).build(table)
    assert candidates.interpolable(plain) and not candidates.interpolable(dense)
    assert [c for c in candidates.grid(plain) if c.interp] == [candidates.INTERPOLATED_EXACT]
    assert not any(c.interp for c in candidates.grid(dense))


def test_recommend_takes_the_interpolated_tree_and_says_so(tmp_path):
    out = tmp_path / "rec"
    done = collsel("build", "--recommend", crossing_table(tmp_path / "t.csv"), "--out", out)
    assert done.returncode == 0, done.stderr
    assert "interpolated" in done.stdout
    stats = json.loads((out / "stats.json").read_text())
    assert stats["recommendation"]["chosen"]["fields"]["interp"] is True
    # the recorded command makes the recommendation again: the same tree, bytes for bytes
    words = shlex.split(stats["recommendation"]["command"])
    again = collsel(*words[1:-1], tmp_path / "again")
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again" / "tree.json").read_bytes() == (out / "tree.json").read_bytes()
    # between 8 and 16 the tree follows the crossing at 12, not the midpoint
    asked = collsel("query", out / "tree.json", "--ids", "--points", "-", input="11 8\n13 8\n")
    assert asked.returncode == 0, asked.stderr
    assert [line.split()[0] for line in asked.stdout.splitlines()] == ["1", "2"]
    # the printed (nested) leave-one-P-out figure is the direct one, interpolated candidates
    # among those each fold chooses from
    report = tmp_path / "e.json"
    done = collsel("evaluate", tmp_path / "t.csv", "--candidate=--recommend", "--candidate=",
                   "--candidate=--interpolate", "--json", report, "--quiet")
    assert done.returncode == 0, done.stderr
    direct = [c["mean"] for c in json.loads(report.read_text())["protocols"]["P"]["configs"]]
    assert direct[0] == stats["recommendation"]["nested"]["leave_one_P_out"]["mean"]
    # held out, P = 16 takes the crossing's method 2 on the interpolated map (0 %), method 1
    # on the plain one (33 %)
    assert direct[1:] == pytest.approx([100 / 9, 0.0])


def test_the_preferred_tree_is_kept_unless_a_trivial_candidate_beats_it():
    # candidates: defer, fixed, a 3-leaf tree (best), the preferred one (40 leaves)
    costs = {"P": np.array([[9.0, 9.0], [5.0, 5.0], [1.0, 1.0], [4.0, 4.0]])}
    leaves = [1, 1, 3, 40]
    assert model_selection.one_se_pick(costs, leaves, [0, 1])[0] == 2      # no preference
    assert model_selection.one_se_pick(costs, leaves, [0, 1], preferred=3)[0] == 3
    # the fixed method beats it: the one-SE rule chooses among all
    costs["P"][1] = 3.0
    assert model_selection.one_se_pick(costs, leaves, [0, 1], preferred=3)[0] == 2
