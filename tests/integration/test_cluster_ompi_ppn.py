"""The ppn-aware dec_fixed under real Open MPI 4.1 on the emulated cluster (issue 18 item 4).

`make ompi-patched-ppn` builds octrees over (P, m, ppn) from OMPI_PPN_TABLES (by default the
nodes x ppn sweeps measured on the emulated cluster, bench-data/cluster/) into build/ompi-patched/ppn/trees/, emits their
dec_fixed functions, and splices them into a private mca_coll_tuned.so made from the patched
build's objects (mpi-builds/ompi-patched/component.py: one compile and one link; the patched
Open MPI itself is built once). coll_check.c, compiled with the patched mpicc, runs MPI_Bcast
and MPI_Reduce under the patched mpirun with that component first on mca_base_component_path,
its ranks placed on the cluster's nodes by --host, at ppn 1 and 2 (P = 2 on one node and on two
nodes, P = 4 on two and on four nodes) and on an uneven mapping (2 + 1 ranks: ppn 1).

For every (P, m, ppn) tried:
- each rank computed ppn once for MPI_COMM_WORLD (one collsel-trace-ppn line per rank, however
  many calls), with the number of nodes the mapping spans;
- each rank's traced decision (COLLSEL_TRACE) equals `collsel query TREE --comm-size P
  --msg-size m --z ppn`;
- the coll/base algorithm that really ran (LD_PRELOAD trace, coll_trace.py) is that decision's;
- every result is correct.
The sizes straddle the tree's message-size cuts, and at P = 2 the traced decisions at ppn 1
and ppn 2 must differ somewhere (else ppn would not have been tested).
"""
import json
import os
import pathlib
import re
import subprocess

import pytest

from coll_trace import FUNCTIONS, UNIT
from coll_trace import build as build_trace, run as run_traced

REPO = pathlib.Path(__file__).resolve().parents[2]
PATCHED = REPO / "build" / "ompi-patched"
PREFIX = PATCHED / "install"
PPN = PATCHED / "ppn"
# Outside /tmp: what the nodes run must be visible to them at the same path.
BIN = PPN / "bin"
TRACE = re.compile(r"^collsel-trace (\w+) rank=(\d+) comm_size=(\d+) msg_size=(\d+) ppn=(-?\d+) "
                   r"alg=(-?\d+) segsize=(-?\d+) faninout=(-?\d+)$")
TRACE_PPN = re.compile(r"^collsel-trace-ppn rank=(\d+) comm_size=(\d+) nodes=(\d+) ppn=(\d+)$")
# (ranks per node, in node order): P = sum, nodes = len, ppn = P // nodes
PLACEMENTS = [(2,), (1, 1), (2, 2), (1, 1, 1, 1), (2, 1)]


@pytest.fixture(scope="module")
def patched(cluster):
    component = PPN / "components" / "mca_coll_tuned.so"
    if not component.exists():
        pytest.fail("build/ompi-patched/ppn is not built: run `make ompi-patched-ppn` "
                    "(make integration does)")
    spliced = (PPN / "coll_tuned_decision_fixed.c").read_text()
    for c in ("bcast", "reduce"):
        generated = (PPN / f"ompi_{c}_intra_dec_fixed.c").read_text().rstrip("\n")
        assert generated in spliced, f"the ppn component does not hold the current {c} function"
    env = {**os.environ, **cluster.launch_env, "PATH": f"{PREFIX / 'bin'}:{os.environ['PATH']}",
           "LD_LIBRARY_PATH": str(PREFIX / "lib"), "OPAL_PREFIX": str(PREFIX)}
    BIN.mkdir(parents=True, exist_ok=True)
    lib, exe = build_trace(PREFIX / "bin" / "mpicc", BIN, env=env)
    return env, lib, exe


def tree(collective):
    return PPN / "trees" / collective / "tree.json"


def sizes(collective):
    """One unit below and at every message-size cut of the tree (multiples of the element)."""
    unit = UNIT[collective]
    out = set()
    for cut in json.loads(tree(collective).read_text())["axes"][1]["cuts"]:
        at = -(-cut // unit) * unit
        out |= {at - unit, at} if at - unit > 0 else {at, at + unit}
    return sorted(out)[:24]


def query(collective, points):
    text = "".join(f"{p} {m} {z}\n" for p, m, z in points)
    r = subprocess.run(["collsel", "query", str(tree(collective)), "--ids", "--points", "-"],
                       input=text, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return dict(zip(points, (tuple(map(int, line.split())) for line in r.stdout.splitlines())))


@pytest.mark.parametrize("collective", ["bcast", "reduce"])
def test_traced_decisions_follow_ppn_on_the_cluster(collective, cluster, patched):
    env, lib, exe = patched
    names = cluster.node_names
    ms = sizes(collective)
    mca = ("--prefix", str(PREFIX), "--mca", "coll_tuned_use_dynamic_rules", "0",
           "--mca", "mca_base_component_path",
           f"{PPN / 'components'}:{PREFIX / 'lib' / 'openmpi'}", "-x", "COLLSEL_TRACE=1")
    traced_at, checked = {}, 0
    for placement in PLACEMENTS:
        p, n_nodes = sum(placement), len(placement)
        ppn = p // n_nodes
        hosts = ",".join(f"{names[k]}:{r}" for k, r in enumerate(placement))
        expected = query(collective, [(p, m, ppn) for m in ms])
        ran, stderr = run_traced(PREFIX / "bin" / "mpirun", lib, exe, collective, p, ms, mca,
                                 env=env, hosts=hosts)
        lines = stderr.splitlines()
        # ppn computed once per rank for the one communicator, from the nodes it spans
        once = sorted(TRACE_PPN.match(ln).groups() for ln in lines if TRACE_PPN.match(ln))
        assert once == sorted((str(r), str(p), str(n_nodes), str(ppn)) for r in range(p)), \
            (hosts, once)
        decided = {}
        for ln in lines:
            t = TRACE.match(ln)
            if t and t.group(1) == collective:
                rank, size, m, z = map(int, t.groups()[1:5])
                assert (size, z) == (p, ppn), ln
                decided.setdefault(m, {})[rank] = tuple(map(int, t.groups()[5:]))
        assert sorted(decided) == ms, (hosts, sorted(decided))
        for m in ms:
            assert sorted(decided[m]) == list(range(p)), (hosts, m, decided[m])
            assert set(decided[m].values()) == {expected[(p, m, ppn)]}, \
                (hosts, m, decided[m], expected[(p, m, ppn)])
            alg = expected[(p, m, ppn)][0]
            if alg != 0:     # 0: Open MPI's own decision, whatever it picks
                assert ran[m] == FUNCTIONS[collective][alg], (hosts, m, alg, ran[m])
            checked += 1
        traced_at[(p, ppn)] = {m: decided[m][0] for m in ms}
        print(f"{collective} --host {hosts}: P={p} nodes={n_nodes} ppn={ppn}: "
              + ", ".join(f"{m}:{ran[m]}" for m in ms))
    differ = sum(traced_at[(2, 1)][m] != traced_at[(2, 2)][m] for m in ms)
    assert differ >= 2, traced_at
    print(f"{collective}: {checked} (P, m, ppn) decisions traced equal collsel query on "
          f"{len(PLACEMENTS)} placements; at P=2, ppn 1 and 2 differ on {differ} of {len(ms)} "
          "sizes")
