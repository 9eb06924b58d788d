"""libcollsel for all 14 collectives (issue 29 item 4): an unmodified C program
(libcollsel_all.c) calling every collective under LD_PRELOAD=libcollsel.so.

  - Open MPI 4.1.4, P = 2, 3, 4, trees of bench-data/tune-vm/<coll>.csv (--max-depth 3): every
    rank's traced decision of every call equals `collsel query` at (P, m), m on both sides of
    every rule boundary; the coll/base function that ran (tests/forcing/coll_probe.c, LD_PRELOAD)
    is the decided algorithm's; every result is correct. Calls the library must not force are
    passed and say why: allgatherv (4.1 registers its algorithm variable constant: MPI_T cannot
    force it), a two_proc method the tree names at P != 2 (core/fallbacks.py: the call would
    fail). Without the library the same check fails (nothing is traced, the defaults run).
  - Variants (P = 3, 4): roots P-1, MPI_INT, MPI_IN_PLACE, a non-commutative op, unequal
    counts, an inter-communicator: results correct, passes only for the documented reasons.
  - 10,000 communicators, each used by one collective and freed: no state or shadow left.
  - MPICH 4.0: bcast and reduce (trees of the paired MPICH sweeps) and six more collectives
    given reduce's MPICH tree decide as `collsel query` (MPIR_CVAR_<COLL>_INTRA_ALGORITHM by
    force_mpich.c's names); the rest pass ("no-tree"); results correct; MPI_Bcast_c /
    MPI_Allreduce_c (MPI 4) decide as MPI_Bcast / MPI_Allreduce.
"""
import re
import zlib
from collections import defaultdict

import pytest

from collsel.core import fallbacks, treefile
from test_libcollsel import (BIN, DYNAMIC_RULES, HERE, REPO, counts_of, expected_rules, launch,
                             library, query, run, trees)

COLLECTIVES = ("bcast", "reduce", "allreduce", "allgather", "allgatherv", "alltoall",
               "alltoallv", "barrier", "exscan", "gather", "reduce_scatter",
               "reduce_scatter_block", "scan", "scatter")
NO_M = ("alltoallv", "barrier")          # trees on P alone: the library decides at m = 0
CONSTANT = {"openmpi": {"allgatherv"}}   # the algorithm variable MPI_T cannot write
MAX_M = 256 << 10
LINE = re.compile(r"^collsel-trace (\w+) rank=(-?\d+) comm_size=(-?\d+) msg_size=(\d+) "
                  r"(?:ppn=\S+ alg=(\d+) segsize=(\d+) faninout=(\d+)|pass=(\S+))$")
CHECK = re.compile(r"^check (\w+) m=(\d+) (\S+) (ok|FAIL)$", re.M)
# coll/tuned id -> coll/base function, as tests/forcing/test_forcing.py (the probe's names)
import sys  # noqa: E402
sys.path.insert(0, str(REPO / "tests" / "forcing"))
from test_forcing import FUNCTIONS  # noqa: E402


def traced(stderr):
    """[(collective, rank, P, m, (alg, seg, fan) or None, pass reason or None)]"""
    out = []
    for line in stderr.splitlines():
        t = LINE.match(line)
        if t:
            c, rank, p, m = t.group(1), int(t.group(2)), int(t.group(3)), int(t.group(4))
            choice = tuple(map(int, t.group(5, 6, 7))) if t.group(5) else None
            out.append((c, rank, p, m, choice, t.group(8)))
    return out


def checks_ok(stdout, expected):
    found = CHECK.findall(stdout)
    assert len(found) == expected and all(r == "ok" for *_, r in found), \
        [f for f in found if f[3] != "ok"][:5] or (len(found), expected)
    return found


# MPICH 4.0.2 aborts in its "noncommutative" reduce-scatter algorithms at P not a power of two
# (force_mpich.c); Open MPI's refusals are core/fallbacks.py's entries that fail the call
MPICH_POF2_ONLY = {"reduce_scatter": 2, "reduce_scatter_block": 1}


def refused(family, collective, p, m, choice):
    """The pass reason the library must give for a decision of `choice`, or None."""
    if collective in CONSTANT.get(family, ()):
        return "constant"
    if family == "mpich":
        pof2_only = MPICH_POF2_ONLY.get(collective) == choice[0] and p & (p - 1)
        return "unusable" if pof2_only else None
    entry = fallbacks.fallback(collective, choice[0], p, m, choice[1])
    return "unusable" if entry and entry.runs is None else None


def boundary_sizes(tree, p, collective):
    """m on both sides of every rule boundary of the tree at P and inside each rule, at most
    MAX_M bytes, at most 8; m = 0 for barrier."""
    if collective == "barrier":
        return [0]
    rules = expected_rules(tree, p)
    out = {1}
    for m, _ in rules[1:]:
        out |= {m - 1, m}
    for (a, _), (b, _) in zip(rules, rules[1:] + [(2 * rules[-1][0] + 64, None)]):
        out.add((a + b) // 2)
    sizes = sorted(m for m in out if 0 < m <= MAX_M)
    return sizes[:8]


@pytest.fixture(scope="module")
def all_trees():
    """{collective: {json, blob, cuts}} and "dir": the 14 Open MPI trees (tune-vm, depth 3)."""
    directory = BIN / "trees-all" / "openmpi"
    directory.mkdir(parents=True, exist_ok=True)
    out = {"dir": directory}
    for c in COLLECTIVES:
        work = BIN / "build-all" / c
        run(["collsel", "build", REPO / "bench-data" / "tune-vm" / f"{c}.csv", "--collective", c,
             "--max-depth", 3, "--out", work])
        run(["collsel", "emit", "--target", "blob", work / "tree.json", "--out",
             directory / f"{c}.bin"])
        out[c] = {"json": work / "tree.json",
                  "cuts": list(treefile.load(work / "tree.json").axes[1].cuts)}
    return out


@pytest.fixture(scope="module")
def program():
    BIN.mkdir(parents=True, exist_ok=True)
    out = {}
    for family in ("openmpi", "mpich"):
        out[family] = BIN / f"libcollsel_all-{family}"
        run([f"mpicc.{family}", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I",
             REPO / "include", HERE / "libcollsel_all.c", "-o", out[family], "-ldl"])
    return out


@pytest.fixture(scope="module")
def probe():
    """tests/forcing/coll_probe.c: which coll/base function each call ran, and its bytes."""
    out = BIN / "coll_probe.so"
    include = run(["mpicc.openmpi", "--showme:compile"]).stdout.split()
    run(["cc", "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror", *include, "-o", out,
         REPO / "tests" / "forcing" / "coll_probe.c", "-ldl"])
    return out


def probed(directory):
    """{(function, bytes): calls} of the calls no other probed function made, over ranks."""
    out = defaultdict(int)
    for path in directory.glob("probe.*"):
        for line in path.read_text().splitlines():
            _, function, nested, nbytes, count = line.split()
            if nested == "0":
                out[(function.removeprefix("ompi_coll_base_"), int(nbytes))] += int(count)
    return out


def decided_as_query(family, trace, tree_of, seen_points):
    """Every traced call of a collective that has a tree: a decision equal to `collsel query`
    at (P, m), or the pass the library owes it. Returns {reason: count}."""
    passes = defaultdict(int)
    by_tree = defaultdict(list)
    for c, rank, p, m, choice, why in trace:
        if why in ("inter", "unequal-counts", "noncommutative", "no-tree", "no-mpich-names"):
            passes[why] += 1
            continue
        by_tree[c].append((rank, p, m, choice, why))
    for c, calls in by_tree.items():
        want = query(tree_of[c]["json"], [(p, m) for _, p, m, _, _ in calls])
        for (rank, p, m, choice, why), w in zip(calls, want):
            owed = refused(family, c, p, m, w)
            assert (choice, why) == ((None, owed) if owed else (w, None)), (c, rank, p, m, w)
            if why:
                passes[why] += 1
            seen_points.add((c, p, m, w))
    return passes


@pytest.mark.parametrize("p", (2, 3, 4))
def test_open_mpi_every_collective_decides_as_query(p, library, all_trees, program, probe,
                                                     tmp_path):
    sizes = {c: boundary_sizes(all_trees[c], p, c) for c in COLLECTIVES}
    argv = [program["openmpi"], "sizes", *(f"{c}:{','.join(map(str, ms))}"
                                           for c, ms in sizes.items())]
    env = {"COLLSEL_TREES": all_trees["dir"], "COLLSEL_TRACE": "1",
           "COLL_PROBE_DIR": tmp_path}
    done = launch("openmpi", p, argv, env, (library["openmpi"], probe), DYNAMIC_RULES)
    calls = sum(len(ms) for ms in sizes.values())
    checks_ok(done.stdout, p * calls)
    trace = traced(done.stderr)
    assert len(trace) == p * calls, (len(trace), p * calls)
    seen = set()
    passes = decided_as_query("openmpi", trace, all_trees, seen)
    decided = {c for c, rank, pp, m, choice, why in trace if choice}
    assert decided == set(COLLECTIVES) - CONSTANT["openmpi"], decided   # interposed, each
    # the coll/base function that ran is the decided algorithm's, on every rank
    ran = probed(tmp_path)
    forced = 0
    for c, pp, m, (alg, _, _) in seen:
        if alg == 0 or refused("openmpi", c, pp, m, (alg, 0, 0)):
            continue
        entry = fallbacks.fallback(c, alg, pp, m)
        function = FUNCTIONS[c][entry.runs if entry else alg]
        program_m = [x for x in sizes[c] if x == m] or sizes[c]   # alltoallv: decided at 0
        assert any(ran.get((function, x), 0) >= p for x in program_m), (c, pp, m, function,
                                                                         program_m)
        forced += 1
    assert forced >= 10, forced
    print(f"openmpi P={p}: {calls} calls x {p} ranks decided as collsel query "
          f"({len(seen)} distinct points, {forced} forced and seen by the probe), "
          f"passed {dict(passes)}, results correct")


def test_open_mpi_without_the_library_traces_nothing(all_trees, program, probe, tmp_path):
    """The check above fails when the interposition is off: no trace, the defaults run."""
    c, p = "allreduce", 4
    sizes = boundary_sizes(all_trees[c], p, c)
    done = launch("openmpi", p, [program["openmpi"], "sizes", f"{c}:{','.join(map(str, sizes))}"],
                  {"COLLSEL_TREES": all_trees["dir"], "COLLSEL_TRACE": "1",
                   "COLL_PROBE_DIR": tmp_path}, (probe,), DYNAMIC_RULES)
    checks_ok(done.stdout, p * len(sizes))
    assert traced(done.stderr) == []
    want = query(all_trees[c]["json"], [(p, m) for m in sizes])
    ran = probed(tmp_path)
    differ = [m for m, w in zip(sizes, want)
              if w[0] and ran.get((FUNCTIONS[c][w[0]], m), 0) < p]
    assert differ, "the defaults ran the tree's algorithms everywhere: the check cannot fail"
    print(f"without libcollsel: no decision traced; the tree's algorithm did not run at m={differ}")


@pytest.mark.parametrize("p", (3, 4))
def test_open_mpi_variants_pass_or_decide_correctly(p, library, all_trees, program):
    done = launch("openmpi", p, [program["openmpi"], "cases", 5],
                  {"COLLSEL_TREES": all_trees["dir"], "COLLSEL_TRACE": "1"},
                  (library["openmpi"],), DYNAMIC_RULES)
    found = checks_ok(done.stdout, p * 66)
    passes = decided_as_query("openmpi", traced(done.stderr), all_trees, set())
    assert passes["inter"] == 2 * p and passes["unequal-counts"] == p, passes
    assert set(passes) <= {"inter", "unequal-counts", "noncommutative", "constant", "unusable"}
    variants = sorted({v for _, _, v, _ in found})
    print(f"openmpi P={p}: {len(found)} checks ok over {variants}; passed {dict(passes)}")


def test_open_mpi_10000_communicators_leave_nothing(library, all_trees, program):
    p, comms = 2, 10000
    done = launch("openmpi", p, [program["openmpi"], "comms", comms],
                  {"COLLSEL_TREES": all_trees["dir"]}, (library["openmpi"],), DYNAMIC_RULES)
    checks_ok(done.stdout, p)
    counts = counts_of(done.stdout)
    before, after = counts["before"], counts["after"]
    # a method's shadow is made at its first use: each communicator's one call makes at most one
    made = int(after["shadows_made"]) - int(before["shadows_made"])
    assert 0 < made <= comms, made
    for key in ("shadows_live", "states_live", "state_bytes"):
        assert after[key] == before[key], counts
    print(f"openmpi: {comms} communicators (the 14 collectives in turn) made, used, freed; "
          f"{made} shadow communicators made and freed; live after: {after}")


# collectives given the paired MPICH reduce tree under their own name (its ids 0-4 are MPICH
# algorithms of each: force_mpich.c)
RENAMED = ("allreduce", "allgather", "allgatherv", "alltoall", "reduce_scatter",
           "reduce_scatter_block")


@pytest.fixture(scope="module")
def mpich_trees(trees):
    """The paired MPICH bcast and reduce trees, and reduce's blob renamed to each of RENAMED
    (`collsel emit` refuses an MPICH tree of a collective collsel has no MPICH sweep of)."""
    directory = BIN / "trees-all" / "mpich"
    directory.mkdir(parents=True, exist_ok=True)
    for c in ("bcast", "reduce"):
        (directory / f"{c}.bin").write_bytes(trees["mpich"][c]["blob"].read_bytes())
    for c in RENAMED:
        data = bytearray(trees["mpich"]["reduce"]["blob"].read_bytes())
        data[16:32] = c.replace("reduce_scatter_block", "reduce_scat_blk").encode().ljust(16, b"\0")
        data[-4:] = zlib.crc32(bytes(data[:-4])).to_bytes(4, "little")
        (directory / f"{c}.bin").write_bytes(bytes(data))
    return {"dir": directory, **{c: trees["mpich"][c] for c in ("bcast", "reduce")},
            **{c: trees["mpich"]["reduce"] for c in RENAMED}}


@pytest.mark.parametrize("p", (2, 3, 4))
def test_mpich_collectives_decide_as_query(p, library, mpich_trees, program):
    served = ("bcast", "reduce", *RENAMED)
    sizes = {c: boundary_sizes(mpich_trees[c], p, c) if c in served else [1, 4096]
             for c in COLLECTIVES}
    sizes["barrier"] = [0]
    argv = [program["mpich"], "sizes", *(f"{c}:{','.join(map(str, ms))}"
                                         for c, ms in sizes.items())]
    env = {"COLLSEL_TREES": mpich_trees["dir"], "COLLSEL_TRACE": "1"}
    done = launch("mpich", p, argv, env, (library["mpich"],))
    calls = sum(len(ms) for ms in sizes.values())
    checks_ok(done.stdout, p * calls)
    trace = traced(done.stderr)
    assert len(trace) == p * calls
    passes = decided_as_query("mpich", trace, mpich_trees, set())
    assert {c for c, *_, choice, why in trace if choice} == set(served)
    passes.pop("unusable", None)
    passes.pop("unequal-counts", None)   # reduce_scatter noncommutative, m mod P != 0
    assert passes == {"no-tree": p * sum(len(sizes[c]) for c in COLLECTIVES if c not in served)}
    cases = launch("mpich", p, [program["mpich"], "cases", 5], env, (library["mpich"],))
    found = checks_ok(cases.stdout, p * 68)
    variants = decided_as_query("mpich", traced(cases.stderr), mpich_trees, set())
    assert sum(1 for v in found if v[2] == "large-count") == 2 * p
    print(f"mpich P={p}: {calls} calls x {p} ranks: {', '.join(served)} decided as collsel query "
          f"(the others: {dict(passes)}); {len(found)} variant checks ok (MPI_Bcast_c, "
          f"MPI_Allreduce_c among them), passed {dict(variants)}")
