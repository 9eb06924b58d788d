"""Open MPI 4.1.4 built with the generated dec_fixed of all 14 collectives (`make ompi-patched`:
trees of bench-data/tune-vm at depth 4), against `collsel query` and Debian's unpatched build.

One launch per P (2, 3, 4, 8) runs dec_fixed_all.c: every collective at every message size of its
tree's m axis (the measured sizes), each call on a communicator of its own, under
collsel_coll_probe.c (LD_PRELOAD: the coll/base function each communicator ran) with
COLLSEL_TRACE set (the generated function's decision and m, per rank and call). Per call:
- the traced m is the call's m (the quantity 4.1.4's fixed decision computes) and the traced
  decision (algorithm, segsize, faninout) is `collsel query`'s on the spliced tree, on every
  rank; where the tree picks a two_proc algorithm at P != 2 (a P it was not measured at), the
  function defers instead (alg=0);
- the function that ran is the decision's coll/base function, and where the tree defers it is
  the one Debian's Open MPI 4.1.4 runs for the same call (one launch per P of the same program
  under its own mpirun);
- every rank's result is right.
Without the splice there is no trace and the test fails.
"""
import json
import pathlib
import re
import subprocess
import sys
from collections import defaultdict

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "forcing"))
from test_forcing import FUNCTIONS  # noqa: E402  (coll/tuned id -> coll/base function)
from test_ompi_patched import build, query  # noqa: E402,F401  (build: the fixture)

PATCHED = REPO / "build" / "ompi-patched"
PREFIX = PATCHED / "install"
HERE = pathlib.Path(__file__).resolve().parent
PROBE = REPO / "generator" / "collsel" / "sources" / "measure" / "collsel_coll_probe.c"
COLLECTIVES = sorted(FUNCTIONS)
COMM_SIZES = (2, 3, 4, 8)
TWO_PROCS = {"allgather": 6, "allgatherv": 5, "alltoall": 5, "barrier": 5}
TRACE = re.compile(r"^collsel-trace (\w+) rank=(\d+) comm_size=(\d+) msg_size=(\d+) alg=(-?\d+) "
                   r"segsize=(-?\d+) faninout=(-?\d+)$")
DONE = re.compile(r"^done rank=(\d+) calls=(\d+) failures=(\d+)$")
RUN = ["--allow-run-as-root", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1",
       "--mca", "coll_tuned_use_dynamic_rules", "0"]


def tree(collective):
    return PATCHED / "trees" / collective / "tree.json"


def sizes(collective):
    """The measured message sizes: the values of the tree's m axis."""
    return [int(v) for v in json.loads(tree(collective).read_text())["axes"][1]["values"]]


def calls():
    """[(collective, m)] in the program's order (communicator i is calls()[i])."""
    return [(c, m) for c in COLLECTIVES for m in sizes(c)]


@pytest.fixture(scope="module")
def patched_env(build):
    """test_ompi_patched's environment of the patched build, holding all 14 functions."""
    spliced = (PATCHED / "src/ompi/mca/coll/tuned/coll_tuned_decision_fixed.c").read_text()
    for c in COLLECTIVES:
        generated = (PATCHED / f"ompi_{c}_intra_dec_fixed.c").read_text().rstrip("\n")
        assert generated in spliced, f"the build does not hold the current {c} function"
    return build


def compile_pair(mpicc, directory, env=None):
    """(probe library, program) compiled with `mpicc` into `directory`."""
    directory.mkdir()
    lib, exe = directory / "coll_probe.so", directory / "dec_fixed_all"
    for cmd in ([str(mpicc), "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror",
                 str(PROBE), "-o", str(lib), "-ldl"],
                [str(mpicc), "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror",
                 str(HERE / "dec_fixed_all.c"), "-o", str(exe)]):
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
    return lib, exe


def launch(mpirun, lib, exe, p, directory, mca=(), env=None):
    """(stderr, {call index: coll/base function}) of one launch; every rank's results right and
    every rank's communicator i ran the same outermost function."""
    directory.mkdir()
    args = [f"{c}:{','.join(str(m) for m in sizes(c))}" for c in COLLECTIVES]
    cmd = ["timeout", "300", str(mpirun), *RUN, *mca, "-x", f"LD_PRELOAD={lib}",
           "-x", f"COLL_PROBE_DIR={directory}", "-np", str(p), str(exe), *args]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=330)
    assert r.returncode == 0, f"P={p}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    done = sorted(DONE.match(x).groups() for x in r.stdout.splitlines() if DONE.match(x))
    assert done == [(str(k), str(len(calls())), "0") for k in range(p)], r.stdout
    ran = defaultdict(set)
    files = list(directory.glob("probe.*"))
    assert len(files) == p, files
    for path in files:
        for line in path.read_text().splitlines():
            comm, function, nested, _, _ = line.split()
            if int(comm) >= 0 and nested == "0":
                ran[int(comm)].add(function.removeprefix("ompi_coll_base_"))
    for index, (c, m) in enumerate(calls()):
        assert len(ran[index]) == 1, (p, c, m, ran[index])
    return r.stderr, {index: ran[index].pop() for index in range(len(calls()))}


def expected_decision(collective, p, decided):
    alg, seg, fan = decided
    if alg == TWO_PROCS.get(collective) and p != 2:
        return (0, seg, fan)
    return decided


def traced_decisions(stderr, p, order):
    """({rank: [decision of call i]}, [(collective, m, decision)] of the nested calls).

    Each rank's trace lines in order: the next line naming the next call's collective and m is
    that call's; any other is a call a base algorithm made through the communicator's module
    (allgather linear: gather + bcast; allreduce nonoverlapping: reduce + bcast; ...), which
    the generated function decides too."""
    lines = defaultdict(list)
    for line in stderr.splitlines():
        t = TRACE.match(line)
        if t:
            assert int(t.group(3)) == p, line
            lines[int(t.group(2))].append((t.group(1), int(t.group(4)),
                                           tuple(int(x) for x in t.groups()[4:])))
    assert sorted(lines) == list(range(p)), sorted(lines)
    outer, nested = {}, []
    for rank, traced in lines.items():
        mine = []
        for c, m, decision in traced:
            if len(mine) < len(order) and (c, m) == order[len(mine)]:
                mine.append(decision)
            else:
                nested.append((c, m, decision))
        assert len(mine) == len(order), (p, rank, order[len(mine)], "not traced")
        outer[rank] = mine
    return outer, nested


def test_every_collective_decides_as_query_and_defers_to_debians_decision(patched_env,
                                                                          tmp_path):
    patched_lib, patched_exe = compile_pair(PREFIX / "bin" / "mpicc", tmp_path / "patched",
                                            env=patched_env)
    debian_lib, debian_exe = compile_pair("mpicc", tmp_path / "debian")
    want = {c: query(c, [(p, m) for p in COMM_SIZES for m in sizes(c)]) for c in COLLECTIVES}
    order = calls()
    totals, functions = defaultdict(int), set()
    for p in COMM_SIZES:
        stderr, patched = launch(PREFIX / "bin" / "mpirun", patched_lib, patched_exe, p,
                                 tmp_path / f"patched-{p}", ("-x", "COLLSEL_TRACE=1"),
                                 env=patched_env)
        _, debian = launch("mpirun", debian_lib, debian_exe, p, tmp_path / f"debian-{p}")
        traced, nested = traced_decisions(stderr, p, order)
        deferred = []
        for index, (c, m) in enumerate(order):
            decision = expected_decision(c, p, want[c][(p, m)])
            assert {traced[rank][index] for rank in range(p)} == {decision}, \
                (p, c, m, [traced[rank][index] for rank in range(p)], want[c][(p, m)])
            alg = decision[0]
            ran = FUNCTIONS[c][alg].removeprefix("ompi_coll_base_") if alg else debian[index]
            assert patched[index] == ran, (p, c, m, alg, patched[index], debian[index])
            totals["calls"] += 1
            if alg == 0:
                deferred.append(c)
                totals["deferred"] += 1
            functions.add(patched[index])
        for c in sorted({c for c, _, _ in nested}):
            points = sorted({(p, m) for n, m, _ in nested if n == c})
            decided = query(c, points)
            for n, m, decision in nested:
                if n == c:
                    assert decision == expected_decision(c, p, decided[(p, m)]), (p, c, m)
        totals["nested"] += len(nested)
        print(f"P={p}: {len(order)} calls, {len(deferred)} deferred to Open MPI's own "
              f"({len(set(deferred))} collectives), traced = query, functions = query's / "
              f"Debian's where deferred, results right; {len(nested)} nested calls (rank, call) "
              f"traced = query")
    print(f"{totals['calls']} (P, collective, m) calls, {totals['deferred']} deferred, "
          f"{len(functions)} distinct coll/base functions ran, {totals['nested']} nested "
          f"decisions = query")
    assert totals["deferred"] >= 20 and len(functions) >= 30, dict(totals)
