"""Multi-node sweeps without a cluster: `collsel sweep --nodes LIST --ppn LIST` (and --cluster,
--launcher srun, --emit-sbatch) with stand-ins for mpirun, srun and the benchmark.

The stand-in mpirun/srun run the program once, as rank 0, telling it (FAKE_RANK_HOSTS) the host
of every rank as the real launcher would place them from its arguments (`--host h:c,...`, or
`--nodes N --ntasks-per-node C` over FAKE_SRUN_NODES); FAKE_PLACEMENT=one-host puts every rank
on the first host instead, as a launcher ignoring the mapping would. The stand-in benchmark
prints that list as the real one prints MPI_Get_processor_name of every rank
(`#@rank_hosts=`), then behaves as tests/helpers.py's fake benchmark. Every subprocess has a
timeout.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import collsel as collsel_package
from collsel.core.io import csvfile
from collsel.sources.measure import launchers, placement
from collsel.sources.measure.placement import Expected
from collsel.sources.sweep import journal as sweep_journal, plan, shapes

from helpers import write_fake_bench

WAIT_S = 120
SIZES = "1,4"
HOSTS = ("a", "b", "c")

FAKE_LAUNCHER = r"""#!/bin/sh
# Stand-in mpirun / srun (see the module docstring). Logs each call to $FAKE_LAUNCH_LOG.
[ -n "$FAKE_LAUNCH_LOG" ] && echo "$*" >> "$FAKE_LAUNCH_LOG"
if [ -n "$FAKE_REQUIRE_ENV" ] && [ -z "$(printenv "$FAKE_REQUIRE_ENV")" ]; then
  echo "fake launcher: $FAKE_REQUIRE_ENV not set" >&2; exit 3
fi
np=1; hosts=""; nodes=""; per=""
while [ $# -gt 0 ]; do
  case "$1" in
    -np|-n|--ntasks) np=$2; shift 2;;
    --host) hosts=$2; shift 2;;
    --nodes) nodes=$2; shift 2;;
    --ntasks-per-node) per=$2; shift 2;;
    --mca) shift 3;;
    --hostfile|--map-by|--bind-to) shift 2;;
    -*) shift;;
    *) break;;
  esac
done
if [ -n "$nodes" ]; then
  hosts=$(echo $FAKE_SRUN_NODES | tr ' ' '\n' | head -n "$nodes" | sed "s/\$/:$per/" | paste -sd, -)
fi
[ -z "$hosts" ] && hosts="$(hostname):$np"
list=$(echo "$hosts" | tr , '\n' | awk -F: -v wrong="$FAKE_PLACEMENT" '
  NR == 1 { first = $1 }
  { for (i = 0; i < $2; i++) { h = (wrong == "one-host") ? first : $1; printf "%s%s", sep, h; sep = "," } }')
FAKE_RANK_HOSTS=$list OMPI_COMM_WORLD_RANK=0 exec "$@"
"""

HOSTS_BENCH = r"""#!/bin/sh
# Stand-in collsel_bench reporting every rank's host ($FAKE_RANK_HOSTS) like the real one.
if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] && [ -n "$FAKE_RANK_HOSTS" ]; then
  echo "#@rank_hosts=$FAKE_RANK_HOSTS"
fi
exec "$(dirname "$0")/fake_bench.sh" "$@"
"""


FAKE_SCONTROL = r"""#!/bin/sh
# Stand-in scontrol: `show hostnames LIST`, and `show config` naming $FAKE_MPI_DEFAULT.
if [ "$2" = config ]; then
  echo "Configuration data as of 2026-11-25T20:00:00"
  [ -n "$FAKE_MPI_DEFAULT" ] && echo "MpiDefault              = $FAKE_MPI_DEFAULT"
  exit 0
fi
echo "$3" | tr , '\n'
"""


def script(path, text):
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture
def tools(tmp_path):
    """Stand-in launcher, benchmark, a 3-host hostfile and a fake `scontrol` on PATH."""
    write_fake_bench(tmp_path / "fake_bench.sh")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script(bin_dir / "scontrol", FAKE_SCONTROL)
    hostfile = tmp_path / "hostfile"
    hostfile.write_text("".join(f"{h} slots=2\n" for h in HOSTS))
    return {"launcher": script(tmp_path / "fake_launcher.sh", FAKE_LAUNCHER),
            "bench": script(tmp_path / "hosts_bench.sh", HOSTS_BENCH),
            "hostfile": hostfile, "log": tmp_path / "launches.log",
            "env": {"PATH": f"{bin_dir}:{os.environ['PATH']}",
                    "FAKE_LAUNCH_LOG": str(tmp_path / "launches.log")}}


def collsel(args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "collsel.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=WAIT_S, cwd=cwd,
                          env={**os.environ, **(env or {})})


def hostfile_sweep(tools, out, *extra):
    return ["sweep", "--collective", "bcast", "--out", out, "--bench", tools["bench"],
            "--launcher", "hostfile", "--hostfile", tools["hostfile"], "--mpirun",
            tools["launcher"], "--algorithms", "linear,binomial:0", "--msg-sizes", SIZES,
            "--launches", "2", "--timeout", "60", "--progress-interval", "1000", *extra]


def table(path):
    doc = csvfile.read(str(path))
    return doc.metadata, [dict(zip(doc.header, f)) for _, f in doc.rows], doc.header


def launch_marks(out):
    meta, _, _ = table(sweep_journal.journal_path(str(out)))
    return {k: dict(x.split("=", 1) for x in v.split() if "=" in x and "[" not in x)
            for k, v in meta.items() if k.startswith("launch.")}


def block_hosts(hosts, nodes, ppn):
    return [h for h in hosts[:nodes] for _ in range(ppn)]


# --- shapes and the placement check, alone ---------------------------------------------------

def test_shapes_are_every_pair_with_two_ranks_or_more():
    got = shapes.explicit("1,2,4", "1-2")
    assert [(s.p, s.nodes, s.ppn) for s in got] == [(2, 1, 2), (2, 2, 1), (4, 2, 2), (4, 4, 1),
                                                    (8, 4, 2)]
    assert got[1].mark == "2x1" and got[1].columns() == {"nodes": 2, "ppn": 1}
    assert shapes.Shape(4).columns() == {} and shapes.Shape(4).mark == "4"
    # Plain shapes keep the seeds of sweeps before shapes existed; 2x2 and 4x1 differ.
    assert shapes.Shape(4).seed_key(3) == (4, 3)
    assert got[2].seed_key(3) != got[3].seed_key(3)


@pytest.mark.parametrize("nodes,ppn,message", [
    ("1", None, "--nodes and --ppn go together"),
    ("1", "1", "no pair gives P = nodes x ppn >= 2"),
    ("0,2", "1", "--nodes: communicator size 0 out of range"),
    ("2", "x", "--ppn: 'x' is not a communicator size or a range A-B (accepted: 4096, 4K"),
])
def test_bad_shape_lists(nodes, ppn, message):
    with pytest.raises(Exception) as e:
        shapes.explicit(nodes, ppn)
    assert message in str(e.value)


@pytest.mark.parametrize("hosts,expected,why", [
    (["n1", "n1", "n2", "n2"], Expected(2, 2, ("n1", "n2")), None),
    (["N1.lan", "n1", "n2", "n2"], Expected(2, 2, ("n1", "n2")), None),     # short, case-folded
    (["n1", "n1", "n1", "n2"], Expected(2, 2, ("n1", "n2")), "n1:3 n2:1 ranks, not 2 per node"),
    (["n1", "n1", "n1", "n1"], Expected(2, 2, ("n1", "n2")), "ranks on 1 host, not 2"),
    (["n1", "n3"], Expected(2, 1, ("n1", "n2")), "ranks on n3, not one of n1,n2"),
    (["n1", "n1"], Expected(2, 1), "ranks on 1 host, not 2"),
    (["n1"], Expected(1, 2), "1 ranks reported their host, the launch has 2"),
    (["vm", "vm", "vm"], Expected(1, 3), None),
    (["vm", "other", "vm"], Expected(1, 3), "ranks on 2 hosts, not 1"),
])
def test_placement_problems(hosts, expected, why):
    assert placement.problem(hosts, expected.nodes * expected.ppn or len(hosts), expected) == why


def test_placement_check_requires_the_hosts_only_for_an_explicit_mapping():
    assert placement.check({}, 2, Expected(1, 2), "P=2", required=False) == []
    with pytest.raises(placement.PlacementError, match="no '#@rank_hosts=' header line"):
        placement.check({}, 2, Expected(1, 2), "P=2", required=True)
    with pytest.raises(placement.PlacementError) as e:
        placement.check({"rank_hosts": "a,a"}, 2, Expected(2, 1, ("a", "b"), "1 per node on a,b"),
                        "P=2 (2 nodes x 1) launch 1", required=True)
    assert str(e.value).startswith("P=2 (2 nodes x 1) launch 1: ranks ran on a:2, not as the "
                                   "mapping says (1 per node on a,b): ranks on 1 host, not 2")


# --- command lines ---------------------------------------------------------------------------

def test_dry_run_places_nodes_x_ppn_through_the_hostfile(tmp_path, tools):
    r = collsel(hostfile_sweep(tools, tmp_path / "b.csv", "--nodes", "1,2,3", "--ppn", "1,2",
                               "--dry-run"), tools["env"])
    assert r.returncode == 0, r.stderr
    cmds = [ln for ln in r.stdout.splitlines() if not ln.startswith("#")]
    assert len(cmds) == 5 * 2                     # 5 shapes (1x1 has P = 1) x 2 launches
    for nodes, ppn in ((1, 2), (2, 1), (2, 2), (3, 1), (3, 2)):
        hosts = ",".join(f"{h}:{ppn}" for h in HOSTS[:nodes])
        want = f"--host {hosts} -np {nodes * ppn} --map-by ppr:{ppn}:node "
        assert sum(want in c for c in cmds) == 2, want
    assert not any("--hostfile" in c for c in cmds)
    # One node and several in one table: every launch times the slowest rank's local clock.
    assert all(c.endswith("--warmup 2 --runtime local") for c in cmds)
    # The seeds of 2x2 and 4x1-like pairs (same P) differ: every launch has its own.
    seeds = [c.split("--seed ")[1].split()[0] for c in cmds]
    assert len(set(seeds)) == len(seeds)
    assert r.stdout.splitlines()[-2].endswith("(2 launches per shape)")


def test_plain_p_stop_at_the_hostfiles_slots(tmp_path, tools):
    """Every host line gives slots=2 (6 slots): the default P stop at 6, as mpirun starts no
    more ranks; a --comm-sizes beyond them is one line, exit 2, nothing written."""
    r = collsel(hostfile_sweep(tools, tmp_path / "b.csv", "--dry-run"), tools["env"])
    assert r.returncode == 0, r.stderr
    counts = {int(c.split(" -np ")[1].split()[0]) for c in r.stdout.splitlines()
              if not c.startswith("#")}
    assert counts == {p for p in plan.DEFAULT_COMM_SIZES if p <= 2 * len(HOSTS)}
    r = collsel(hostfile_sweep(tools, tmp_path / "b.csv", "--comm-sizes", "2,8,12"),
                tools["env"])
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert (f"--comm-sizes 8,12: beyond the 6 slots of --hostfile {tools['hostfile']}, which "
            "mpirun will not exceed: give P up to 6") in r.stderr
    assert not (tmp_path / "b.csv").exists()


def test_srun_places_nodes_x_ppn_in_the_allocation(tmp_path, tools):
    env = {**tools["env"], "SLURM_JOB_ID": "7", "SLURM_JOB_NUM_NODES": "3"}
    args = hostfile_sweep(tools, tmp_path / "b.csv", "--nodes", "2,3", "--ppn", "2", "--dry-run")
    args[args.index("hostfile")] = "srun"
    del args[args.index("--hostfile"):args.index("--hostfile") + 2]
    r = collsel(args, env)
    assert r.returncode == 0, r.stderr
    cmds = [ln for ln in r.stdout.splitlines() if not ln.startswith("#")]
    # No MpiDefault: srun --mpi=pmix, without which Open MPI's ranks abort in MPI_Init.
    assert sum(" --nodes 2 --ntasks-per-node 2 --ntasks 4 --mpi=pmix --cpu-bind=cores " in c
               for c in cmds) == 2
    assert sum(" --nodes 3 --ntasks-per-node 2 --ntasks 6 " in c for c in cmds) == 2
    # The cluster's MpiDefault when it names a plugin (from its slurm.conf, else from
    # scontrol: a configless login node); --srun-mpi over both.
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=x\nmpidefault=pmi2  # as sites write it\n")
    for default, given, want in (("pmi2", None, "pmi2"), ("none", None, "pmix"),
                                 ("pmi2", "pmix_v3", "pmix_v3")):
        assert launchers.srun_mpi(given, {**env, "FAKE_MPI_DEFAULT": default,
                                          "SLURM_CONF": str(tmp_path / "no")}) == want
    assert launchers.srun_mpi(None, {**env, "SLURM_CONF": str(conf)}) == "pmi2"
    r = collsel(args + ["--srun-mpi", "pmix;rm"], env)
    assert r.returncode == 2 and "--srun-mpi 'pmix;rm': not a plugin name" in r.stderr
    # More nodes than the allocation has: refused before anything runs.
    args[args.index("2,3")] = "2,4"
    r = collsel(args, env)
    assert r.returncode == 2 and "--nodes 4: the allocation has 3 nodes" in r.stderr


@pytest.mark.parametrize("extra,message", [
    (["--nodes", "1,2", "--ppn", "1", "--comm-sizes", "2"],
     "--comm-sizes cannot be given with --nodes/--ppn"),
    (["--nodes", "1,2"], "--nodes and --ppn go together"),
    (["--nodes", "4", "--ppn", "1"], "--nodes 4: the hostfile"),
    (["--nodes", "2", "--ppn", "1", "--mode", "per-method"], "--nodes/--ppn needs --mode paired"),
    (["--nodes", "2", "--ppn", "1", "--emit-sbatch", "s.sbatch", "--sbatch-nodes", "2"],
     "--sbatch-nodes cannot be given with --nodes/--ppn"),
])
def test_bad_multi_node_options(tmp_path, tools, extra, message):
    r = collsel(hostfile_sweep(tools, tmp_path / "b.csv", *extra), tools["env"], cwd=tmp_path)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "b.csv").exists()


def test_local_launcher_is_one_node(tmp_path, tools):
    r = collsel(["sweep", "--collective", "bcast", "--out", tmp_path / "b.csv", "--bench",
                 tools["bench"], "--nodes", "1,2", "--ppn", "2", "--dry-run"], tools["env"])
    assert r.returncode == 2
    assert "--nodes 2: the local launcher runs on this machine only" in r.stderr


# --- sweeps through the stand-in launcher ------------------------------------------------------

@pytest.mark.slow
def test_nodes_x_ppn_sweep_table_journal_and_octree(tmp_path, tools):
    out = tmp_path / "b.csv"
    r = collsel(hostfile_sweep(tools, out, "--nodes", "1,2", "--ppn", "1,2"), tools["env"])
    assert r.returncode == 0, r.stderr
    meta, rows, header = table(out)
    assert header[-2:] == ["nodes", "ppn"]
    pairs = {(1, 2), (2, 1), (2, 2)}
    assert {(int(r["nodes"]), int(r["ppn"])) for r in rows} == pairs
    assert all(int(r["comm_size"]) == int(r["nodes"]) * int(r["ppn"]) for r in rows)
    assert len(rows) == len(pairs) * 2 * 3           # sizes x (2 methods + baseline)
    # Two shapes of P = 2 are separate points, not duplicates.
    assert len({(r["comm_size"], r["nodes"], r["msg_size"], r["algorithm"]) for r in rows}) \
        == len(rows)
    assert meta["nodes"] == "1,2" and meta["ranks_per_node"] == "1,2"
    assert meta["launcher"].startswith("hostfile (")
    assert "P=4 (2 nodes x 2): --host a:2,b:2 -np 4 --map-by ppr:2:node" in meta["mapping"]
    assert "links" not in meta                    # off the emulated cluster
    assert "--nodes 1,2 --ppn 1,2" in meta["options"] and "--comm-sizes" not in meta["options"]
    # The journal: nodes/ppn on every row, each launch's hosts in its mark, as the mapping says.
    jmeta, jrows, jheader = table(sweep_journal.journal_path(str(out)))
    assert jheader[-2:] == ["nodes", "ppn"] and len(jrows) == len(rows) * 2
    marks = launch_marks(out)
    assert sorted(marks) == sorted(f"launch.{n}x{q}.{k}" for n, q in pairs for k in (1, 2))
    for (n, q) in pairs:
        for k in (1, 2):
            assert marks[f"launch.{n}x{q}.{k}"]["rank_hosts"] == ",".join(
                block_hosts(HOSTS, n, q))
    # ppn is a numeric third axis: build gives an octree.
    built = collsel(["build", out, "--collective", "bcast", "--z", "ppn", "--out",
                     tmp_path / "tree"])
    assert built.returncode == 0, built.stderr
    doc = json.loads((tmp_path / "tree" / "tree.json").read_text())
    assert len(doc["axes"]) == 3 and doc["axes"][2]["values"] == [1, 2]


def test_misplaced_ranks_stop_the_sweep(tmp_path, tools):
    out = tmp_path / "b.csv"
    env = {**tools["env"], "FAKE_PLACEMENT": "one-host"}
    r = collsel(hostfile_sweep(tools, out, "--nodes", "2", "--ppn", "1"), env)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert lines[-1] == ("collsel: error: P=2 (2 nodes x 1) launch 1: ranks ran on a:2, not as "
                         "the mapping says (1 per node on a,b): ranks on 1 host, not 2; the "
                         "launcher placed them otherwise (check the hostfile, the allocation, "
                         "--launcher-args)")
    # Nothing of the misplaced launch is recorded.
    _, jrows, _ = table(sweep_journal.journal_path(str(out)))
    assert jrows == [] and not launch_marks(out) and table(out)[1] == []


def test_an_explicit_mapping_needs_the_benchmarks_hosts(tmp_path, tools):
    args = hostfile_sweep(tools, tmp_path / "b.csv", "--nodes", "2", "--ppn", "1")
    args[args.index("--bench") + 1] = str(tmp_path / "fake_bench.sh")   # reports no hosts
    r = collsel(args, tools["env"])
    assert r.returncode == 1 and "no '#@rank_hosts=' header line" in r.stderr


@pytest.mark.slow
def test_resume_keeps_shapes_apart_and_only_adds_new_ones(tmp_path, tools):
    out = tmp_path / "b.csv"
    r = collsel(hostfile_sweep(tools, out, "--nodes", "2", "--ppn", "1"), tools["env"])
    assert r.returncode == 0, r.stderr
    calls = tools["log"].read_text().count("\n")
    assert calls == 2
    # Growing --ppn adds 1x2 (P = 2 like 2x1) and 2x2; 2x1 is not measured again.
    r = collsel(hostfile_sweep(tools, out, "--nodes", "1,2", "--ppn", "1,2", "--resume"),
                tools["env"])
    assert r.returncode == 0, r.stderr
    new = tools["log"].read_text().splitlines()[calls:]
    assert len(new) == 2 * 2 and not any("--host a:1,b:1 " in c for c in new)
    _, rows, _ = table(out)
    assert sorted({(r["nodes"], r["ppn"]) for r in rows}) == [("1", "2"), ("2", "1"),
                                                               ("2", "2")]
    # Dropping a recorded value, or continuing as a --comm-sizes sweep, is refused.
    r = collsel(hostfile_sweep(tools, out, "--nodes", "1", "--ppn", "1,2", "--resume"),
                tools["env"])
    assert r.returncode == 2 and "--nodes leaves out recorded values 2" in r.stderr
    r = collsel(hostfile_sweep(tools, out, "--comm-sizes", "2,4", "--resume"), tools["env"])
    assert r.returncode == 2 and "was written by a --nodes/--ppn sweep" in r.stderr


needs_mpirun = pytest.mark.skipif(shutil.which("mpirun") is None, reason="no mpirun")


@needs_mpirun
@pytest.mark.slow
def test_local_ranks_must_share_one_host(tmp_path, tools):
    """Under the real local mpirun: the check is that every rank reports one host."""
    args = ["sweep", "--collective", "bcast", "--out", tmp_path / "b.csv", "--bench",
            tools["bench"], "--comm-sizes", "2", "--algorithms", "linear", "--msg-sizes", "1",
            "--launches", "2", "--timeout", "60"]
    r = collsel(args, {"FAKE_RANK_HOSTS": "vm,vm"})
    assert r.returncode == 0, r.stderr
    assert launch_marks(tmp_path / "b.csv")["launch.2.1"]["rank_hosts"] == "vm,vm"
    r = collsel(args + ["--force"], {"FAKE_RANK_HOSTS": "vm,elsewhere"})
    assert r.returncode == 1
    assert "P=2 launch 1: ranks ran on vm:1,elsewhere:1, not as the mapping says (all 2 ranks " \
           "on this host): ranks on 2 hosts, not 1" in r.stderr


# --- the emulated cluster's options, with a stand-in cluster.json ------------------------------

def fake_cluster(state_dir, hostfile):
    """A cluster.json as `collsel cluster up` writes it (cluster/state.py), pointing at
    the stand-in hostfile; nothing runs."""
    state_dir.mkdir(exist_ok=True)
    nodes = [{"name": h, "netns": f"collsel-{h}", "address": f"198.18.0.{i + 1}",
              "rate": "1gbit", "cpu_share": 1.0, "cpus": 2} for i, h in enumerate(HOSTS)]
    env = {"OMPI_MCA_plm_rsh_agent": str(state_dir / "agent"),
           "OMPI_MCA_oob_tcp_if_include": "198.18.0.0/24",
           "OMPI_MCA_btl_tcp_if_include": "198.18.0.0/24", "OMPI_MCA_btl": "self,vader,tcp",
           "SLURM_CONF": str(state_dir / "slurm.conf")}
    (state_dir / "cluster.json").write_text(json.dumps({
        "version": 1, "subnet": "198.18.0.0/24",
        "bridge": {"name": "collsel-br", "address": "198.18.0.254"}, "nodes": nodes,
        "link": {"qdisc": "tbf", "burst": "256kb", "latency": "50ms"},
        "hostfile": str(hostfile), "agent": env["OMPI_MCA_plm_rsh_agent"],
        "slurm_conf": env["SLURM_CONF"], "partition": "collsel", "launch_env": env,
        "mpich_launch_args": ["-launcher", "ssh", "-launcher-exec", env["OMPI_MCA_plm_rsh_agent"],
                              "-iface", "collsel-br"]}))
    return state_dir


def cluster_sweep(tools, out, state_dir, *extra):
    return ["sweep", "--collective", "bcast", "--out", out, "--bench", tools["bench"],
            "--cluster", state_dir, "--mpirun", tools["launcher"], "--algorithms",
            "linear,binomial:0", "--msg-sizes", SIZES, "--launches", "2", "--timeout", "60",
            "--progress-interval", "1000", *extra]


@pytest.mark.slow
def test_cluster_sweep_uses_its_hostfile_environment_and_records_the_links(tmp_path, tools):
    state = fake_cluster(tmp_path / "state", tools["hostfile"])
    out = tmp_path / "b.csv"
    env = {**tools["env"], "FAKE_REQUIRE_ENV": "OMPI_MCA_plm_rsh_agent"}
    r = collsel(cluster_sweep(tools, out, state, "--nodes", "3", "--ppn", "1,2"), env)
    assert r.returncode == 0, r.stderr
    meta, rows, _ = table(out)
    assert meta["links"] == ("emulated 3 nodes (2 shared cores), tbf 1gbit every node each "
                             "way, no propagation delay, cpu unlimited")
    assert meta["launcher"].startswith("hostfile (") and \
        "OMPI_MCA_plm_rsh_agent=" in meta["launcher"] and \
        "OMPI_MCA_mpi_yield_when_idle=1" in meta["launcher"]
    assert f"--cluster {state}" in meta["options"]
    assert meta["bench_options"].endswith("--runtime global")     # the nodes share one clock
    assert {(r["nodes"], r["ppn"]) for r in rows} == {("3", "1"), ("3", "2")}
    assert launch_marks(out)["launch.3x2.1"]["rank_hosts"] == "a,a,b,b,c,c"
    # Without the launch environment the stand-in refuses: the variables did reach it.
    r = collsel(hostfile_sweep(tools, tmp_path / "c.csv", "--nodes", "3", "--ppn", "1"), env)
    assert r.returncode == 1 and "OMPI_MCA_plm_rsh_agent not set" in r.stderr
    # --cluster brings its hostfile; --launcher local makes no sense on it.
    r = collsel(cluster_sweep(tools, tmp_path / "d.csv", state, "--nodes", "2", "--ppn", "1",
                              "--hostfile", tools["hostfile"]), env)
    assert r.returncode == 2 and "--cluster brings its own hostfile" in r.stderr
    r = collsel(cluster_sweep(tools, tmp_path / "d.csv", state, "--launcher", "local"), env)
    assert r.returncode == 2 and "not local" in r.stderr
    r = collsel(cluster_sweep(tools, tmp_path / "d.csv", tmp_path / "nothing"), env)
    assert r.returncode == 2 and "no emulated cluster is up at" in r.stderr


@pytest.fixture
def outside(tmp_path, tools):
    """A directory outside /tmp (the emulated nodes have their own /tmp) holding copies of the
    stand-in benchmarks; removed afterwards."""
    work = pathlib.Path("/var/tmp") / f"collsel-test-sweep-cluster-{os.getpid()}"
    work.mkdir()
    try:
        for name in ("hosts_bench.sh", "fake_bench.sh"):
            shutil.copy(tmp_path / name, work / name)
        yield work
    finally:
        shutil.rmtree(work)


def test_cluster_srun_adds_pmix(tmp_path, tools, outside):
    state = fake_cluster(tmp_path / "state", tools["hostfile"])
    env = {**tools["env"], "SLURM_JOB_ID": "7", "SLURM_JOB_NUM_NODES": "3",
           "FAKE_SRUN_NODES": "a b c", "SLURM_JOB_NODELIST": "a,b,c"}
    out = tmp_path / "b.csv"
    args = cluster_sweep(tools, out, state, "--launcher", "srun", "--nodes", "2", "--ppn", "2")
    r = collsel(args, env)
    assert r.returncode == 2 and "the benchmark (" in r.stderr and "is under /tmp" in r.stderr
    args[args.index("--bench") + 1] = outside / "hosts_bench.sh"
    r = collsel(args, env)
    assert r.returncode == 0, r.stderr
    calls = tools["log"].read_text().splitlines()
    assert len(calls) == 2 and all(c.startswith("--nodes 2 --ntasks-per-node 2 --ntasks 4 "
                                                "--mpi=pmix --cpu-bind=none ") for c in calls)
    assert launch_marks(out)["launch.2x2.1"]["rank_hosts"] == "a,a,b,b"
    # Hosts outside the allocation are caught.
    args[args.index("--out") + 1] = tmp_path / "c.csv"
    r = collsel(args, {**env, "SLURM_JOB_NODELIST": "x"})
    assert r.returncode == 1 and "ranks on a,b, not one of x" in r.stderr


def under_tmp(path):
    """Whether `path`, as written or where its links lead, is under /tmp."""
    return any(p == "/tmp" or p.startswith("/tmp/")
               for p in (os.path.abspath(path), os.path.realpath(path)))


def test_emit_sbatch_for_the_cluster(tmp_path, tools, outside):
    state = fake_cluster(tmp_path / "state", tools["hostfile"])
    args = cluster_sweep(tools, outside / "b.csv", state, "--nodes", "1,3", "--ppn", "2",
                         "--emit-sbatch", outside / "s.sbatch")
    args[args.index("--bench") + 1] = outside / "hosts_bench.sh"
    # The script runs on a node, whose /tmp is its own: written from /tmp it is refused.
    r = collsel(args, tools["env"], cwd=tmp_path)
    assert r.returncode == 2 and f"the current directory ({tmp_path}) is under /tmp" in r.stderr
    # So are this Python and this checkout's collsel when they lie under /tmp (a clone there):
    # the script is made with a copy of the package outside /tmp, wherever the checkout is.
    package = pathlib.Path(collsel_package.__file__).parent
    shutil.copytree(package, outside / "pkg" / "collsel",
                    ignore=shutil.ignore_patterns("__pycache__"))
    refusal = ("this Python" if under_tmp(sys.executable) else
               "the collsel package" if under_tmp(package) else None)
    r = collsel(args, {**tools["env"], "PYTHONPATH": str(package.parent)}, cwd=outside)
    assert r.returncode == (2 if refusal else 0), r.stderr
    assert refusal is None or f"{refusal} (" in r.stderr and "is under /tmp" in r.stderr
    r = collsel(args, {**tools["env"], "PYTHONPATH": str(outside / "pkg")}, cwd=outside)
    if refusal == "this Python":
        assert r.returncode == 2 and "this Python (" in r.stderr     # no node could run it
        return
    assert r.returncode == 0, r.stderr
    text = (outside / "s.sbatch").read_text()
    for line in ("#SBATCH --nodes=3", "#SBATCH --ntasks-per-node=2",
                 "#SBATCH --partition=collsel", f"#SBATCH --chdir={outside}", f"cd {outside}"):
        assert line in text.splitlines(), line
    inner = text.splitlines()[-1]
    assert inner.startswith(f"{sys.executable} -m collsel.cli sweep ")
    assert f"--cluster {state}" in inner and "--launcher srun" in inner
    assert "--nodes 1,3 --ppn 2" in inner and inner.endswith(" --resume")
    assert " --srun-mpi pmix " in inner         # the plugin the script's sweep starts ranks with
    # Asking for more nodes than the cluster has is refused.
    args[args.index("1,3")] = "1,4"
    r = collsel(args, {**tools["env"], "PYTHONPATH": str(outside / "pkg")}, cwd=outside)
    assert r.returncode == 2 and "--nodes 4: the emulated cluster has 3 nodes" in r.stderr


def test_mpich_through_hydra_on_the_cluster(tmp_path, tools):
    state = fake_cluster(tmp_path / "state", tools["hostfile"])
    args = cluster_sweep(tools, tmp_path / "b.csv", state, "--mpi", "mpich", "--nodes", "1,2",
                         "--ppn", "2", "--dry-run")
    args[args.index("linear,binomial:0")] = "binomial,smp"
    r = collsel(args, tools["env"])
    assert r.returncode == 0, r.stderr
    cmds = [ln for ln in r.stdout.splitlines() if not ln.startswith("#")]
    assert len(cmds) == 2 * 2
    agent = state / "agent"
    want = (f" {tools['launcher']} -launcher ssh -launcher-exec {agent} -iface collsel-br "
            "-hosts a:2,b:2 -n 4 -ppn 2 ")
    assert sum(want in c for c in cmds) == 2
    assert all(c.startswith("MPIR_CVAR_COLLECTIVE_FALLBACK=error OMPI_MCA_btl=") and
               "--methods auto:0:0,binomial:0:0,smp:0:0 " in c for c in cmds)
    args[args.index("--dry-run")] = "--launcher"
    r = collsel(args + ["srun"], tools["env"])
    assert r.returncode == 2 and "--mpi mpich supports --launcher local or hostfile" in r.stderr
