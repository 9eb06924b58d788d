"""The emulated cluster's pure parts, no root actions: names and addresses, link rates and CPU
shares, slurm.conf, the agent's argument handling (with a stand-in `ip`), leftovers found by
name in listings, which processes `down` counts as the cluster's, and which nodes are lost (their
namespace gone)."""
import ipaddress
import os
import subprocess

import pytest

from collsel.errors import InputError
from collsel.cluster import config, launch, names, processes, state
from collsel.cluster.layout import Layout
from helpers import collsel


def test_names_fit_linux_limits_and_the_test_range():
    subnet = ipaddress.ip_network(names.SUBNET)
    for k in range(1, names.MAX_NODES + 1):
        assert len(names.host_veth(k)) <= 15 and len(names.netns(k)) <= 15
        assert ipaddress.ip_address(names.address(k)) in subnet
        assert all(names.ours(n) for n in (names.host_veth(k), names.netns(k),
                                           names.cgroup(names.node_name(k))))
    assert ipaddress.ip_address(names.BRIDGE_ADDRESS) in subnet
    assert names.ours(names.BRIDGE) and len(names.BRIDGE) <= 15
    assert subnet.subnet_of(ipaddress.ip_network("198.18.0.0/15"))      # RFC 2544's range


def test_state_dir_precedence(monkeypatch):
    monkeypatch.delenv(names.STATE_DIR_ENV, raising=False)
    assert names.state_dir() == names.DEFAULT_STATE_DIR
    monkeypatch.setenv(names.STATE_DIR_ENV, "/srv/c")
    assert names.state_dir() == "/srv/c"
    assert names.state_dir("/var/x/") == "/var/x"
    for inside in ("/tmp", "/tmp/c", "/var/../tmp/c"):
        with pytest.raises(InputError, match="outside /tmp"):
            names.check_state_dir(inside)
    assert names.check_state_dir("/var/tmp/c") == "/var/tmp/c"


@pytest.mark.parametrize("text, bits", [("1gbit", 1e9), ("100mbit", 1e8), ("12.5mbps", 1e8),
                                        ("1Gbit", 1e9), ("1mibit", 2 ** 20), ("2500kbit", 2.5e6)])
def test_rates_tc_accepts(text, bits):
    assert config.rate_bits(text) == pytest.approx(bits)


@pytest.mark.parametrize("text", ["1xbit", "fast", "1 gbit", "-1mbit", "1g", "", "0mbit",
                                  "10kbit", "1tbit", "1e9bit"])
def test_rates_rejected(text):
    with pytest.raises(InputError, match="link rate"):
        config.rate_bits(text)


def test_desired_per_node_rates_and_shares():
    wanted = config.desired(3, "1gbit", "n2=100mbit", "n3=0.5", cpus=2)
    assert [n["rate"] for n in wanted["nodes"]] == ["1gbit", "100mbit", "1gbit"]
    assert [n["cpu_share"] for n in wanted["nodes"]] == [1.0, 1.0, 0.5]
    assert [n["netns"] for n in wanted["nodes"]] == ["collsel-n1", "collsel-n2", "collsel-n3"]
    assert wanted["link"]["qdisc"] == "tbf"


@pytest.mark.parametrize("args, match", [
    ((0,), "--nodes"), ((names.MAX_NODES + 1,), "--nodes"),
    ((2, "1gbit", "n3=1gbit"), "no node 'n3'"), ((2, "1gbit", "n1=1gbit,n1=2gbit"), "twice"),
    ((2, "1gbit", "n1"), "NODE=VALUE"), ((2, "1gbit", "n1=slow"), "link rate"),
    ((2, "1gbit", "", "n1=0"), r"\(0, 1\]"), ((2, "1gbit", "", "n1=1.5"), r"\(0, 1\]"),
    ((2, "1gbit", "", "n2=half"), "cpu share")])
def test_desired_rejects(args, match):
    with pytest.raises(InputError, match=match):
        config.desired(*args)


def test_command_rejects_bad_input_before_doing_anything():
    for args in (["--nodes", "2", "--rate", "1xbit"], ["--nodes", "0"],
                 ["--nodes", "2", "--cpu-shares", "n5=0.5"]):
        done = collsel("cluster", "up", *args, "--state-dir", "/nonexistent/collsel-test")
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert collsel("cluster").returncode == 2
    assert "rehearse multi-node tuning" in collsel("cluster", "--help").stdout


def test_slurm_conf_names_the_cluster_own_files():
    from collsel.cluster import slurm
    layout = Layout("/var/lib/x")
    text = slurm.render_slurm_conf(layout, config.desired(3, cpus=2)["nodes"])
    assert "SlurmctldHost=ctl(198.18.0.254)\n" in text
    assert f"SlurmctldPort={slurm.SLURMCTLD_PORT}\n" in text and slurm.SLURMCTLD_PORT != 6817
    assert "AuthInfo=socket=/var/lib/x/munge/munge.socket\n" in text
    assert "SlurmdPidFile=/var/lib/x/slurm/slurmd-%n.pid\n" in text
    assert "NodeName=n3 NodeAddr=198.18.0.3 NodeHostname=n3 CPUs=2 State=UNKNOWN\n" in text
    assert "PartitionName=collsel Nodes=n1,n2,n3 Default=YES" in text
    assert "OverSubscribe=FORCE" in text and "/etc/munge" not in text
    assert "/tmp" not in text           # nodes have a private /tmp
    # srun without --mpi starts Open MPI's ranks through PMIx, as sites configure it (with
    # none each rank starts alone and aborts in MPI_Init).
    assert "\nMpiDefault=pmix\n" in text


def test_leftovers_found_by_name_in_listings():
    netns = "collsel-n2 (id: 1)\nother\ncollsel-n1 (id: 0)\n\n"
    assert names.netns_from_listing(netns) == ["collsel-n1", "collsel-n2"]
    links = ("1: lo: <LOOPBACK,UP> mtu 65536\n"
             "5: collsel-br: <BROADCAST,MULTICAST,UP> mtu 1500\n"
             "7: collsel-n1-h@if6: <BROADCAST,MULTICAST,UP> mtu 1500 master collsel-br\n"
             "9: eth0@if10: <BROADCAST> mtu 1500\n")
    assert names.links_from_listing(links) == ["collsel-n1-h", "collsel-br"]    # bridge last
    assert names.cgroups_from_listing(["user.slice", "collsel-n2", "docker"]) == ["collsel-n2"]


def test_processes_of_the_cluster():
    dirs = ["/var/lib/collsel/cluster"]
    assert processes.matches("slurmctld -f /var/lib/collsel/cluster/slurm.conf", 1, dirs, set())
    assert processes.matches("munged --socket=/var/lib/collsel/cluster", 1, dirs, set())
    assert not processes.matches("cat /var/lib/collsel/cluster2/x", 1, dirs, set())
    assert not processes.matches("bash", 7, dirs, {8})
    assert processes.matches("bash", 8, dirs, {8})          # inside a collsel namespace
    # srun or mpirun left in the root namespace by a killed salloc or test: its environment
    env = ["HOME=/root", "SLURM_CONF=/var/lib/collsel/cluster/slurm.conf"]
    assert processes.matches("srun ./a.out", 1, dirs, set(), env)
    assert not processes.matches("srun ./a.out", 1, dirs, set(), ["SLURM_CONF=/etc/slurm.conf"])
    assert not processes.matches("sh", 1, dirs, set(), ["X=/var/lib/collsel/cluster/slurm.conf"])


@pytest.fixture
def fake_ip(tmp_path):
    """A stand-in `ip` that prints its arguments one per line (the agent execs it)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ip").write_text('#!/bin/sh\nfor a in "$@"; do echo "[$a]"; done\n')
    (bin_dir / "ip").chmod(0o755)
    agent = tmp_path / "agent"
    agent.write_text(launch.agent_script(["n1", "n2"]).replace(
        "/sys/fs/cgroup/cpu", str(tmp_path / "cgroups")))
    agent.chmod(0o755)
    return agent, {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


def _agent(fake_ip, *args):
    agent, env = fake_ip
    return subprocess.run([str(agent), *args], capture_output=True, text=True, env=env,
                          timeout=10)


def test_agent_behaves_like_ssh(fake_ip):
    # hydra: `-x HOST "/usr/bin/hydra_pmi_proxy" --control-port ...`
    done = _agent(fake_ip, "-x", "n2", '"/usr/bin/hydra_pmi_proxy"', "--control-port", "a:1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[netns]", "[exec]", "[collsel-n2]", "[unshare]", "[--uts]", "[sh]", "[-c]",
        '[hostname "$0" && eval "$1"]', "[n2]", '["/usr/bin/hydra_pmi_proxy" --control-port a:1]']
    by_address = _agent(fake_ip, "-o", "BatchMode=yes", "198.18.0.1", "orted")
    assert "[collsel-n1]" in by_address.stdout and by_address.stdout.endswith("[orted]\n")


def test_agent_refuses_other_hosts(fake_ip):
    for host in ("n3", "localhost", "collsel-n1"):
        done = _agent(fake_ip, host, "true")
        assert done.returncode == 255 and "not a node" in done.stderr and not done.stdout


def test_agent_joins_the_node_cgroup(fake_ip, tmp_path):
    group = tmp_path / "cgroups" / "collsel-n1"
    group.mkdir(parents=True)
    _agent(fake_ip, "n1", "true")
    assert (group / "cgroup.procs").read_text().strip().isdigit()


def test_load_without_a_cluster_says_what_to_do(tmp_path):
    with pytest.raises(InputError, match="no emulated cluster is up at .*collsel cluster up"):
        state.load(str(tmp_path))


def test_cluster_record_round_trip(tmp_path):
    layout = Layout(str(tmp_path))
    wanted = config.desired(2, "1gbit", "n2=100mbit", "n2=0.5", cpus=2)
    rec = state.record(wanted, layout, launch.launch_env(layout), launch.mpich_launch_args(layout))
    state.save(layout, rec)
    cluster = state.load(str(tmp_path))
    assert cluster.node_names == ["n1", "n2"] and cluster.nodes[1].rate == "100mbit"
    assert cluster.nodes[1]["cpu_share"] == 0.5 and cluster.partition == "collsel"
    assert cluster.launch_env["OMPI_MCA_plm_rsh_agent"] == layout.agent
    assert cluster.launch_env["SLURM_CONF"] == layout.slurm_conf
    assert "-launcher-exec" in cluster.mpich_launch_args
    line = cluster.describe()
    assert "\n" not in line and "n2=100mbit" in line and "n2=0.5" in line
    assert "no propagation delay" in line


def test_lost_nodes_are_those_whose_namespace_is_gone(tmp_path, monkeypatch):
    layout = Layout(str(tmp_path))
    wanted = config.desired(3, "1gbit", "", "", cpus=2)
    state.save(layout, state.record(wanted, layout, launch.launch_env(layout),
                                    launch.mpich_launch_args(layout)))
    cluster = state.load(str(tmp_path))
    netns = tmp_path / "netns"
    netns.mkdir()
    monkeypatch.setattr(state, "NETNS_DIR", str(netns))
    for k in (1, 2, 3):
        (netns / names.netns(k)).touch()
    assert cluster.lost_nodes() == [] and cluster.lost_text() == ""
    (netns / names.netns(3)).unlink()
    assert [n.name for n in cluster.lost_nodes()] == ["n3"]
    assert cluster.lost_text() == ("node n3 of the emulated cluster is gone (no network "
                                   "namespace collsel-n3)")
    (netns / names.netns(1)).unlink()
    assert cluster.lost_text() == ("nodes n1,n3 of the emulated cluster are gone (no network "
                                   "namespaces collsel-n1,collsel-n3)")
