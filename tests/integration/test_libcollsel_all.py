"""libcollsel for all 14 collectives (issue 29 item 4): an unmodified C program
(libcollsel_all.c) calling every collective under LD_PRELOAD=libcollsel.so.

  - Open MPI 4.1.4, P = 2, 3, 4, trees of bench-data/tune-vm/<coll>.csv (--max-depth 3): every
    rank's traced decision of every call equals `collsel query` at (P, m), m on both sides of
    every rule boundary; the coll/base function that ran (collsel_coll_probe.c, LD_PRELOAD)
    is the decided algorithm's; every result is correct. Calls the library must not force are
    passed and say why: allgatherv (4.1 registers its algorithm variable constant: MPI_T cannot
    force it), a two_proc method the tree names at P != 2 (core/mpi/fallbacks.py: the call would
    fail). Without the library the same check fails (nothing is traced, the defaults run).
  - Variants (P = 3, 4): roots P-1, MPI_INT, MPI_IN_PLACE, a non-commutative op, unequal
    counts, an inter-communicator: results correct, passes only for the documented reasons.
  - 10,000 communicators, each used by one collective and freed: no state or shadow left.
  - MPICH 4.0, P = 2, 3, 4: the exact tree of each of the 14 tables of the MPICH tune
    (bench-data/more-mpis/tune-mpich/<coll>/table.csv): every collective decides as `collsel
    query` on every rank, m on both sides of every rule boundary (MPIR_CVAR_<COLL>_INTRA_
    ALGORITHM by force_mpich.c's names); results correct. The variants (roots, MPI_INT,
    MPI_IN_PLACE, a non-commutative op, unequal counts, MPI_Bcast_c / MPI_Allreduce_c, an
    inter-communicator), call by call: decided as the tree, or passed with the reason owed
    (a non-commutative op where the tree forces a reduction's algorithm: "noncommutative").
    The per-call cost of a 1-byte allreduce at P = 2 against PMPI_Allreduce is printed.
"""
import re
import shutil
from collections import defaultdict

import numpy as np
import pytest

from collsel.core.mpi import fallbacks
from collsel.core.trees import treefile
from collsel.sources.measure import coll_probe
from test_libcollsel import (BIN, DYNAMIC_RULES, HERE, REPO, counts_of, expected_rules, launch,
                             library, query, run)

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
# (force_mpich.c); Open MPI's refusals are core/mpi/fallbacks.py's entries that fail the call
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


def boundary_sizes(tree, p, collective, max_m=MAX_M, most=8):
    """m on both sides of every rule boundary of the tree at P and inside each rule, at most
    max_m bytes, the `most` smallest (None: all); m = 0 for barrier."""
    if collective == "barrier":
        return [0]
    rules = expected_rules(tree, p)
    out = {1}
    for m, _ in rules[1:]:
        out |= {m - 1, m}
    for (a, _), (b, _) in zip(rules, rules[1:] + [(2 * rules[-1][0] + 64, None)]):
        out.add((a + b) // 2)
    sizes = sorted(m for m in out if 0 < m <= max_m)
    return sizes[:most]


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
    """collsel_coll_probe.c: which coll/base function each call ran, and its bytes."""
    out = BIN / "coll_probe.so"
    # the probe `collsel verify` builds (linked with the MPI: mpi4py's python loads it too)
    shutil.copy(coll_probe.library("mpicc.openmpi"), out)
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


def leaves(tree_json, points):
    """The tree's own leaf at each (P, m), (alg, segsize, faninout), before the refusal rule
    that `collsel query` applies (core.mpi.fallbacks.refused)."""
    tree = treefile.load(tree_json)
    index = tree.decide([np.array([p for p, _ in points], dtype=np.int64),
                         np.array([m for _, m in points], dtype=np.uint64)], refusals=False)
    return [(tree.methods[i].algorithm, tree.methods[i].segsize, tree.methods[i].faninout)
            for i in index.tolist()]


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
        points = [(p, m) for _, p, m, _, _ in calls]
        want = query(tree_of[c]["json"], points)
        for (rank, p, m, choice, why), w, leaf in zip(calls, want, leaves(tree_of[c]["json"],
                                                                            points)):
            # `collsel query` defers where Open MPI refuses the leaf; the library passes there
            owed = refused(family, c, p, m, leaf)
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
        # the outermost call is the forced algorithm's coll/base function even where it falls
        # back (core/mpi/fallbacks.py: the fallback runs inside it, a nested call the probe skips)
        function = FUNCTIONS[c][alg]
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


# ---- MPICH 4.0 -----------------------------------------------------------------------------

MPICH_TUNE = REPO / "bench-data" / "more-mpis" / "tune-mpich"   # collsel tune --mpi mpich, P 2-4
_mpich_built = {}   # the session's one build per collective (test_libcollsel_apps.py shares it)


@pytest.fixture(scope="module")
def mpich_trees(tmp_path_factory):
    """{collective: {json, blob, cuts}} and "dir": the exact tree (no --recommend, no depth
    limit: most recommended trees of a 6-minute tune are one leaf) of each MPICH 4.0 table of
    bench-data/more-mpis/tune-mpich, emitted as blobs into the session's tmp dir."""
    if not _mpich_built:
        base = tmp_path_factory.mktemp("mpich-trees")
        directory = base / "blobs"
        directory.mkdir()
        for c in COLLECTIVES:
            work = base / c
            run(["collsel", "build", MPICH_TUNE / c / "table.csv", "--collective", c,
                 "--out", work])
            run(["collsel", "emit", "--target", "blob", work / "tree.json", "--out",
                 directory / f"{c}.bin"])
            loaded = treefile.load(work / "tree.json")
            assert loaded.family == "mpich", (c, loaded.family)
            _mpich_built[c] = {"json": work / "tree.json", "blob": directory / f"{c}.bin",
                               "cuts": list(loaded.axes[1].cuts)}
        _mpich_built["dir"] = directory
    return _mpich_built


def spread(collective, p, n, variant):
    """The largest count minus the smallest of a v-collective's call in libcollsel_all.c's
    cases: reduce_scatter's total n split as the benchmark does (n / P, one more for the first
    n mod P), "uneven" adds 2 x rank to each count; 0 for the other collectives."""
    if collective not in ("allgatherv", "reduce_scatter"):
        return 0
    base = ([n // p + (d < n % p) for d in range(p)] if collective == "reduce_scatter"
            else [n] * p)
    counts = [b + (2 * d if "uneven" in variant else 0) for d, b in enumerate(base)]
    return max(counts) - min(counts)


def variant_outcomes(stdout, stderr, p, tree_of):
    """The "cases" program under MPICH, call by call: each rank's traced calls of a collective
    in order are its check lines of that collective in order (every rank prints the same
    checks, stdout joined in rank order). Each call's trace must be what libcollsel owes that
    variant at the tree's choice `collsel query` gives at (P, m), in pmpi.c's order: counts
    further apart than the measured ones pass ("unequal-counts"), a pof2-only method at another
    P passes ("unusable"), a non-commutative op passes where the tree forces an MPICH method
    ("noncommutative": MPICH's reduction algorithms are not read for operand order,
    force_mpich.c), reduce_scatter's noncommutative method passes counts one apart
    ("unequal-counts"), and the rest decide as the tree. Returns {outcome: calls}."""
    checks = CHECK.findall(stdout)
    per_rank = len(checks) // p
    variants = defaultdict(list)   # collective -> variants in call order (rank 0's, = every rank's)
    for c, n, variant, _ in checks[:per_rank]:
        if variant != "inter":   # traced with the rank in the group: counted apart
            variants[c].append((int(n), variant))
    calls = defaultdict(list)      # (collective, rank) -> traced calls in order
    outcomes = defaultdict(int)
    for c, rank, pp, m, choice, why in traced(stderr):
        if why == "inter":
            outcomes["pass=inter"] += 1
        else:
            calls[c, rank].append((pp, m, choice, why))
    for (c, rank), made in sorted(calls.items()):
        assert len(made) == len(variants[c]), (c, rank, len(made), variants[c])
        want = query(tree_of[c]["json"], [(pp, m) for pp, m, _, _ in made])
        for (n, variant), (pp, m, choice, why), w in zip(variants[c], made, want):
            owed = ("unequal-counts" if spread(c, pp, n, variant) > (c == "reduce_scatter")
                    else refused("mpich", c, pp, m, w)
                    or ("noncommutative" if "noncommutative" in variant and w[0] else None)
                    or ("unequal-counts" if spread(c, pp, n, variant)
                        and MPICH_POF2_ONLY.get(c) == w[0] else None))
            assert (choice, why) == ((None, owed) if owed else (w, None)), \
                (c, rank, pp, m, variant, w, choice, why)
            outcomes[f"pass={owed}" if owed else "decided"] += 1
    return outcomes


@pytest.mark.parametrize("p", (2, 3, 4))
def test_mpich_collectives_decide_as_query(p, library, mpich_trees, program):
    # every boundary of the MPICH trees (the largest cut: 2 MiB + 1)
    sizes = {c: boundary_sizes(mpich_trees[c], p, c, max_m=4 << 20, most=None)
             for c in COLLECTIVES}
    argv = [program["mpich"], "sizes", *(f"{c}:{','.join(map(str, ms))}"
                                         for c, ms in sizes.items())]
    env = {"COLLSEL_TREES": mpich_trees["dir"], "COLLSEL_TRACE": "1"}
    done = launch("mpich", p, argv, env, (library["mpich"],))
    calls = sum(len(ms) for ms in sizes.values())
    checks_ok(done.stdout, p * calls)
    trace = traced(done.stderr)
    assert len(trace) == p * calls, (len(trace), p * calls)
    seen = set()
    passes = decided_as_query("mpich", trace, mpich_trees, seen)
    # every collective force_mpich.c names is interposed and decides on every rank
    assert {c for c, *_, choice, why in trace if choice} == set(COLLECTIVES)
    # a pof2-only method at another P, or reduce_scatter's noncommutative one at counts m mod P
    # apart: the only passes of plain calls (decided_as_query checked each reason)
    assert set(passes) <= {"unusable", "unequal-counts"}, passes
    forced = sum(1 for *_, w in seen if w[0])
    cases = launch("mpich", p, [program["mpich"], "cases", 5], env, (library["mpich"],))
    found = checks_ok(cases.stdout, p * 68)
    outcomes = variant_outcomes(cases.stdout, cases.stderr, p, mpich_trees)
    assert outcomes["pass=inter"] == 2 * p, outcomes   # allreduce, bcast
    assert sum(1 for v in found if v[2] == "large-count") == 2 * p
    print(f"mpich P={p}: {calls} calls x {p} ranks decided as collsel query, all "
          f"{len(COLLECTIVES)} collectives ({len(seen)} distinct points, {forced} of them a "
          f"forced MPICH algorithm), passed {dict(passes)}, results correct; {len(found)} "
          f"variant checks ok (roots, MPI_INT, MPI_IN_PLACE, non-commutative, uneven, "
          f"MPI_Bcast_c / MPI_Allreduce_c, inter), each call as owed: {dict(outcomes)}")


def test_mpich_allreduce_overhead(library, mpich_trees, tmp_path):
    """Prints (asserts nothing on times) ns per 1-byte MPI_Allreduce at P = 2 through libcollsel
    under MPICH against PMPI_Allreduce in the same launch (libcollsel_overhead.c): with the
    MPICH allreduce tree (at P = 2, 1 byte it forces an algorithm: the variable written before
    the call and reset after), with tests/defer_tree.py's tree (it defers there: the
    interposition alone), and without the library (the same two paths: noise)."""
    import json
    sys.path.insert(0, str(REPO / "tests"))
    import defer_tree   # tests/defer_tree.py
    document = defer_tree.document("allreduce")
    for method in document["methods"][1:]:   # MPICH ids: recursive_doubling in both forced leaves
        method.update(algorithm=3, name="recursive_doubling")
    (tmp_path / "tree.json").write_text(json.dumps(document))
    (tmp_path / "defer").mkdir()
    run(["collsel", "emit", "--target", "blob", tmp_path / "tree.json", "--out",
         tmp_path / "defer" / "allreduce.bin"])
    exe = BIN / "libcollsel_overhead-mpich-allreduce"
    run(["mpicc.mpich", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror",
         HERE / "libcollsel_overhead.c", "-o", exe])
    (choice,) = query(mpich_trees["allreduce"]["json"], [(2, 1)])
    out = []
    for what, trees_dir in ((f"MPICH tune's tree, alg={choice[0]}", mpich_trees["dir"]),
                            ("defer tree", tmp_path / "defer"), ("no library", None)):
        env = {"COLLSEL_TREES": trees_dir} if trees_dir else {}
        done = launch("mpich", 2, [exe, 1, 20000, 9, "allreduce"], env,
                      (library["mpich"],) if trees_dir else ())
        out.append(f"mpich m=1 {what}: {done.stdout.strip()}")
    print("\n".join(out))
