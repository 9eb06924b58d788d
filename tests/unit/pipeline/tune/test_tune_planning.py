"""pipeline/tune/planning.py: the TuneRequest is what tune's parser makes of its flags (the same
defaults, a field per flag); plan() checks it, naming the flag; a resumed request takes no
recorded option; the profile's region is read from typed values."""
import argparse
import dataclasses
import json

import pytest

from collsel import pipeline
from collsel.commands import tune as tune_command
from collsel.errors import InputError
from collsel.pipeline.tune import planning, profile_region
from collsel.sources.measure import launchers
from collsel.sources.sweep import plan as sweep_plan



def write_profile(path):
    """A `collsel profile` file: allreduce and bcast on two ranks."""
    entries = [{"collective": c, "comm_size": 2, "m": m, "ppn": 2, "ranks": 2, "calls": 20,
                "calls_per_rank": 10, "time_s": t, "median_us": 10.0, "share": t / 4}
               for c, m, t in (("allreduce", 8192, 0.8), ("bcast", 64, 0.1))]
    path.write_text(json.dumps({
        "format": "collsel-profile", "version": 1, "command": ["./app"],
        "library": "Open MPI v4.1.4", "ranks": 2, "hosts": 1,
        "wall_time_s": {"mean": 2.0, "max": 2.1}, "dropped_calls": 0, "entries": entries}))
    return path


def test_tune_request_defaults_are_the_tune_commands():
    parser = argparse.ArgumentParser()
    tune_command.register(parser.add_subparsers())
    parsed = vars(parser.parse_args(["tune", "--out", "t"]))
    parsed.pop("run")
    assert parsed == vars(pipeline.TuneRequest(out="t"))


def test_every_passed_sweep_option_is_a_request_field_with_its_help():
    names = {f.name for f in dataclasses.fields(pipeline.TuneRequest)}
    assert {planning._dest(flag) for flag in planning.PASSED} <= names
    assert set(tune_command.PASSED_HELP) == set(planning.PASSED)


def test_plan_names_the_bad_flag(tmp_path):
    request = pipeline.TuneRequest(out=str(tmp_path / "t"), collectives="bcast",
                                   launches="2", strategy="coarse-refine")
    with pytest.raises(InputError, match=r"--launches 2 out of range \[3, 100\]"):
        planning.plan(request, tune_command.score_config)
    request = dataclasses.replace(request, launches="0", strategy=None)
    with pytest.raises(InputError, match=r"--launches 0 out of range \[1, 100\]"):
        planning.plan(request, tune_command.score_config)


@pytest.mark.parametrize("strategy, paired", [(None, 1), ("adaptive", 1),
                                              ("coarse-refine", 3)])
def test_each_mode_gets_its_strategys_coarse_launches(tmp_path, strategy, paired):
    """adaptive (the default) races from one launch of a paired grid; coarse-refine's tie test
    needs 3; the per-method allgatherv is never refined and keeps 3 under either."""
    request = pipeline.TuneRequest(out=str(tmp_path / "t"), collectives="bcast,allgatherv",
                                   strategy=strategy, budget="1h")
    plan = planning.plan(request, tune_command.score_config)
    assert plan.strategy == (strategy or "adaptive")
    assert {g.collective: (g.mode, g.launches) for g in plan.grids} == {
        "bcast": ("paired", paired), "allgatherv": ("per-method", 3)}
    given = planning.plan(dataclasses.replace(request, launches="4"),
                          tune_command.score_config)
    assert {g.launches for g in given.grids} == {4}


def test_a_resumed_request_takes_no_recorded_option(tmp_path):
    planning.check_resume(pipeline.TuneRequest(out="t", resume=True, dry_run=True))
    with pytest.raises(InputError, match="drop --budget$"):
        planning.check_resume(pipeline.TuneRequest(out="t", resume=True, budget="1h",
                                                   map_by="core"))
    with pytest.raises(InputError, match="drop --map-by$"):
        planning.check_resume(pipeline.TuneRequest(out="t", resume=True, map_by="core"))


def test_the_profile_is_read_from_typed_values(tmp_path):
    path = str(write_profile(tmp_path / "p.json"))
    region = profile_region.read(path, "openmpi")
    assert region["ranks"] == 2 and region["family"] == "openmpi"
    with pytest.raises(InputError, match="the profile gives P and m; drop --msg-sizes"):
        profile_region.read(path, "openmpi", msg_sizes="8")
    with pytest.raises(InputError, match="with --replay"):
        profile_region.read(path, "openmpi", "t.csv")


def _cluster(tmp_path, nodes, cpus):
    """A cluster.json of `nodes` nodes of `cpus` CPUs each (their hostfile's slots)."""
    from collsel.cluster import state
    from collsel.cluster.layout import Layout
    state_dir = tmp_path / "cluster"
    state_dir.mkdir()
    state.save(Layout(str(state_dir)), {"version": state.VERSION, "nodes": [
        {"name": f"n{i}", "netns": f"collsel-n{i}", "address": f"198.18.0.{10 + i}",
         "rate": "1gbit", "cpu_share": 1.0, "cpus": cpus} for i in range(1, nodes + 1)]})
    return str(state_dir)


def test_a_clusters_slots_bound_the_default_p_and_refuse_a_larger_one(tmp_path):
    cluster = _cluster(tmp_path, 2, 2)         # 4 slots: mpirun --hostfile starts no more
    plan = planning.plan(pipeline.TuneRequest(out=str(tmp_path / "t"), collectives="bcast",
                                              cluster=cluster, dry_run=True),
                         tune_command.score_config)
    assert max(max(g.comm_sizes) for g in plan.grids) == 4
    request = pipeline.TuneRequest(out=str(tmp_path / "t"), collectives="bcast",
                                   cluster=cluster, comm_sizes="2,4,8,12", dry_run=True)
    with pytest.raises(InputError, match=r"--comm-sizes 8,12: beyond the emulated cluster's 4 "
                                         r"slots \(2 nodes; "):
        planning.plan(request, tune_command.score_config)


def test_a_hostfiles_slots_bound_the_default_p_and_refuse_a_larger_one(tmp_path):
    """--hostfile whose lines all give slots= (mpirun starts no more ranks): the default P
    stop at their sum; a host line without slots= (mpirun counts its cores) bounds nothing."""
    hosts = tmp_path / "hosts"
    hosts.write_text("# two nodes\nnodeA slots=2\nnodeB slots=3 max_slots=8\n")
    request = pipeline.TuneRequest(out=str(tmp_path / "t"), collectives="bcast",
                                   hostfile=str(hosts), dry_run=True)
    plan = planning.plan(request, tune_command.score_config)
    assert max(max(g.comm_sizes) for g in plan.grids) == max(
        p for p in sweep_plan.DEFAULT_COMM_SIZES if p <= 5)
    with pytest.raises(InputError, match=r"--comm-sizes 8: beyond the 5 slots of --hostfile "):
        planning.plan(dataclasses.replace(request, comm_sizes="2,4,8"),
                      tune_command.score_config)
    hosts.write_text("nodeA slots=2\nnodeB\n")
    plan = planning.plan(request, tune_command.score_config)
    assert max(max(g.comm_sizes) for g in plan.grids) == max(sweep_plan.DEFAULT_COMM_SIZES)
    hosts.write_text("# no host yet\n")
    assert launchers.hostfile_slots(str(hosts)) is None     # the launcher names this one
    hosts.write_text("nodeA slots=two\n")
    with pytest.raises(InputError, match=r"hosts':1: slots=two is not a count"):
        planning.plan(request, tune_command.score_config)
