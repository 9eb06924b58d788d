"""Paired sweeps on the emulated cluster (the session fixture `cluster`: 4 nodes, 1gbit links),
for real: through mpirun with the cluster's hostfile and agent (--nodes 1,2,4 --ppn 1,2), through
srun --mpi=pmix inside `salloc -N 3` (with --cluster, and as a user types it, without), and
through the script --emit-sbatch writes, run to completion by `sbatch --wait`; and a launch
failing at start-up stopping the sweep. Each checks the table (rows, the nodes/ppn columns, metadata) and
that the journal recorded every launch's ranks on the nodes its mapping names.

Small on purpose (2 algorithms and the baseline, 2 sizes, 2 launches, a tiny time cap): the
module's wall time stays within a few minutes on 2 shared cores.
"""
import collections
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from collsel.core.io import csvfile
from collsel.sources.sweep import journal as sweep_journal
from conftest import outside_tmp, under_tmp

REPO = pathlib.Path(__file__).resolve().parents[2]
# Outside /tmp: every node has a private /tmp, and srun's tasks and the batch script run there.
WORK = outside_tmp(REPO / "build" / "cluster-sweeps")
TIMEOUT_S = 240
SMALL = ["--collective", "bcast", "--algorithms", "linear,binomial:0", "--msg-sizes", "1K,64K",
         "--launches", "2", "--time-cap", "0.002", "--min-reps", "5", "--max-reps", "20",
         "--warmup", "1", "--timeout", "60", "--progress-interval", "1000"]
METHODS = 3                                      # linear, binomial, the baseline


@pytest.fixture(scope="module")
def work():
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    yield WORK
    shutil.rmtree(WORK, ignore_errors=True)


def run(cmd, cluster):
    env = {**os.environ, **cluster.launch_env}
    done = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, env=env,
                          timeout=TIMEOUT_S, cwd=WORK)
    assert done.returncode == 0, f"{cmd}:\n{done.stdout}\n{done.stderr}"
    return done


def sweep(*args):
    return [sys.executable, "-m", "collsel.cli", "sweep", *SMALL, *map(str, args)]


def check_table(out, cluster, pairs, launcher):
    """Rows of every (nodes, ppn) pair, its metadata, and every launch's recorded hosts: ppn
    ranks on each of `nodes` distinct nodes of the cluster (for mpirun: the first `nodes` in
    rank blocks); returns the journal's {launch key: rank hosts}."""
    doc = csvfile.read(str(out))
    rows = [dict(zip(doc.header, f)) for _, f in doc.rows]
    assert doc.header[-2:] == ["nodes", "ppn"]
    assert sorted({(int(r["nodes"]), int(r["ppn"])) for r in rows}) == sorted(pairs)
    assert len(rows) == len(pairs) * 2 * METHODS
    assert all(int(r["comm_size"]) == int(r["nodes"]) * int(r["ppn"]) and float(r["time_us"]) > 0
               and r["launches"] == "2" for r in rows)
    meta = doc.metadata
    assert meta["nodes"] == ",".join(map(str, sorted({n for n, _ in pairs})))
    assert meta["ranks_per_node"] == ",".join(map(str, sorted({q for _, q in pairs})))
    assert meta["links"] == cluster.describe() and "tbf 1gbit" in meta["links"]
    assert meta["launcher"].startswith(f"{launcher} (")
    # One statistic for every shape: the nodes share this machine's clock.
    assert meta["runtime_type"] == "global_max_end_minus_min_start"
    assert meta["bench_options"].endswith("--runtime global")
    jmeta = csvfile.read(sweep_journal.journal_path(str(out))).metadata
    hosts = {k: dict(x.split("=", 1) for x in v.split() if x.startswith("rank_hosts="))
             ["rank_hosts"] for k, v in jmeta.items() if k.startswith("launch.")}
    assert sorted(hosts) == sorted(f"launch.{n}x{q}.{k}" for n, q in pairs for k in (1, 2))
    for key, text in hosts.items():
        nodes, ppn = map(int, key.split(".")[1].split("x"))
        ranks = text.split(",")
        per_node = collections.Counter(ranks)
        assert set(per_node) <= set(cluster.node_names), text
        assert len(per_node) == nodes and set(per_node.values()) == {ppn}, text
        if launcher == "hostfile":
            assert ranks == [h for h in cluster.node_names[:nodes] for _ in range(ppn)], text
    return meta, hosts


def test_hostfile_sweep_nodes_x_ppn_and_its_octree(cluster, work):
    out = work / "hostfile.csv"
    run(sweep("--cluster", "--nodes", "1,2,4", "--ppn", "1,2", "--out", out), cluster)
    pairs = [(1, 2), (2, 1), (2, 2), (4, 1), (4, 2)]
    meta, _ = check_table(out, cluster, pairs, "hostfile")
    assert "P=8 (4 nodes x 2): --host n1:2,n2:2,n3:2,n4:2 -np 8 --map-by ppr:2:node" \
        in meta["mapping"]
    run([sys.executable, "-m", "collsel.cli", "build", out, "--collective", "bcast", "--z", "ppn",
         "--out", work / "octree"], cluster)
    assert '"ppn"' in (work / "octree" / "tree.json").read_text()


def test_srun_sweep_inside_salloc(cluster, work):
    out = work / "srun.csv"
    run(["salloc", "-N", 3, "--ntasks-per-node", 2, "-p", cluster.partition, "--time", 5,
         *sweep("--cluster", "--launcher", "srun", "--nodes", "1,3", "--ppn", "1,2",
                "--out", out)], cluster)
    meta, _ = check_table(out, cluster, [(1, 2), (3, 1), (3, 2)], "srun")
    assert "--mpi=pmix" in meta["mapping"]


@pytest.mark.skipif(under_tmp(sys.executable) or under_tmp(csvfile.__file__),
                    reason="the batch script runs this python and collsel on the nodes, whose "
                    "/tmp is private: the sweep refuses it (tests/cli/test_sweep_cluster.py checks "
                    "the refusal); run from a checkout outside /tmp")
def test_sbatch_script_runs_the_sweep_to_completion(cluster, work):
    out, script = work / "sbatch.csv", work / "sweep.sbatch"
    run(sweep("--cluster", "--nodes", "2", "--ppn", "1,2", "--out", out,
              "--emit-sbatch", script, "--sbatch-time", 5), cluster)
    done = run(["sbatch", "--wait", script], cluster)
    job = done.stdout.split()[-1]
    log = work / f"collsel-sweep-{job}.log"
    assert log.is_file(), done.stdout
    check_table(out, cluster, [(2, 1), (2, 2)], "srun")
    assert "--resume" in csvfile.read(str(out)).metadata["command"]


def test_srun_sweep_as_a_user_types_it(cluster, work):
    """Inside salloc, with the cluster's env file sourced and no --cluster: srun takes its MPI
    plugin from the cluster's MpiDefault (pmix), so the sweep runs (issue 33; before, every
    launch aborted in MPI_Init and the sweep said to --resume)."""
    out = work / "as-typed.csv"
    done = run(["salloc", "-N", 3, "--ntasks-per-node", 2, "--time", 5,
                *sweep("--launcher", "srun", "--nodes", "1,3", "--ppn", "1,2", "--out", out)],
               cluster)
    assert "note: this allocation is on the emulated cluster" in done.stderr
    doc = csvfile.read(str(out))
    rows = [dict(zip(doc.header, f)) for _, f in doc.rows]
    assert sorted({(int(r["nodes"]), int(r["ppn"])) for r in rows}) == [(1, 2), (3, 1), (3, 2)]
    assert len(rows) == 3 * 2 * METHODS and all(float(r["time_us"]) > 0 for r in rows)
    assert "--mpi=pmix" in doc.metadata["mapping"]
    assert "--srun-mpi pmix" in doc.metadata["options"]


def test_a_launch_failing_at_startup_stops_the_sweep_after_one_launch(cluster, work):
    """srun --mpi=none starts every Open MPI rank alone: it aborts before MPI_Init completes,
    and so would every launch; the sweep stops after the first with srun's own lines."""
    out = work / "no-plugin.csv"
    done = subprocess.run(list(map(str, [
        "salloc", "-N", 3, "--ntasks-per-node", 2, "--time", 5,
        *sweep("--launcher", "srun", "--nodes", "1,3", "--ppn", "1,2", "--out", out,
               "--srun-mpi", "none")])), capture_output=True, text=True, timeout=TIMEOUT_S,
        cwd=WORK, env={**os.environ, **cluster.launch_env})
    assert done.returncode == 1, done.stderr
    assert "Local abort before MPI_INIT completed" in done.stderr
    assert "hint: check srun's MPI plugin: --srun-mpi PLUGIN" in done.stderr
    assert any(line.startswith("collsel: error: the first launch failed at start-up")
               for line in done.stderr.splitlines())
    assert "instead of running the 5 other launches" in done.stderr
    assert not out.exists()
