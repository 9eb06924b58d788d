"""The ppn axis under the real MPIs: MPICH with `collsel emit --target mpich-json` of ppn trees,
and the runtime blob (runtime/examples/mpi_ppn_query.c) under Open MPI, each at several
placements (nodes x ppn) on the emulated cluster; every decision equals `collsel query --z ppn`.

  - MPICH 4.0.2 reads the generated file (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE; the
    settings of test_mpich_json_in_mpich.py route MPI_Bcast / MPI_Reduce through it). What MPICH ran is
    seen by mpich_algorithm_trace.c, linked into coll_check.c against libmpich.a with
    -Wl,--wrap of every MPIR_{Bcast,Reduce} algorithm (the shared library hides them); it also
    prints MPICH's node count of MPI_COMM_WORLD, which must be the placement's. Every (P, m,
    ppn) tried runs the algorithm `collsel query` names there, on every rank, with correct
    results (coll_check). comm_avg_ppn is MPICH's P / nodes, so placements are even.
  - The blob example finds ppn itself (MPI_Comm_split_type SHARED, node leaders counted) and
    prints collsel_tree_decide3's answer per message size.
The same checks run first on this machine alone: MPICH's MPIR_CVAR_NUM_CLIQUES splits its ranks
into emulated nodes (no cluster needed), Open MPI sees one node.

TABLES are hand-made test input whose decisions change with ppn (tests/data/ppn-mpich-*.csv,
MPICH algorithms); point them at a measured nodes x ppn sweep of MPICH to prove those trees.
"""
import os
import pathlib
import subprocess

import pytest

from coll_trace import TRACE, UNIT
from collsel.core.trees import treefile
from collsel.sinks.emit import mpich_json

REPO = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
# The measurements the trees come from (algorithm_family mpich, a ppn column).
TABLES = {"bcast": REPO / "tests" / "data" / "ppn-mpich-bcast.csv",
          "reduce": REPO / "tests" / "data" / "ppn-mpich-reduce.csv"}
BASE = REPO / "build" / "mpich" / "generic.json"
# Outside /tmp (nodes started by slurmd have a private /tmp); every node sees the build tree.
BIN = REPO / "build" / "cluster-mpich-ppn"
# (nodes, ppn): P 2 at ppn 1 and 2, P 4 at ppn 1 and 2.
PLACEMENTS = ((2, 1), (1, 2), (4, 1), (2, 2))
MPICH_ENV = {"MPIR_CVAR_DEVICE_COLLECTIVES": "none", "MPIR_CVAR_BCAST_INTRA_ALGORITHM": "auto",
             "MPIR_CVAR_REDUCE_INTRA_ALGORITHM": "auto"}
OMPI_FLAGS = ["--allow-run-as-root", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1"]
LIBMPICH = pathlib.Path("/usr/lib/x86_64-linux-gnu/libmpich.a")
WRAPPED = ("MPIR_Bcast_intra_binomial", "MPIR_Bcast_intra_scatter_recursive_doubling_allgather",
           "MPIR_Bcast_intra_scatter_ring_allgather", "MPIR_Bcast_intra_smp",
           "MPIR_Bcast_allcomm_nb", "MPIR_Reduce_intra_binomial",
           "MPIR_Reduce_intra_reduce_scatter_gather", "MPIR_Reduce_intra_smp",
           "MPIR_Reduce_allcomm_nb")
TIMEOUT_S = 120


def run(cmd, env=None):
    done = subprocess.run(["timeout", str(TIMEOUT_S), *map(str, cmd)], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=TIMEOUT_S + 30)
    assert done.returncode == 0, f"{cmd}: exit {done.returncode}\n{done.stdout}\n" \
                                 f"{done.stderr[-3000:]}"
    return done


def collsel(*args):
    return run(["collsel", *args])


@pytest.fixture(scope="module")
def trees():
    """Per collective: the loaded ppn tree, its tree.json and blob; "json": the MPICH file of
    both (built --no-defer: a leaf that defers has no algorithm for query to name)."""
    if not BASE.exists():
        pytest.fail(f"{BASE} missing: run `make mpich-base` (make integration does)")
    BIN.mkdir(parents=True, exist_ok=True)
    out = {}
    for c, table in TABLES.items():
        collsel("build", table, "--collective", c, "--z", "ppn", "--no-defer", "--out", BIN / c)
        loaded = treefile.load(BIN / c / "tree.json")
        assert loaded.family == "mpich" and [a.name for a in loaded.axes][2] == "ppn", table
        collsel("emit", "--target", "blob", BIN / c / "tree.json", "--out", BIN / c / "tree.bin")
        out[c] = {"loaded": loaded, "tree": BIN / c / "tree.json", "blob": BIN / c / "tree.bin"}
    out["json"] = BIN / "mpich_selection.json"
    done = collsel("emit", "--target", "mpich-json", *(out[c]["tree"] for c in TABLES),
                   "--mpich-base", BASE, "--out", out["json"])
    assert "comm_avg_ppn<=N" in done.stdout
    return out


@pytest.fixture(scope="module")
def traced():
    """coll_check.c with MPICH's algorithms wrapped (static libmpich: the .so hides them)."""
    BIN.mkdir(parents=True, exist_ok=True)
    exe = BIN / "coll_check_mpich_traced"
    include = [w for w in run(["mpicc.mpich", "-show"]).stdout.split() if w.startswith("-I")]
    run(["gcc", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", *include, "-o", exe,
         HERE / "coll_check.c", HERE / "mpich_algorithm_trace.c",
         "-Wl,--wrap=" + ",--wrap=".join(WRAPPED), LIBMPICH,
         "-lhwloc", "-lucp", "-lucs", "-lpthread", "-lm", "-lrt"])
    return exe


@pytest.fixture(scope="module")
def example():
    """runtime/examples/mpi_ppn_query.c for each MPI."""
    BIN.mkdir(parents=True, exist_ok=True)
    out = {}
    for mpi in ("openmpi", "mpich"):
        out[mpi] = BIN / f"mpi_ppn_query-{mpi}"
        run([f"mpicc.{mpi}", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
             "-I", REPO / "include", REPO / "runtime" / "examples" / "mpi_ppn_query.c",
             REPO / "runtime" / "collsel_tree.c", "-o", out[mpi]])
    return out


def sizes(loaded, collective):
    """Message sizes at every measured value and on both sides of every cut (reduce: whole
    MPI_INTs, coll_check's reduce type, each on its side of the cut)."""
    unit = UNIT[collective]
    m = loaded.axes[1]
    below = {v - v % unit for v in m.values} | {(c - 1) - (c - 1) % unit for c in m.cuts}
    above = {c + (-c) % unit for c in m.cuts}
    return sorted(v for v in below | above if v > 0)


def query(tree, points):
    """`collsel query --z` of (P, m, ppn) points: [(algorithm, segsize, faninout)]."""
    text = "".join(f"{p} {m} {z}\n" for p, m, z in points)
    done = subprocess.run(["collsel", "query", str(tree), "--ids", "--points", "-"], input=text,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [tuple(map(int, line.split())) for line in done.stdout.splitlines()]


def mpich_expected(trees, collective, p, ppn, ms):
    """{m: short MPICH algorithm name} of what the tree names at (P, m, ppn), as MPICH runs it:
    reduce_scatter_gather's leaf falls back to binomial when count < pof2(P)."""
    loaded = trees[collective]["loaded"]
    names = mpich_json.leaf_names(loaded, {}, collective)
    out = {}
    for m, (alg, _, _) in zip(ms, query(trees[collective]["tree"], [(p, m, ppn) for m in ms])):
        name = names[alg]
        if name == mpich_json.REDUCE_SCATTER_GATHER and m // UNIT[collective] < 1 << (
                p.bit_length() - 1):
            name = "MPIR_Reduce_intra_binomial"
        out[m] = name.split("_", 3)[-1]
    return out


def mpich_observed(stderr, collective, p, nodes, ms, hosts):
    """{m: the algorithm every rank ran}, after checking MPICH's node count on every rank and,
    given `hosts` (rank r's host name at r), where the ranks ran."""
    layouts = sorted(line.rsplit(" host=", 1) for line in stderr.splitlines()
                     if line.startswith("collsel-layout"))
    assert [x for x, _ in layouts] == sorted(f"collsel-layout rank={r} size={p} nodes={nodes}"
                                             for r in range(p)), stderr[-3000:]
    if hosts:
        ran = {int(x.split("rank=")[1].split()[0]): host for x, host in layouts}
        assert [ran[r] for r in range(p)] == hosts, ran
    seen = {}
    for line in stderr.splitlines():
        t = TRACE.match(line)
        if t and t.group(1) == collective:
            assert int(t.group(4)) == p, line
            seen.setdefault(int(t.group(5)) * UNIT[collective], []).append(
                (int(t.group(3)), t.group(2)))
    assert sorted(seen) == sorted(ms), (sorted(seen), stderr[-3000:])
    out = {}
    for m, calls in seen.items():
        assert sorted(r for r, _ in calls) == list(range(p)), (m, calls)
        assert len({name for _, name in calls}) == 1, (m, calls)
        out[m] = calls[0][1]
    return out


def check_mpich(trees, traced, launch, nodes, ppn, env=None, hosts=None):
    p = nodes * ppn
    for c in TABLES:
        ms = sizes(trees[c]["loaded"], c)
        done = run([*launch, traced, c, *ms], {**MPICH_ENV, **(env or {}),
                   "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": str(trees["json"])})
        checks = [line for line in done.stdout.splitlines() if line.startswith("check ")]
        assert checks == [f"check {c} m={m} ok" for m in ms], done.stdout
        observed = mpich_observed(done.stderr, c, p, nodes, ms, hosts)
        assert observed == mpich_expected(trees, c, p, ppn, ms), (c, nodes, ppn)
        print(f"MPICH {c} nodes={nodes} ppn={ppn}: {len(ms)} sizes, "
              f"{sorted(set(observed.values()))} as collsel query says")


def check_example(trees, program, launch, nodes, ppn, env=None):
    p = nodes * ppn
    for c in TABLES:
        ms = sizes(trees[c]["loaded"], c)
        lines = run([*launch, program, trees[c]["blob"], *ms], env).stdout.splitlines()
        assert lines[0] == f"layout size={p} nodes={nodes} ppn={ppn}", lines
        want = [f"decide {p} {m} {ppn}: {a} {s} {f}"
                for m, (a, s, f) in zip(ms, query(trees[c]["tree"], [(p, m, ppn) for m in ms]))]
        assert lines[1:] == want


def test_the_trees_decide_differently_at_two_ppn_values(trees):
    """The premise: at some (P, m), ppn 1 and ppn 2 get different algorithms."""
    for c in TABLES:
        ms = sizes(trees[c]["loaded"], c)
        differ = [(p, m) for p in (2, 4) for m, a, b in zip(
            ms, query(trees[c]["tree"], [(p, m, 1) for m in ms]),
            query(trees[c]["tree"], [(p, m, 2) for m in ms])) if a != b]
        assert differ, c


# --- this machine alone: MPICH's emulated nodes (cliques), Open MPI on one node --------------

@pytest.mark.parametrize("nodes,ppn", PLACEMENTS)
def test_mpich_json_local_cliques(trees, traced, nodes, ppn):
    check_mpich(trees, traced, ["mpiexec.mpich", "-n", nodes * ppn], nodes, ppn,
                {"MPIR_CVAR_NUM_CLIQUES": str(nodes), "MPIR_CVAR_CLIQUES_BY_BLOCK": "1"})


def test_blob_example_local(trees, example):
    check_example(trees, example["mpich"], ["mpiexec.mpich", "-n", 4], 2, 2,
                  {"MPIR_CVAR_NUM_CLIQUES": "2", "MPIR_CVAR_CLIQUES_BY_BLOCK": "1"})
    check_example(trees, example["openmpi"], ["mpirun", *OMPI_FLAGS, "-np", 2], 1, 2)


# --- the emulated cluster -----------------------------------------------------------------------

def hosts(cluster, nodes, ppn):
    return ",".join(f"{name}:{ppn}" for name in cluster.node_names[:nodes])


@pytest.mark.parametrize("nodes,ppn", PLACEMENTS)
def test_mpich_json_on_the_cluster(cluster, trees, traced, nodes, ppn):
    launch = ["mpiexec.mpich", *cluster.mpich_launch_args, "-hosts", hosts(cluster, nodes, ppn),
              "-n", nodes * ppn]
    # hydra fills the hosts in order: ranks 0..ppn-1 on n1, the next ppn on n2, ...
    ranks_on = [name for name in cluster.node_names[:nodes] for _ in range(ppn)]
    check_mpich(trees, traced, launch, nodes, ppn, cluster.launch_env, ranks_on)


@pytest.mark.parametrize("nodes,ppn", PLACEMENTS)
def test_blob_example_openmpi_on_the_cluster(cluster, trees, example, nodes, ppn):
    launch = ["mpirun", *OMPI_FLAGS, "--host", hosts(cluster, nodes, ppn), "--map-by",
              f"ppr:{ppn}:node", "-np", nodes * ppn]
    check_example(trees, example["openmpi"], launch, nodes, ppn, cluster.launch_env)
