"""collsel tune's plan as a record (pipeline/tune/plan.TunePlan): tune.json read back and
written again is the same bytes, for every shipped tune and a replayed one."""
import json

import pytest

from collsel.errors import InputError
from collsel.pipeline.tune import layout, plan as tune_plan
from helpers import REPO, collsel

SHIPPED = sorted((REPO / "bench-data").rglob(layout.PLAN))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(REPO / "bench-data")))
def test_a_shipped_tune_json_round_trips_byte_for_byte(path):
    """Shipped plans: live, under --profile (hpcc, lammps, mpi4py-fft), and from before
    --strategy was recorded."""
    text = path.read_text()
    plan = tune_plan.TunePlan.from_json(json.loads(text))
    assert layout.dumps(plan) == text
    assert tune_plan.TunePlan.from_json(plan.to_json()) == plan


def test_a_replayed_tune_json_round_trips_and_resumes(tmp_path):
    out = tmp_path / "t"
    r = collsel("tune", "--replay", REPO / "bench-data/paired/bcast-openmpi.csv", "--budget",
                "60s", "--checkpoints", "2", "--out", out, timeout=300)
    assert r.returncode == 0, r.stderr
    text = (out / layout.PLAN).read_text()
    plan = layout.load(str(out))
    assert plan.replayed is not None and plan.strategy is not None
    assert plan.grids[0].collective == "bcast" and plan.collectives == ("bcast",)
    assert layout.dumps(plan) == text


def test_a_plan_without_a_field_is_one_line(tmp_path):
    data = json.loads(SHIPPED[0].read_text())
    data["machine"] = layout.machine(data["launcher"])      # this host's, so it resumes here
    del data["grids"]
    (tmp_path / layout.PLAN).write_text(json.dumps(data))
    with pytest.raises(InputError, match="a collsel tune plan without 'grids'"):
        layout.load(str(tmp_path))


@pytest.mark.parametrize("field, value", [("comm_sizes", ["x", 3]), ("msg_sizes", "1,2"),
                                          ("candidate_comm_sizes", [2, -4]),
                                          ("candidate_comm_sizes", [True])])
def test_a_plan_whose_sizes_are_not_integers_is_one_line(tmp_path, field, value):
    data = json.loads(SHIPPED[0].read_text())
    data["machine"] = layout.machine(data["launcher"])
    data["grids"][0][field] = value
    (tmp_path / layout.PLAN).write_text(json.dumps(data))
    with pytest.raises(InputError, match="not a collsel tune plan of format"):
        layout.load(str(tmp_path))
