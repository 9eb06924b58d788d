"""The emulated cluster (collsel cluster up/down/status) with the real MPIs and Slurm: ranks
really run on the nodes the launch names, through mpirun --hostfile, salloc + srun --mpi=pmix,
sbatch, and MPICH's hydra. The crash and failure tests are in test_cluster_crash.py."""
import os
import pathlib
import re
import signal
import subprocess

import pytest

from conftest import CLUSTER_ARGS, cluster_command, outside_tmp

REPO = pathlib.Path(__file__).resolve().parents[2]
SOURCE = pathlib.Path(__file__).with_name("where.c")
# Outside /tmp: every node has a private /tmp, so srun's tasks would not see a program there.
BIN = outside_tmp(REPO / "build" / "cluster-test")
MPI_TIMEOUT_S = 60
OMPI_FLAGS = ["--allow-run-as-root", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1"]


@pytest.fixture(scope="module")
def where():
    """{"openmpi": program, "mpich": program} printing rank 0's "sum=ok hosts=h0,h1,...". """
    BIN.mkdir(parents=True, exist_ok=True)
    out = {}
    for mpi, cc in (("openmpi", "mpicc.openmpi"), ("mpich", "mpicc.mpich")):
        out[mpi] = BIN / f"where-{mpi}"
        subprocess.run([cc, "-O1", "-o", str(out[mpi]), str(SOURCE)], check=True, timeout=120)
    return out


def run(cmd, cluster):
    """Run `cmd` with the cluster's launch environment in its own process group, all of which
    is killed on a timeout (salloc's srun, mpirun's children); its stdout."""
    env = {**os.environ, **cluster.launch_env}
    proc = subprocess.Popen(list(map(str, cmd)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=BIN, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=MPI_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{cmd}: no end in {MPI_TIMEOUT_S} s: {out}{err}")
    assert proc.returncode == 0, f"{cmd}: {out}{err}"
    return out


def hosts(output):
    m = re.search(r"sum=(\w+) hosts=(\S+)", output)
    assert m, output
    assert m.group(1) == "ok"
    return m.group(2).split(",")


def test_up_is_idempotent_and_refuses_another_configuration(cluster):
    again = cluster_command("up", *CLUSTER_ARGS)
    assert again.returncode == 0, again.stderr
    assert "already up and healthy" in again.stderr
    other = cluster_command("up", "--nodes", "3")
    assert other.returncode == 2
    assert "collsel cluster down` first" in other.stderr
    assert cluster_command("status").returncode == 0


def test_status_shows_every_node_healthy(cluster):
    done = cluster_command("status")
    assert done.returncode == 0, done.stdout
    for node in cluster.nodes:
        line = next(li for li in done.stdout.splitlines() if li.split()[:1] == [node.name])
        assert node.address in line and "slurmd alive" in line and "sinfo idle" in line


def test_links_are_shaped_each_way(cluster):
    for k, node in enumerate(cluster.nodes, 1):
        inside = subprocess.run(["tc", "-n", node.netns, "qdisc", "show", "dev", "eth0"],
                                capture_output=True, text=True, timeout=10).stdout
        outside = subprocess.run(["tc", "qdisc", "show", "dev", f"collsel-n{k}-h"],
                                 capture_output=True, text=True, timeout=10).stdout
        for shown in (inside, outside):
            assert re.search(r"qdisc tbf .* rate 1Gbit", shown), shown
        routes = subprocess.run(["ip", "-n", node.netns, "route", "show"], capture_output=True,
                                text=True, timeout=10).stdout
        assert "default" not in routes and "198.18.0.0/24" in routes


def test_mpirun_hostfile_puts_ranks_on_every_node(cluster, where):
    out = run(["mpirun", *OMPI_FLAGS, "--hostfile", cluster.hostfile, "-np", 4,
               "--map-by", "node", where["openmpi"]], cluster)
    assert hosts(out) == cluster.node_names


def test_salloc_srun_pmix_puts_ranks_on_every_node(cluster, where):
    out = run(["salloc", "-N", 4, "-n", 8, "srun", "--mpi=pmix", where["openmpi"]], cluster)
    assert sorted(set(hosts(out))) == cluster.node_names
    assert len(hosts(out)) == 8


def test_sbatch_job_completes_on_two_nodes(cluster, where, tmp_path):
    output = BIN / "sbatch.out"
    output.unlink(missing_ok=True)
    script = BIN / "job.sh"
    script.write_text(f"#!/bin/sh\nsrun --mpi=pmix {where['openmpi']}\n")
    run(["sbatch", "--wait", "-N", 2, "-n", 4, "-o", output, script], cluster)
    assert sorted(set(hosts(output.read_text()))) == ["n1", "n2"]


def test_mpich_hydra_puts_ranks_on_two_nodes(cluster, where):
    out = run(["mpiexec.mpich", *cluster.mpich_launch_args, "-hosts", "n1,n2", "-n", 2,
               where["mpich"]], cluster)
    assert hosts(out) == ["n1", "n2"]


def test_agent_runs_on_the_node_and_rejects_strangers(cluster):
    done = subprocess.run([cluster.agent, "-x", "n3", "hostname;", "ip", "-o", "-4", "addr",
                           "show", "eth0"], capture_output=True, text=True, timeout=10)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "n3" and "198.18.0.3/24" in done.stdout
    bad = subprocess.run([cluster.agent, "n9", "true"], capture_output=True, text=True,
                         timeout=10)
    assert bad.returncode == 255 and "not a node" in bad.stderr
