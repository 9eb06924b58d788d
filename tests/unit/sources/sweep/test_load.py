"""The load generators of `collsel sweep --load-levels` (sources/sweep/load.py): level names,
the commands each level runs (the network ones on a stand-in cluster: they are designed, not
yet run), and `running`, which makes the load only inside its with-block and stops it on any
exit, also an error, or refuses a load that does not start.
"""
import subprocess
import time
from types import SimpleNamespace

import pytest

from collsel.errors import CollselError, InputError
from collsel.cluster.state import Node
from collsel.sources.sweep import load, shapes


def test_levels_parse_in_the_given_order():
    assert load.parse_levels("high, off,low") == ["high", "off", "low"]
    for bad, message in (("off,extreme", "unknown level 'extreme'"), ("low,low", "twice"),
                         (" , ", "empty list")):
        with pytest.raises(InputError, match=message):
            load.parse_levels(bad)


def test_stress_levels_demand_more_at_each_level():
    cpu = load.make("stress-cpu", cores=2)
    assert cpu.level("off").commands == []
    assert [cpu.level(n).commands for n in ("low", "medium", "high")] == [
        [("stress-ng", "--cpu", "2", "--cpu-load", "50", "--quiet")],
        [("stress-ng", "--cpu", "2", "--cpu-load", "100", "--quiet")],
        [("stress-ng", "--cpu", "4", "--cpu-load", "100", "--quiet")]]
    memory = load.make("stress-memory", cores=3)
    assert [memory.level(n).commands[0][2] for n in ("low", "medium", "high")] == ["1", "3", "6"]
    text = cpu.describe()
    assert text.startswith("stress-cpu (") and "high: 4 CPU workers busy 100 % each (2 x the" \
        in text and "started 1 s before each launch" in text


def cluster(*rates):
    nodes = [Node({"name": f"n{k}", "netns": f"collsel-n{k}", "address": f"198.18.0.{k}",
                   "rate": rate, "cpu_share": 1.0, "cpus": "0"}) for k, rate in enumerate(rates, 1)]
    return SimpleNamespace(nodes=nodes, partition="collsel",
                           launch_env={"SLURM_CONF": "/var/lib/collsel/cluster/slurm.conf"})


def test_iperf3_is_a_ring_of_streams_at_a_share_of_each_sender_link():
    gen = load.make("iperf3", cluster=cluster("1gbit", "100mbit", "1gbit"))
    servers, clients = gen.level("medium").stages          # servers listen first
    assert [s[:4] for s in servers] == [("ip", "netns", "exec", f"collsel-n{k}")
                                        for k in (1, 2, 3)]
    assert all("--server" in s for s in servers)
    ring = [(c[3], c[c.index("--client") + 1], int(c[c.index("--bitrate") + 1]))
            for c in clients]
    assert ring == [("collsel-n1", "198.18.0.2", 400_000_000),
                    ("collsel-n2", "198.18.0.3", 40_000_000),
                    ("collsel-n3", "198.18.0.1", 400_000_000)]
    with pytest.raises(InputError, match="2 nodes or more"):
        load.make("iperf3", cluster=cluster("1gbit")).level("low")


def test_slurm_mpi_is_another_job_over_every_node():
    gen = load.make("slurm-mpi", cluster=cluster("1gbit", "1gbit"), bench_path="/opt/b")
    (argv,), = gen.level("high").stages
    assert argv[:2] == ("env", "SLURM_CONF=/var/lib/collsel/cluster/slurm.conf")
    srun = argv[argv.index("srun"):]
    assert srun[srun.index("--nodes") + 1] == "2" and "--ntasks-per-node" in srun
    assert srun[srun.index("/opt/b") + 1:srun.index("/opt/b") + 5] == (
        "--collective", "bcast", "--sizes", str(1 << 20))


@pytest.mark.parametrize("name", ["iperf3", "slurm-mpi"])
def test_network_generators_need_the_cluster(name):
    with pytest.raises(InputError, match="give --cluster"):
        load.make(name)


def test_unknown_generator_and_missing_program(monkeypatch):
    with pytest.raises(InputError, match="unknown generator"):
        load.make("fork-bomb")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(InputError, match="needs 'stress-ng' on PATH"):
        load.make("stress-cpu").check()


class Scripted(load.Generator):
    """Levels that run given commands (stages of argv tuples)."""
    name = "scripted"
    summary = "test"

    def __init__(self, stages):
        self.stages = stages

    def _level(self, name):
        return load.Level(name, self.stages, "scripted")


def alive(proc):
    return proc.poll() is None


def test_running_makes_the_load_only_inside_the_block(monkeypatch):
    started = []
    real = load._start
    monkeypatch.setattr(load, "_start", lambda argv: started.append(real(argv)) or started[-1])
    gen = Scripted(((("sleep", "30"),), (("sleep", "31"),)))
    with gen.running("high", settle_s=0.05) as level:
        assert level.name == "high"
        assert [p.args for p, _ in started] == [("sleep", "30"), ("sleep", "31")]
        assert all(alive(p) for p, _ in started)
    assert not any(alive(p) for p, _ in started)
    with gen.running("off") as level:           # off runs nothing
        assert level.commands == [] and len(started) == 2


def test_running_stops_the_load_when_the_launch_fails(monkeypatch):
    started = []
    real = load._start
    monkeypatch.setattr(load, "_start", lambda argv: started.append(real(argv)) or started[-1])
    with pytest.raises(RuntimeError):
        with Scripted(((("sleep", "30"),),)).running("low", settle_s=0.05):
            raise RuntimeError("launch failed")
    assert started and not alive(started[0][0])


def test_a_load_that_ends_before_the_launch_is_an_error():
    gen = Scripted(((("sh", "-c", "echo no such option >&2; exit 3"),),))
    began = time.monotonic()
    with pytest.raises(CollselError, match="ended with status 3 before the launch: no such "
                                           "option"):
        with gen.running("low", settle_s=0.2):
            pytest.fail("the block must not run")
    assert time.monotonic() - began < 30


def test_a_load_that_cannot_start_is_an_error():
    with pytest.raises(CollselError, match="cannot start"):
        with Scripted(((("/nonexistent/stress",),),)).running("low"):
            pass


def test_shapes_per_level_keep_the_plain_seeds_and_marks():
    plain = shapes.plain([2, 4])
    per_level = shapes.with_levels(plain, ["off", "high"])
    assert [s.mark for s in per_level] == ["2@off", "2@high", "4@off", "4@high"]
    assert shapes.with_levels(plain, None) == plain
    # without levels nothing changes (resumes of old tables), with them every level differs
    assert plain[0].seed_key(3) == (2, 3) and plain[0].columns() == {}
    keys = {s.seed_key(3) for s in per_level}
    assert len(keys) == 4 and (2, 3, "high") in keys
    explicit = shapes.explicit("2", "2")[0]
    assert explicit.seed_key(1) == (4, 1, "2x2") and explicit.mark == "2x2"
    loaded = shapes.with_levels([explicit], ["low"])[0]
    assert loaded.mark == "2x2@low" and loaded.columns() == {"nodes": 2, "ppn": 2,
                                                              "load_level": "low"}
    assert shapes.of_row({"comm_size": 4, "nodes": 2, "ppn": 2, "load_level": "low"}) == loaded


def test_the_real_stress_ng_stops_with_its_block():
    if subprocess.run(["sh", "-c", "command -v stress-ng"], capture_output=True).returncode:
        pytest.skip("stress-ng not installed (make setup)")
    gen = load.make("stress-cpu", cores=1)
    with gen.running("low", settle_s=0.3):
        inside = subprocess.run(["pgrep", "-f", "stress-ng --cpu 1 --cpu-load 50"],
                                capture_output=True, text=True).stdout.split()
    assert inside
    time.sleep(0.3)
    after = subprocess.run(["pgrep", "-f", "stress-ng --cpu 1 --cpu-load 50"],
                           capture_output=True, text=True).stdout.split()
    assert not set(inside) & set(after)
