"""libcollsel (issue 21 items 2 and 3, flat methods): tree decisions inside unmodified MPI
programs through PMPI interposition (include/collsel_pmpi.h, runtime/libcollsel/).

Trees are built from the shipped paired sweeps (bench-data/paired/{bcast,reduce}-{openmpi,mpich}
.csv) at --max-depth 3 and emitted as blobs, one directory per MPI family (COLLSEL_TREES).
  - Unit (no MPI): the rule list libcollsel resolves per communicator equals `collsel query` at
    every message-size cut, for P = 1..1000 and a ppn octree (libcollsel_rules.c, ASan + UBSan);
    COLLSEL_TREES as a directory or a list, and what it refuses; MPICH's algorithm names.
  - Open MPI 4.1 and MPICH 4.0, P = 2, 3, 4, tests/integration/coll_check.c (unmodified) under
    LD_PRELOAD=libcollsel.so with COLLSEL_TRACE=1, sizes on both sides of every rule boundary:
    every rank's traced decision equals `collsel query`, the algorithm that really ran is that
    one (Open MPI: coll_algorithm_trace.c, LD_PRELOAD; MPICH: coll_check.c linked with the
    library's sources against libmpich.a with -Wl,--wrap, mpich_algorithm_trace.c), a defer
    leaf (algorithm 0) runs what the MPI runs without the library, every result is correct.
  - libcollsel_cases.c: the calls libcollsel must pass through are passed through (inter-
    communicator, P = 1, non-commutative op) with correct results over roots, datatypes and ops;
    shadow communicators are freed with the user's (10,000 communicators under Open MPI).
  - A bad blob, COLLSEL_TREES unset, dynamic rules off (Open MPI), an Open MPI tree under MPICH,
    ranks holding different trees, MPI_THREAD_MULTIPLE under MPICH: one line on stderr, every
    call passed through, the program runs correctly.
  - A ppn octree decides at the communicator's ppn (MPICH: emulated nodes by NUM_CLIQUES);
    valgrind finds no error in and no leak from libcollsel; the per-call cost is printed.
Local machine only (P <= 4, --oversubscribe); the emulated cluster is not used.
"""
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import zlib

import pytest

from coll_trace import FUNCTIONS, TRACE as ALG_TRACE, UNIT
from collsel.core.trees import treefile
from collsel.core.mpi.algorithms import MPICH_ALGORITHMS

REPO = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
BIN = REPO / "build" / "libcollsel-test"
FAMILIES = ("openmpi", "mpich")
COLLECTIVES = ("bcast", "reduce")
DEPTH = 3
COMM_SIZES = (2, 3, 4)
TIMEOUT_S = 120
OMPI_FLAGS = ("--allow-run-as-root", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1")
DYNAMIC_RULES = ("--mca", "coll_tuned_use_dynamic_rules", "1")
LIBMPICH = pathlib.Path("/usr/lib/x86_64-linux-gnu/libmpich.a")
MPICH_WRAPPED = ("MPIR_Bcast_intra_binomial",
                 "MPIR_Bcast_intra_scatter_recursive_doubling_allgather",
                 "MPIR_Bcast_intra_scatter_ring_allgather", "MPIR_Bcast_intra_smp",
                 "MPIR_Bcast_allcomm_nb", "MPIR_Reduce_intra_binomial",
                 "MPIR_Reduce_intra_reduce_scatter_gather", "MPIR_Reduce_intra_smp",
                 "MPIR_Reduce_allcomm_nb")
DECISION = re.compile(r"^collsel-trace (bcast|reduce) rank=(\d+) comm_size=(\d+) msg_size=(\d+) "
                      r"ppn=(\S+) alg=(\d+) segsize=(\d+) faninout=(\d+)$")
PASS = re.compile(r"^collsel-trace (bcast|reduce) rank=(-?\d+) comm_size=(-?\d+) "
                  r"msg_size=(\d+) pass=(\S+)$")
RESOLVE = re.compile(r"^collsel-trace resolve (bcast|reduce) rank=(\d+) comm_size=(\d+) "
                     r"ppn=(\S+) rules=(\S+)$")
STARTS = ("MPI_Finalize", "MPI_Init", "MPI_Init_thread")
PASSING = "; passing every collective through"
# MPI_<Coll> of the 14 collectives; MPICH 4.0 (MPI 4) also has MPI_<Coll>_c but for barrier
INTERPOSED = ("MPI_Allgather", "MPI_Allgatherv", "MPI_Allreduce", "MPI_Alltoall", "MPI_Alltoallv",
              "MPI_Barrier", "MPI_Bcast", "MPI_Exscan", "MPI_Gather", "MPI_Reduce",
              "MPI_Reduce_scatter", "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Scatter")


def run(cmd, env=None, check=True):
    """A command under `timeout`, with COLLSEL_* and LD_PRELOAD only as `env` gives them."""
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("COLLSEL_TR") and k != "LD_PRELOAD"}
    done = subprocess.run(["timeout", str(TIMEOUT_S), *map(str, cmd)], capture_output=True,
                          text=True, env={**base, **(env or {})}, timeout=TIMEOUT_S + 30)
    if check:
        assert done.returncode == 0, (f"{cmd}: exit {done.returncode}\n{done.stdout[-2000:]}\n"
                                      f"{done.stderr[-3000:]}")
    return done


def launch(family, np, argv, env=None, preload=(), extra=(), check=True, mpirun=None):
    """One MPI launch (by `mpirun`, default Debian's mpirun.<family>); `env` and LD_PRELOAD
    reach the ranks only (-x, -genv). Each rank's stdout
    and stderr go to files (--output-filename, -outfile/-errfile-pattern), returned joined in
    rank order: forwarded through the launcher, the trace lines of several ranks can be cut and
    interleaved. The launcher's own output shows in the message of a failed launch."""
    env = dict(env or {})
    if preload:
        env["LD_PRELOAD"] = ":".join(map(str, preload))
    output = pathlib.Path(tempfile.mkdtemp(prefix="launch-", dir=BIN))
    if family == "openmpi":
        cmd = [mpirun or "mpirun.openmpi", *OMPI_FLAGS, *extra, "--output-filename",
               output / "rank"]
        for k, v in env.items():
            cmd += ["-x", f"{k}={v}"]
        cmd += ["-np", str(np)]
    else:
        cmd = [mpirun or "mpirun.mpich", *extra, "-outfile-pattern", output / "stdout.%r",
               "-errfile-pattern", output / "stderr.%r"]
        for k, v in env.items():
            cmd += ["-genv", k, str(v)]
        cmd += ["-n", str(np)]
    done = run([*cmd, *argv], check=False)

    def joined(stream):
        # Open MPI 4.1: PREFIX/1/rank.R/stdout; 5.0: PREFIX.prterun-HOST-PID@1.R.out (.err);
        # MPICH: stdout.R
        files = {}
        for f in output.rglob("*"):
            five = re.search(r"@\d+\.(\d+)\.(out|err)$", f.name)
            if five and {"out": "stdout", "err": "stderr"}[five.group(2)] == stream:
                files[int(five.group(1))] = f
            elif not five and f.name.startswith(stream) and f.is_file():
                files[int(re.search(r"(\d+)", f.parent.name if family == "openmpi"
                                    else f.suffix).group(1))] = f
        return "".join(files[r].read_text() for r in sorted(files))

    ranks = subprocess.CompletedProcess(done.args, done.returncode, joined("stdout"),
                                        joined("stderr"))
    shutil.rmtree(output)
    if check:
        assert done.returncode == 0, (f"{done.args}: exit {done.returncode}\n"
                                      f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}\n"
                                      f"{ranks.stderr[-3000:]}")
    return ranks


def query(tree_json, points):
    """collsel query at (P, m) points: a list of (alg, segsize, faninout)."""
    text = "".join(f"{p} {m}\n" for p, m in points)
    done = subprocess.run(["collsel", "query", str(tree_json), "--ids", "--points", "-"],
                          input=text, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [tuple(int(x) for x in line.split()[:3]) for line in done.stdout.splitlines()]


def expected_rules(tree, p, z=None):
    """The tree's message-size rules at P (and z), from `collsel query` at 0 and every cut:
    [(from, (alg, seg, fan)), ...], neighbours merged."""
    points = [(p, m) for m in (0, *tree["cuts"])]
    if z is not None:
        text = "".join(f"{p} {m} {z}\n" for p, m in points)
        done = subprocess.run(["collsel", "query", str(tree["json"]), "--ids", "--points", "-"],
                              input=text, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        answers = [tuple(int(x) for x in line.split()[:3]) for line in done.stdout.splitlines()]
    else:
        answers = query(tree["json"], points)
    rules = []
    for (_, m), answer in zip(points, answers):
        if not rules or rules[-1][1] != answer:
            rules.append((m, answer))
    return rules


def rules_text(rules):
    return ",".join(f"{m}:{a}/{s}/{f}" for m, (a, s, f) in rules)


def straddling_sizes(rules, collective):
    """Message sizes on both sides of every rule boundary and inside each rule (reduce: whole
    MPI_INTs, coll_check's reduce type), capped at 4 MiB."""
    unit = UNIT[collective]
    out = {unit}
    for m, _ in rules[1:]:
        out |= {(m - 1) // unit * unit, -(-m // unit) * unit}
    for (a, _), (b, _) in zip(rules, rules[1:] + [(2 * rules[-1][0] + 64, None)]):
        out.add((a + b) // 2 // unit * unit)
    return sorted(m for m in out if 0 < m <= 4 << 20)


# ---- fixtures ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def library():
    """build/libcollsel/<family>/libcollsel.so, by the Makefile's rule (`make libcollsel`)."""
    run(["make", "-s", "-C", REPO, "libcollsel"])
    out = {f: REPO / "build" / "libcollsel" / f / "libcollsel.so" for f in FAMILIES}
    for f, path in out.items():
        exported = run(["nm", "-D", "--defined-only", path]).stdout.split()
        mine = sorted(s for s in exported if s.startswith(("MPI_", "collsel_")))
        large = [s + "_c" for s in INTERPOSED if s != "MPI_Barrier"] if f == "mpich" else []
        # Open MPI's Fortran bindings (fortran.c): MPI_BCAST, mpi_bcast, mpi_bcast_, ...
        upper = [s.upper() for s in (*INTERPOSED, *STARTS)] if f == "openmpi" else []
        assert mine == sorted([*INTERPOSED, *large, *STARTS, *upper, "collsel_pmpi_active",
                               "collsel_pmpi_counts_get", "collsel_pmpi_own"]), (f, mine)
        fortran = sorted(s for s in exported if s.startswith("mpi_"))
        spellings = [s.lower() + end for s in (*INTERPOSED, *STARTS) for end in ("", "_", "__")]
        assert fortran == sorted([*(spellings if f == "openmpi" else []),
                                  *[s.lower() + "_f08_" for s in (*INTERPOSED, *STARTS)
                                    if f == "openmpi" or s in STARTS]]), (f, fortran)
        assert not [s for s in exported if s.startswith(("lc_", "collsel_tree"))], (f, exported)
    return out


@pytest.fixture(scope="module")
def trees():
    """trees[family][collective]: tree.json, blob, cuts; trees[family]["dir"]: COLLSEL_TREES."""
    out = {}
    for family in FAMILIES:
        directory = BIN / "trees" / family
        directory.mkdir(parents=True, exist_ok=True)
        out[family] = {"dir": directory}
        for c in COLLECTIVES:
            table = REPO / "bench-data" / "paired" / f"{c}-{family}.csv"
            work = BIN / "build" / family / c
            run(["collsel", "build", table, "--collective", c, "--max-depth", DEPTH,
                 "--out", work])
            run(["collsel", "emit", "--target", "blob", work / "tree.json",
                 "--out", directory / f"{c}.bin"])
            loaded = treefile.load(work / "tree.json")
            assert loaded.family == family, (table, loaded.family)
            out[family][c] = {"json": work / "tree.json", "blob": directory / f"{c}.bin",
                              "cuts": list(loaded.axes[1].cuts)}
    return out


@pytest.fixture(scope="module")
def programs():
    """Per family: coll_check (unmodified), libcollsel_cases, libcollsel_threads; Open MPI's
    algorithm trace library (coll_algorithm_trace.c)."""
    BIN.mkdir(parents=True, exist_ok=True)
    out = {}
    flags = ["-O2", "-std=c99", "-Wall", "-Wextra", "-Werror"]
    for family in FAMILIES:
        mpicc = f"mpicc.{family}"
        out[family] = {name: BIN / f"{name}-{family}"
                       for name in ("coll_check", "libcollsel_cases", "libcollsel_threads")}
        run([mpicc, *flags, HERE / "coll_check.c", "-o", out[family]["coll_check"]])
        run([mpicc, *flags, "-I", REPO / "include", HERE / "libcollsel_cases.c", "-o",
             out[family]["libcollsel_cases"], "-ldl"])
        run([mpicc, *flags, HERE / "libcollsel_threads.c", "-o",
             out[family]["libcollsel_threads"], "-lpthread"])
    out["openmpi"]["alg_trace"] = BIN / "libcolltrace.so"
    run(["mpicc.openmpi", "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror",
         HERE / "coll_algorithm_trace.c", "-o", out["openmpi"]["alg_trace"], "-ldl"])
    return out


@pytest.fixture(scope="module")
def mpich_traced():
    """coll_check.c with libcollsel's sources linked in and MPICH's algorithms wrapped, against
    libmpich.a (Debian's libmpich.so hides them). mpich_algorithm_trace.c, unchanged, is
    compiled with its MPI_Init/MPI_Bcast/MPI_Reduce renamed to __wrap_PMPI_*, so it sees the
    PMPI calls libcollsel makes for the user's calls (and only those)."""
    if not LIBMPICH.exists():
        pytest.skip(f"{LIBMPICH} missing (libmpich-dev)")
    BIN.mkdir(parents=True, exist_ok=True)
    include = [w for w in run(["mpicc.mpich", "-show"]).stdout.split() if w.startswith("-I")]
    renamed = [f"-D{a}={b}" for f in ("Init", "Bcast", "Reduce")
               for a, b in ((f"MPI_{f}", f"__wrap_PMPI_{f}"), (f"PMPI_{f}", f"__real_PMPI_{f}"))]
    trace_object = BIN / "mpich_algorithm_trace.o"
    run(["gcc", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", *include, *renamed, "-c",
         HERE / "mpich_algorithm_trace.c", "-o", trace_object])
    wrapped = (*MPICH_WRAPPED, "PMPI_Init", "PMPI_Bcast", "PMPI_Reduce")
    exe = BIN / "coll_check-mpich-traced"
    run(["gcc", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", *include, "-I", REPO / "include",
         "-I", REPO / "runtime", "-I", REPO / "runtime" / "libcollsel", "-o", exe,
         HERE / "coll_check.c", *sorted((REPO / "runtime" / "libcollsel").glob("*.c")),
         *(REPO / "runtime" / f for f in ("collsel_tree.c", "collsel_treeset.c", "collsel_cvar.c")),
         trace_object, "-Wl,--wrap=" + ",--wrap=".join(wrapped), LIBMPICH,
         "-lhwloc", "-lucp", "-lucs", "-lpthread", "-lm", "-lrt"])
    return exe


@pytest.fixture(scope="module")
def rules_driver():
    """libcollsel_rules.c with rules.c, trees.c and the runtime (the tree loader and the
    blob-set loader), under ASan + UBSan."""
    BIN.mkdir(parents=True, exist_ok=True)
    exe = BIN / "libcollsel_rules"
    run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-g", "-O1",
         "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-I", REPO / "include",
         "-I", REPO / "runtime", "-I", REPO / "runtime" / "libcollsel", HERE / "libcollsel_rules.c",
         REPO / "runtime" / "libcollsel" / "rules.c", REPO / "runtime" / "libcollsel" / "trees.c",
         REPO / "runtime" / "collsel_tree.c", REPO / "runtime" / "collsel_treeset.c", "-o", exe])
    return exe


# ---- unit: rules, COLLSEL_TREES, names ------------------------------------------------------

def test_rules_equal_collsel_query(trees, rules_driver, tmp_path):
    checked = 0
    for family in FAMILIES:
        for c in COLLECTIVES:
            ps = (1, 2, 3, 4, 5, 8, 64, 1000)
            done = run([rules_driver, "rules", trees[family][c]["blob"], *ps])
            got = done.stdout.splitlines()
            want = [f"rules {p} 0 {rules_text(expected_rules(trees[family][c], p))}" for p in ps]
            assert got == want
            checked += len(ps)
    # a 3-axis tree: ppn octree of the emulated-cluster sweep (z = ppn)
    ppn_tree = tmp_path / "ppn"
    run(["collsel", "build", REPO / "bench-data" / "cluster" / "bcast-nodes-ppn.csv",
         "--collective", "bcast", "--z", "ppn", "--max-depth", DEPTH, "--out", ppn_tree])
    run(["collsel", "emit", "--target", "blob", ppn_tree / "tree.json", "--out",
         ppn_tree / "tree.bin"])
    tree = {"json": ppn_tree / "tree.json",
            "cuts": list(treefile.load(ppn_tree / "tree.json").axes[1].cuts)}
    cases = [(p, z) for p in (2, 4, 8) for z in (1, 2)]
    done = run([rules_driver, "rules", ppn_tree / "tree.bin", *(f"{p}:{z}" for p, z in cases)])
    want = [f"rules {p} {z} {rules_text(expected_rules(tree, p, z))}" for p, z in cases]
    assert done.stdout.splitlines() == want
    checked += len(cases)
    print(f"{checked} rule lists equal collsel query at every cut; each also checked against "
          f"collsel_tree_decide at every cut +-1 and 10,000 random sizes")


def test_collsel_trees_spec(trees, rules_driver, tmp_path):
    t = trees["openmpi"]
    crc = {c: "%08x" % zlib.crc32(t[c]["blob"].read_bytes()[:-4]) for c in COLLECTIVES}
    ok = f"trees ok bcast={crc['bcast']} reduce={crc['reduce']}"
    assert run([rules_driver, "trees", t["dir"]]).stdout.strip() == ok
    assert run([rules_driver, "trees", f"{t['bcast']['blob']}:{t['reduce']['blob']}"]
               ).stdout.strip() == ok
    assert run([rules_driver, "trees", f"::{t['bcast']['blob']}:"]).stdout.strip() == \
        f"trees ok bcast={crc['bcast']}"
    # a blob of a collective libcollsel does not know (the name in its header changed,
    # checksum re-sealed) is skipped; reduce_scatter_block's blob name is reduce_scat_blk
    for name, loaded in ((b"gatherv", None), (b"reduce_scat_blk", "reduce_scatter_block")):
        data = bytearray(t["reduce"]["blob"].read_bytes())
        data[16:32] = name.ljust(16, b"\0")
        data[-4:] = zlib.crc32(bytes(data[:-4])).to_bytes(4, "little")
        blob = tmp_path / f"{name.decode()}.bin"
        blob.write_bytes(bytes(data))
        other = f" {loaded}=%08x" % zlib.crc32(bytes(data[:-4])) if loaded else ""
        assert run([rules_driver, "trees", f"{blob}:{t['bcast']['blob']}"]
                   ).stdout.strip() == f"trees ok bcast={crc['bcast']}{other}"
    refused = {
        f"{t['bcast']['blob']}:{t['bcast']['blob']}": "a second bcast tree",
        str(tmp_path / "missing.bin"): "missing.bin: cannot open or read the tree file",
        str(tmp_path / "gatherv.bin"): "no tree of a collective libcollsel serves",
        str(tmp_path / "empty"): "no *.bin tree file in this directory",
        str(tmp_path / "corrupt.bin"): "corrupt.bin: tree blob checksum mismatch (corrupted)",
        ":": "COLLSEL_TREES names no file",
    }
    (tmp_path / "empty").mkdir()
    data = bytearray(t["bcast"]["blob"].read_bytes())
    data[40] ^= 0x10
    (tmp_path / "corrupt.bin").write_bytes(bytes(data))
    for spec, why in refused.items():
        done = run([rules_driver, "trees", spec], check=False)
        assert done.returncode == 1 and done.stdout.startswith("trees error: ") and \
            why in done.stdout, (spec, done.stdout, done.stderr)


def test_mpich_names_are_collsels_mpich_algorithms():
    """force_mpich.c's id -> name table is the generated MPI table's (runtime/collsel_mpi_table.h,
    from generator/collsel/core/mpi/algorithms.py; tests/unit/sinks/emit/test_mpi_table.py checks it is current)."""
    text = (REPO / "runtime" / "libcollsel" / "force_mpich.c").read_text()
    assert "collsel_mpi_mpich_names[coll]" in text
    assert not re.search(r'"scatter_ring_allgather"', text)


# ---- decisions, algorithms, results ---------------------------------------------------------

def decisions_of(stderr, collective):
    """{(comm_size, m): {rank: (alg, seg, fan)}} from COLLSEL_TRACE lines; one per rank."""
    out = {}
    for line in stderr.splitlines():
        d = DECISION.match(line)
        if d and d.group(1) == collective:
            key = (int(d.group(3)), int(d.group(4)))
            rank = int(d.group(2))
            assert rank not in out.setdefault(key, {}), ("two decisions", line)
            out[key][rank] = tuple(map(int, d.groups()[5:]))
    return out


def algorithms_of(stderr, collective):
    """{m: {algorithm name}} from the algorithm traces (both MPIs print collsel-alg lines)."""
    out = {}
    for line in stderr.splitlines():
        a = ALG_TRACE.match(line)
        if a and a.group(1) == collective:
            out.setdefault(int(a.group(5)) * UNIT[collective], set()).add(a.group(2))
    return out


def check_run(done, collective, p, sizes, tree):
    """Results correct; every rank decided once per call, as collsel query; the resolve lines'
    rules equal the tree's. Returns {m: decision}."""
    checks = [line for line in done.stdout.splitlines() if line.startswith("check ")]
    assert checks == [f"check {collective} m={m} ok" for m in sizes], done.stdout
    decided = decisions_of(done.stderr, collective)
    assert sorted(decided) == [(p, m) for m in sizes], sorted(decided)
    want = dict(zip(sizes, query(tree["json"], [(p, m) for m in sizes])))
    for m in sizes:
        assert decided[(p, m)] == {r: want[m] for r in range(p)}, (p, m, decided[(p, m)])
    resolved = [RESOLVE.match(line).groups() for line in done.stderr.splitlines()
                if RESOLVE.match(line)]
    assert sorted(resolved) == sorted(
        (collective, str(r), str(p), "-", rules_text(expected_rules(tree, p))) for r in range(p))
    return want


@pytest.mark.parametrize("collective", COLLECTIVES)
def test_open_mpi_runs_the_trees_decisions(collective, library, trees, programs):
    tree = trees["openmpi"][collective]
    exe, alg_trace = programs["openmpi"]["coll_check"], programs["openmpi"]["alg_trace"]
    env = {"COLLSEL_TREES": trees["openmpi"]["dir"], "COLLSEL_TRACE": "1"}
    forced, deferred = set(), 0
    for p in COMM_SIZES:
        sizes = straddling_sizes(expected_rules(tree, p), collective)
        done = launch("openmpi", p, [exe, collective, *sizes], env,
                      (library["openmpi"], alg_trace), DYNAMIC_RULES)
        alone = launch("openmpi", p, [exe, collective, *sizes], {}, (alg_trace,), DYNAMIC_RULES)
        want = check_run(done, collective, p, sizes, tree)
        ran, ran_alone = algorithms_of(done.stderr, collective), algorithms_of(alone.stderr,
                                                                                collective)
        for m in sizes:
            alg = want[m][0]
            assert ran[m] == ({FUNCTIONS[collective][alg]} if alg else ran_alone[m]), \
                (p, m, want[m], ran[m], ran_alone[m])
            forced |= {alg} - {0}
            deferred += alg == 0
        print(f"openmpi {collective} P={p}: {len(sizes)} sizes, ran "
              f"{ {m: ran[m].pop() for m in sizes} }")
    assert len(forced) >= 3, forced      # the points tell methods apart
    print(f"openmpi {collective}: forced {sorted(forced)}, {deferred} deferred calls")


@pytest.mark.parametrize("collective", COLLECTIVES)
def test_mpich_runs_the_trees_decisions(collective, library, trees, programs, mpich_traced):
    tree = trees["mpich"][collective]
    env = {"COLLSEL_TREES": trees["mpich"]["dir"], "COLLSEL_TRACE": "1"}
    names = MPICH_ALGORITHMS[collective]
    forced, deferred = set(), 0
    for p in COMM_SIZES:
        sizes = straddling_sizes(expected_rules(tree, p), collective)
        # the unmodified program under LD_PRELOAD
        done = launch("mpich", p, [programs["mpich"]["coll_check"], collective, *sizes], env,
                      (library["mpich"],))
        check_run(done, collective, p, sizes, tree)
        # the same program linked with the library's sources, MPICH's algorithms wrapped
        traced = launch("mpich", p, [mpich_traced, collective, *sizes], env)
        want = check_run(traced, collective, p, sizes, tree)
        alone = launch("mpich", p, [mpich_traced, collective, *sizes])
        assert alone.stderr.count("libcollsel: COLLSEL_TREES is not set" + PASSING) == 1
        ran, ran_alone = algorithms_of(traced.stderr, collective), algorithms_of(alone.stderr,
                                                                                  collective)
        for m in sizes:
            alg = want[m][0]
            assert ran[m] == ({names[alg]} if alg else ran_alone[m]), \
                (p, m, want[m], ran[m], ran_alone[m])
            forced |= {alg} - {0}
            deferred += alg == 0
        print(f"mpich {collective} P={p}: {len(sizes)} sizes, ran "
              f"{ {m: sorted(ran[m]) for m in sizes} }")
    assert len(forced) >= 2, forced
    print(f"mpich {collective}: forced {sorted(names[a] for a in forced)}, {deferred} deferred")


# ---- pass-through cases, communicators freed ------------------------------------------------

def counts_of(stdout):
    return {w: dict(kv.split("=") for kv in rest.split())
            for w, rest in re.findall(r"^counts (\w+) (.*)$", stdout, re.M)}


@pytest.mark.parametrize("family", FAMILIES)
def test_pass_through_and_results(family, library, trees, programs):
    p = 3
    env = {"COLLSEL_TREES": trees[family]["dir"], "COLLSEL_TRACE": "1"}
    done = launch(family, p, [programs[family]["libcollsel_cases"], 20], env,
                  (library[family],), DYNAMIC_RULES if family == "openmpi" else ())
    cases = re.findall(r"^case (\S+) (\S+)$", done.stdout, re.M)
    assert len(cases) == 19 and all(r == "ok" for _, r in cases), done.stdout
    passes, noncommutative = {}, []
    for line in done.stderr.splitlines():
        if PASS.match(line):
            why = PASS.match(line).group(5)
            passes[why] = passes.get(why, 0) + 1
            if why == "noncommutative":
                noncommutative.append((int(PASS.match(line).group(3)),
                                       int(PASS.match(line).group(4))))
    # inter: the intercomm bcast on every rank; size1: a bcast and a reduce on MPI_COMM_SELF per
    # rank, 5 of each on the half of one rank; noncommutative (2 roots x 5 sizes x P ranks of
    # the matrix product): passed where the decided algorithm needs a commutative op (Open MPI:
    # every reduce algorithm but linear 1 and in-order binary 6; MPICH: every forced one), the
    # others decided (checked with the served calls below)
    needs = {"openmpi": lambda a: a not in (0, 1, 6), "mpich": lambda a: a != 0}[family]
    assert all(needs(a) for a, _, _ in query(trees[family]["reduce"]["json"], noncommutative))
    assert len(noncommutative) <= 2 * 5 * p and len(noncommutative) % p == 0
    if family == "mpich":
        assert len(noncommutative) == 2 * 5 * p
    passes.pop("noncommutative", None)
    assert passes == {"inter": p, "size1": 2 * p + 2 * 5}, passes
    served = 0
    for c in COLLECTIVES:
        points, answers = [], []
        for line in done.stderr.splitlines():
            d = DECISION.match(line)
            if d and d.group(1) == c:
                points.append((int(d.group(3)), int(d.group(4))))
                answers.append(tuple(map(int, d.groups()[5:])))
        assert {pt[0] for pt in points} == {2, 3}, set(points)   # world and the half of two
        assert answers == query(trees[family][c]["json"], points)
        served += len(points)
    print(f"{family} P={p}: {served} served calls equal collsel query, passed through {passes}")


@pytest.mark.parametrize("family,comms", [("openmpi", 10000), ("mpich", 1000)])
def test_state_freed_with_the_communicator(family, comms, library, trees, programs):
    p = 2
    done = launch(family, p, [programs[family]["libcollsel_cases"], comms],
                  {"COLLSEL_TREES": trees[family]["dir"]}, (library[family],),
                  DYNAMIC_RULES if family == "openmpi" else ())
    assert f"case communicators-{comms} ok" in done.stdout, done.stdout
    counts = counts_of(done.stdout)
    before, after = counts["before"], counts["after"]
    # a method's shadow is made at its first use: communicator k's one bcast of 1 + k % 5000
    # bytes and one reduce of 1 + k % 1000 ints make one each where the tree forces a method
    uses = {"bcast": [1 + k % 5000 for k in range(comms)],
            "reduce": [4 * (1 + k % 1000) for k in range(comms)]}
    made = 0
    for c in COLLECTIVES:
        points = sorted(set(uses[c]))
        forced = {m for m, a in zip(points, query(trees[family][c]["json"],
                                                  [(p, m) for m in points])) if a[0] != 0}
        made += sum(m in forced for m in uses[c])
    made = made if family == "openmpi" else 0
    per_comm = made / comms
    assert int(after["shadows_made"]) - int(before["shadows_made"]) == made
    assert after["shadows_live"] == before["shadows_live"], counts
    assert after["states_live"] == before["states_live"], counts
    assert after["state_bytes"] == before["state_bytes"], counts
    print(f"{family}: {comms} communicators made, used and freed; "
          f"{made} shadow communicators made and freed ({per_comm:.2f} per communicator "
          f"at P={p}, each made at its method's first use); state of MPI_COMM_WORLD + "
          f"MPI_COMM_SELF: {before['state_bytes']} bytes, "
          f"{before['shadows_live']} shadows")


# ---- refusals: one line, everything passed through ------------------------------------------

def assert_refused(done, why, collective="bcast"):
    lines = [line for line in done.stderr.splitlines() if line.startswith("libcollsel:")]
    assert len(lines) == 1 and why in lines[0] and lines[0].endswith(PASSING), done.stderr
    assert "check " in done.stdout and "FAIL" not in done.stdout, done.stdout
    traced = [line for line in done.stderr.splitlines() if line.startswith("collsel-trace")]
    assert traced and all(line.endswith(" pass=off") for line in traced), traced[:5]
    return lines[0]


@pytest.mark.parametrize("family", FAMILIES)
def test_refusals_pass_everything_through(family, library, trees, programs, tmp_path):
    exe = programs[family]["coll_check"]
    extra = DYNAMIC_RULES if family == "openmpi" else ()

    def attempt(env, extra=extra, p=3):
        return launch(family, p, [exe, "bcast", 1, 5000, 300000],
                      {**env, "COLLSEL_TRACE": "1"}, (library[family],), extra)

    bad = tmp_path / "bad"
    bad.mkdir()
    data = bytearray(trees[family]["bcast"]["blob"].read_bytes())
    data[len(data) // 2] ^= 0x01
    (bad / "bcast.bin").write_bytes(bytes(data))
    shutil.copy(trees[family]["reduce"]["blob"], bad / "reduce.bin")
    seen = [assert_refused(attempt({"COLLSEL_TREES": bad}),
                           f"{bad / 'bcast.bin'}: tree blob checksum mismatch"),
            assert_refused(attempt({}), "COLLSEL_TREES is not set")]
    if family == "openmpi":
        seen.append(assert_refused(attempt({"COLLSEL_TREES": trees[family]["dir"]}, extra=()),
                                   "coll_tuned_use_dynamic_rules is off"))
    else:
        seen.append(assert_refused(attempt({"COLLSEL_TREES": trees["openmpi"]["dir"]}),
                                   "the bcast tree holds Open MPI algorithm ids"))
    if family == "mpich":   # Open MPI serves it: test_libcollsel_apps.py
        done = launch(family, 2, [programs[family]["libcollsel_threads"]],
                      {"COLLSEL_TREES": trees[family]["dir"], "COLLSEL_TRACE": "1"},
                      (library[family],), extra)
        if "provided=multiple" not in done.stdout:
            pytest.skip(f"{family} does not provide MPI_THREAD_MULTIPLE here")
        assert "case threads ok" in done.stdout, done.stdout
        refused = [line for line in done.stderr.splitlines() if line.startswith("libcollsel:")]
        assert refused == ["libcollsel: MPICH at MPI_THREAD_MULTIPLE: every collective passes "
                           "through to MPICH's own choice; set COLLSEL_SERIAL_COLLECTIVES=1 if no "
                           "two threads run collectives at once"], done.stderr
        assert "alg=" not in done.stderr
        seen.append(refused[0])
    print("\n".join(seen))


def test_ranks_with_different_trees_pass_through(library, trees, programs, tmp_path):
    """Open MPI MPMD: rank 0 and rank 1 are given different bcast trees."""
    other = tmp_path / "other"
    run(["collsel", "build", REPO / "bench-data" / "paired" / "bcast-openmpi.csv",
         "--collective", "bcast", "--max-depth", 2, "--out", other])
    run(["collsel", "emit", "--target", "blob", other / "tree.json", "--out", other / "bcast.bin"])
    exe = programs["openmpi"]["coll_check"]
    app = []
    for directory in (trees["openmpi"]["dir"], other):
        app += [":"] if app else []
        app += ["-np", "1", "-x", f"COLLSEL_TREES={directory}", "-x", "COLLSEL_TRACE=1",
                "-x", f"LD_PRELOAD={library['openmpi']}", exe, "bcast", 1, 5000]
    output = tmp_path / "output"
    done = run(["mpirun.openmpi", *OMPI_FLAGS, *DYNAMIC_RULES, "--output-filename", output, *app])
    joined = {s: "".join((output / "1" / f"rank.{r}" / s).read_text() for r in (0, 1))
              for s in ("stdout", "stderr")}
    done = subprocess.CompletedProcess(done.args, 0, joined["stdout"], joined["stderr"])
    print(assert_refused(done, "the ranks loaded different trees"))


# ---- memory errors and leaks of ours; the cost of a call ------------------------------------

def our_records(log):
    """Valgrind records (errors and leaks) that are ours: an error with a libcollsel frame, or a
    leak whose allocation was made by libcollsel's own code (the allocator's caller)."""
    out = []
    for record in re.split(r"\n==\d+== \n", log):
        frames = re.findall(r"(?:at|by) 0x[0-9A-F]+: (.*)", record)
        if not frames:
            continue
        leak = "lost in loss record" in record
        alloc = [i for i, f in enumerate(frames) if re.match(r"(malloc|calloc|realloc) ", f)]
        if leak and alloc and alloc[0] + 1 < len(frames):
            if "libcollsel" in frames[alloc[0] + 1]:
                out.append(record)
        elif not leak and any("libcollsel" in f for f in frames):
            out.append(record)
    return out


@pytest.mark.parametrize("family", FAMILIES)
def test_valgrind_finds_nothing_of_ours(family, library, trees, programs, tmp_path):
    if not shutil.which("valgrind"):
        pytest.skip("valgrind is not installed")
    logs = tmp_path / "vg.%p.log"
    done = launch(family, 2, ["valgrind", "--trace-children=yes", "--leak-check=full",
                              "--show-leak-kinds=definite,indirect,possible", "--num-callers=40",
                              f"--log-file={logs}", "env", f"LD_PRELOAD={library[family]}",
                              programs[family]["libcollsel_cases"], 50],
                  {"COLLSEL_TREES": trees[family]["dir"]}, (),
                  DYNAMIC_RULES if family == "openmpi" else ())
    assert "case communicators-50 ok" in done.stdout, done.stdout
    texts = [p.read_text() for p in tmp_path.glob("vg.*.log")]
    ran = [t for t in texts if "libcollsel_cases" in t and "libcollsel.so" in t]
    assert len(ran) == 2, [t[:300] for t in texts]
    ours = [r for t in ran for r in our_records(t)]
    assert not ours, "\n\n".join(ours[:3])
    print(f"{family}: valgrind memcheck, 2 ranks, libcollsel_cases 50: no error with a "
          f"libcollsel frame, no leak allocated by libcollsel")


def test_per_call_overhead(library, trees, programs, tmp_path):
    """Prints (asserts nothing on times) ns per MPI_Bcast at P = 2 through libcollsel against
    PMPI_Bcast on the same communicator in the same launch (libcollsel_overhead.c): m = 1 byte,
    where the hand-made tree defers (same algorithm, same communicator: the interposition
    alone), and m = 4096, where it forces (Open MPI: linear on its shadow; MPICH: binomial, two
    variable writes); and without the library (the same two paths: noise)."""
    import json
    import sys
    sys.path.insert(0, str(REPO / "tests"))
    import defer_tree   # tests/defer_tree.py
    out = []
    for family in FAMILIES:
        document = defer_tree.document("bcast")
        if family == "mpich":   # MPICH ids: binomial (1) in both forced leaves
            for method in document["methods"][1:]:
                method.update(algorithm=1, name="binomial")
        directory = tmp_path / family
        directory.mkdir()
        (directory / "tree.json").write_text(json.dumps(document))
        run(["collsel", "emit", "--target", "blob", directory / "tree.json", "--out",
             directory / "bcast.bin"])
        exe = BIN / f"libcollsel_overhead-{family}"
        run([f"mpicc.{family}", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror",
             HERE / "libcollsel_overhead.c", "-o", exe])
        extra = DYNAMIC_RULES if family == "openmpi" else ()
        for m, what in ((1, "defer"), (4096, "forced"), (1, "no library")):
            lib = what != "no library"
            done = launch(family, 2, [exe, m], {"COLLSEL_TREES": directory} if lib else {},
                          (library[family],) if lib else (), extra)
            out.append(f"{family} m={m} {what}: {done.stdout.strip()}")
    print("\n".join(out))


@pytest.mark.parametrize("family", FAMILIES)
def test_ppn_tree_decides_at_the_communicators_ppn(family, library, programs, tmp_path):
    """A 3-axis tree (z = ppn): libcollsel finds ppn (MPI_Comm_split_type SHARED leaders) and
    decides as `collsel query --z ppn`. Open MPI: the emulated-cluster octree, one node here
    (ppn = P); MPICH: the hand-made ppn table of test_cluster_mpich_ppn.py, MPICH's
    MPIR_CVAR_NUM_CLIQUES making 1 or 2 emulated nodes of 4 ranks (ppn 4 and 2)."""
    table = {"openmpi": REPO / "bench-data" / "cluster" / "bcast-nodes-ppn.csv",
             "mpich": REPO / "tests" / "data" / "ppn-mpich-bcast.csv"}[family]
    work = tmp_path / "tree"
    run(["collsel", "build", table, "--collective", "bcast", "--z", "ppn", "--max-depth", DEPTH,
         "--out", work])
    (tmp_path / "trees").mkdir()
    run(["collsel", "emit", "--target", "blob", work / "tree.json", "--out",
         tmp_path / "trees" / "bcast.bin"])
    tree = {"json": work / "tree.json", "cuts": list(treefile.load(work / "tree.json").axes[1].cuts)}
    # (P, nodes); MPICH: the table's decisions at P = 2 differ between ppn 1 and 2
    placements = ((2, 1), (4, 1)) if family == "openmpi" else ((2, 1), (2, 2), (4, 2))
    seen, rules_at = [], {}
    for p, nodes in placements:
        ppn = p // nodes
        sizes = straddling_sizes(expected_rules(tree, p, ppn), "bcast")
        env = {"COLLSEL_TREES": tmp_path / "trees", "COLLSEL_TRACE": "1"}
        if family == "mpich":
            env.update(MPIR_CVAR_NUM_CLIQUES=nodes, MPIR_CVAR_CLIQUES_BY_BLOCK=1)
        done = launch(family, p, [programs[family]["coll_check"], "bcast", *sizes], env,
                      (library[family],), DYNAMIC_RULES if family == "openmpi" else ())
        assert [line for line in done.stdout.splitlines() if line.startswith("check ")] == \
            [f"check bcast m={m} ok" for m in sizes], done.stdout
        text = "".join(f"{p} {m} {ppn}\n" for m in sizes)
        want = subprocess.run(["collsel", "query", str(tree["json"]), "--ids", "--points", "-"],
                              input=text, capture_output=True, text=True, timeout=120)
        want = [tuple(int(x) for x in line.split()[:3]) for line in want.stdout.splitlines()]
        got = {}
        for line in done.stderr.splitlines():
            d = DECISION.match(line)
            if d:
                assert d.group(5) == str(ppn), line
                got.setdefault(int(d.group(4)), set()).add(tuple(map(int, d.groups()[5:])))
        assert got == {m: {w} for m, w in zip(sizes, want)}, (p, nodes, got)
        resolved = {RESOLVE.match(line).group(5) for line in done.stderr.splitlines()
                    if RESOLVE.match(line)}
        assert resolved == {rules_text(expected_rules(tree, p, ppn))}
        rules_at[(p, ppn)] = resolved.pop()
        seen.append(f"P={p} ppn={ppn}: {len(sizes)} sizes, rules {rules_at[(p, ppn)]}")
    if family == "mpich":
        assert rules_at[(2, 1)] != rules_at[(2, 2)], rules_at
    print(f"{family}: " + "; ".join(seen))
