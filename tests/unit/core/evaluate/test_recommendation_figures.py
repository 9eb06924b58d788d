"""The recommendation's figures as records (core.evaluate.recommendation_figures): stats.json's
`recommendation` section read back and written again is the same text, with folds to choose
on and without; the section of an older collsel is still read."""
import json

import pytest

from collsel.core.evaluate import headline
from collsel.core.evaluate.recommendation_figures import Recommendation
from helpers import REPO, collsel, synthetic_table


def text(section):
    """stats.json's text of a section (pipeline.render_files writes it so)."""
    return json.dumps(section, indent=1, sort_keys=True, allow_nan=False)


def built_section(tmp_path, *args):
    r = collsel("build", *args, "--recommend", "--out", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    return json.loads((tmp_path / "o" / "stats.json").read_text())["recommendation"]


def test_a_recommendation_round_trips_through_stats_json(tmp_path):
    section = built_section(tmp_path, REPO / "bench-data/paired/bcast-openmpi.csv")
    figures = Recommendation.from_json(section)
    # this table's recommendation fell back to the best fixed method before 2026-11-30; no
    # recommendation does now (core.evaluate.model_selection)
    assert figures.selection is not None and figures.selection.fallback is None
    assert figures.selection.edge is not None and figures.command is not None
    assert text(figures.to_json()) == text(section)
    assert Recommendation.from_json(figures.to_json()) == figures


def test_a_recommendation_without_folds_round_trips(tmp_path):
    """Two P and two m, no journal: no fold, the exact tree, said so."""
    table = synthetic_table(tmp_path / "t.csv", "bcast", comm_sizes=(2, 4), msg_sizes=(1, 64))
    section = built_section(tmp_path, table)
    figures = Recommendation.from_json(section)
    assert figures.selection is None and figures.why.startswith("no out-of-sample data")
    assert text(figures.to_json()) == text(section)


OLDER = sorted(p for p in (REPO / "bench-data").rglob("stats.json")
               if json.loads(p.read_text()).get("recommendation"))
# Built --no-defer (Intel MPI's tunes): the default is no candidate, so it has no figure on the
# nested folds and the headline is the in-sample pair, said so.
NO_DEFER = [p for p in OLDER
            if "--no-defer" in json.loads(p.read_text())["recommendation"]["command"]]


@pytest.mark.parametrize("path", OLDER, ids=lambda p: str(p.relative_to(REPO / "bench-data")))
def test_the_stats_json_of_an_older_collsel_is_read(path):
    """The shipped trees' stats.json (no `fallback` nor `nesting`, kinds without a nested
    figure, picks without fields): read, and their headline figure as before."""
    stats = json.loads(path.read_text())
    figures = Recommendation.from_json(stats["recommendation"])
    assert figures.selection is not None
    nested = stats["recommendation"]["nested"]
    assert {k: None if v is None else v["capped"] for k, v in nested.items()} == {
        k: None if v is None else v.capped for k, v in figures.selection.nested.items()}
    figure = headline.of_stats(stats)
    assert figure.out_of_sample == (path not in NO_DEFER)
