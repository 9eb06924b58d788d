"""Property tests of every emit target on random valid trees (hypothesis).

Trees come from collsel's own pipeline on random decision maps: core.maps.decision_map.make_axis
(midpoint cuts) -> core.trees.tree.build_tree -> core.trees.treefile.tree_document -> LoadedTree (the checks
every tree.json load runs). They are 2-D and 3-D (numeric and category z, with hostile but valid
labels and column names), both split modes, both leaf rules, depth and threshold limits, with
values at every bound (P 1 and 2^31-1, m 0 and 2^64-1, z -2^63 and 2^63-1, segsize and
faninout up to 2^31-1, algorithm ids up to 2^31-1 for collectives collsel has no table of, up to
300 methods). For each tree, every target either refuses it with InputError for a limit of its
format (predicted here, independently) or emits files that

- compile under gcc -std=c99 -Wall -Wextra -Werror -pedantic (c, c-fast, ompi-dec-fixed with
  stand-in Open MPI declarations, c-array), and
- decide what `collsel query` decides (run in this process on the same tree.json) on every grid
  value, cut, cut - 1 and the extremes of each axis: the compiled c, c-fast and ompi-dec-fixed
  functions, the blob through the C runtime (runtime/collsel_tree.c), the classic rules file
  read back with Open MPI's reader (ompi_rules_reader, which must report no error), the JSON
  rules file (ompi_rules.json_lookup) and the MPICH file (a first-match walk over a small
  synthetic base, every Open MPI id mapped to its own MPICH name).
Half the trees carry tree.json's `beyond` (above = the largest P + a drawn offset, when it fits
below 2^31 - 1): every target must then decide the tree's choice at above and defer past it.

Compiling dominates the time: each example compiles up to 4 programs, so the example counts are
small (EXAMPLES_2D, EXAMPLES_3D; COLLSEL_EMIT_EXAMPLES=N searches longer).
"""
import contextlib
import io
import json
import os
import pathlib
import random
import re
import subprocess
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from collsel import cli
from collsel.core.maps import decision_map
from collsel.core.mpi import algorithms, rules_size
from collsel.core.trees import tree as treemod, treefile
from collsel.errors import InputError
from collsel.sinks.emit import mpich_csel, mpich_json, ompi_rules, ompi_rules_reader
from collsel.sinks.emit.targets import EmitOptions, emit

REPO = pathlib.Path(__file__).resolve().parents[4]
CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O0"]
INT_MAX, SIZE_MAX, I64 = 2**31 - 1, 2**64 - 1, 2**63
# examples per property; COLLSEL_EMIT_EXAMPLES=N runs N 2-D and 2N/3 3-D trees (a longer search)
EXAMPLES_2D = int(os.environ.get("COLLSEL_EMIT_EXAMPLES", 30))
EXAMPLES_3D = 2 * EXAMPLES_2D // 3

# --- C programs the examples link against -------------------------------------------------------

DECISION_DRIVER = r"""
#include <stdio.h>
#include "decision.h"
int main(void)
{
    long long p;
    unsigned long long m;
    int seg, fan, alg;
#ifdef DECIDE3
    long long z;
#endif
    while (scanf("%lld %llu", &p, &m) == 2) {
#ifdef DECIDE3
        if (scanf("%lld", &z) != 1) return 1;
        alg = DECIDE3((int)p, (size_t)m, (int64_t)z, &seg, &fan);
#else
        alg = DECIDE((int)p, (size_t)m, &seg, &fan);
#endif
        printf("%d %d %d\n", alg, seg, fan);
    }
    return 0;
}
"""

# Open MPI's declarations the dec_fixed body uses, as stand-ins, then the body itself, whose
# static tree function the driver calls directly.
DEC_FIXED_DRIVER = r"""
#include <stddef.h>
#include <stdio.h>
struct ompi_datatype_t;
struct ompi_communicator_t;
struct ompi_op_t;
typedef struct mca_coll_base_module_t mca_coll_base_module_t;
int ompi_datatype_type_size(struct ompi_datatype_t *t, size_t *s) { (void)t; *s = 1; return 0; }
int ompi_comm_size(struct ompi_communicator_t *c) { (void)c; return 4; }
int ompi_comm_rank(struct ompi_communicator_t *c) { (void)c; return 0; }
int ompi_op_is_commute(struct ompi_op_t *o) { (void)o; return 1; }
#define MPI_IN_PLACE ((void *) 1)
int ompi_coll_tuned_allreduce_intra_do_this(const void *sb, void *rb, int n,
    struct ompi_datatype_t *t, struct ompi_op_t *o, struct ompi_communicator_t *c,
    mca_coll_base_module_t *m, int a, int f, int s)
{ (void)sb; (void)rb; (void)n; (void)t; (void)o; (void)c; (void)m; return a + f + s; }
int ompi_coll_tuned_gather_intra_do_this(const void *sb, int sn, struct ompi_datatype_t *st,
    void *rb, int rn, struct ompi_datatype_t *rt, int r, struct ompi_communicator_t *c,
    mca_coll_base_module_t *m, int a, int f, int s)
{ (void)sb; (void)sn; (void)st; (void)rb; (void)rn; (void)rt; (void)r; (void)c; (void)m;
  return a + f + s; }
int collsel_ompi_original_allreduce_intra_dec_fixed(const void *sb, void *rb, int n,
    struct ompi_datatype_t *t, struct ompi_op_t *o, struct ompi_communicator_t *c,
    mca_coll_base_module_t *m)
{ (void)sb; (void)rb; (void)n; (void)t; (void)o; (void)c; (void)m; return -1; }
int collsel_ompi_original_gather_intra_dec_fixed(const void *sb, int sn,
    struct ompi_datatype_t *st, void *rb, int rn, struct ompi_datatype_t *rt, int r,
    struct ompi_communicator_t *c, mca_coll_base_module_t *m)
{ (void)sb; (void)sn; (void)st; (void)rb; (void)rn; (void)rt; (void)r; (void)c; (void)m;
  return -1; }
int ompi_coll_tuned_bcast_intra_do_this(void *b, int n, struct ompi_datatype_t *t, int r,
    struct ompi_communicator_t *c, mca_coll_base_module_t *m, int a, int f, int s)
{ (void)b; (void)n; (void)t; (void)r; (void)c; (void)m; return a + f + s; }
int ompi_coll_tuned_reduce_intra_do_this(const void *sb, void *rb, int n,
    struct ompi_datatype_t *t, struct ompi_op_t *o, int r, struct ompi_communicator_t *c,
    mca_coll_base_module_t *m, int a, int f, int s, int q)
{
    (void)sb; (void)rb; (void)n; (void)t; (void)o; (void)r; (void)c; (void)m; (void)q;
    return a + f + s;
}
/* Open MPI's original fixed decisions (splice.py keeps them under these names): the driver
 * asks the tree function directly, so they only need to link. */
int collsel_ompi_original_bcast_intra_dec_fixed(void *b, int n, struct ompi_datatype_t *t,
    int r, struct ompi_communicator_t *c, mca_coll_base_module_t *m)
{ (void)b; (void)n; (void)t; (void)r; (void)c; (void)m; return -1; }
int collsel_ompi_original_reduce_intra_dec_fixed(const void *sb, void *rb, int n,
    struct ompi_datatype_t *t, struct ompi_op_t *o, int r, struct ompi_communicator_t *c,
    mca_coll_base_module_t *m)
{ (void)sb; (void)rb; (void)n; (void)t; (void)o; (void)r; (void)c; (void)m; return -1; }
#include DEC_FIXED_FILE
int main(void)
{
    long long p;
    unsigned long long m;
    int seg, fan, alg;
    while (scanf("%lld %llu", &p, &m) == 2) {
        alg = TREE_DECIDE((int)p, (size_t)m, &seg, &fan);
        printf("%d %d %d\n", alg, seg, fan);
    }
    return 0;
}
"""

# `driver TREE.bin [3] < points`, or, compiled with ARRAY_FILE and ARRAY_NAME (the c-array
# target's file and array), `driver - [3] < points` on the array, loaded without allocation.
BLOB_DRIVER = r"""
#include <inttypes.h>
#include <stdio.h>
#include "collsel_tree.h"
#ifdef ARRAY_FILE
#include ARRAY_FILE
#endif
int main(int argc, char **argv)
{
    collsel_tree *tree;
    collsel_tree_choice c;
    long long p, z = 0;
    unsigned long long m;
    int three = argc > 2;
#ifdef ARRAY_FILE
    collsel_tree_storage storage;
    collsel_tree_error err = collsel_tree_load_buffer(ARRAY_NAME, sizeof ARRAY_NAME, &storage,
                                                      &tree);
    (void)argv;
#else
    collsel_tree_error err = collsel_tree_load_file(argv[1], &tree);
#endif
    if (err) { fprintf(stderr, "load: %s\n", collsel_tree_strerror(err)); return 1; }
    while (scanf("%lld %llu", &p, &m) == 2) {
        if (three && scanf("%lld", &z) != 1) return 1;
        err = three ? collsel_tree_decide3(tree, (int32_t)p, m, z, &c)
                    : collsel_tree_decide(tree, (int32_t)p, m, &c);
        if (err) { fprintf(stderr, "decide: %s\n", collsel_tree_strerror(err)); return 1; }
        printf("%" PRId32 " %" PRId32 " %" PRId32 "\n", c.algorithm, c.segsize, c.faninout);
    }
    collsel_tree_free(tree);
    return 0;
}
"""

COUNTS = {}   # target -> [emitted and checked, refused as predicted]


def _count(target, refused=False):
    COUNTS.setdefault(target, [0, 0])[refused] += 1


def gcc(*args):
    r = subprocess.run(["gcc", *CFLAGS, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:3000]


def run_program(args, points_text):
    r = subprocess.run([str(a) for a in args], input=points_text, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:2000]
    return r.stdout.splitlines()


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory(prefix="collsel-props-") as d:
        yield pathlib.Path(d)


@pytest.fixture(scope="module")
def blob_runner(workdir):
    """The C runtime with a driver: `runner TREE.bin [3] < points`; and the driver's source and
    the runtime's object, for the c-array programs."""
    src = workdir / "blob_driver.c"
    src.write_text(BLOB_DRIVER)
    obj = workdir / "collsel_tree.o"
    gcc(f"-I{REPO / 'include'}", "-c", REPO / "runtime" / "collsel_tree.c", "-o", obj)
    exe = workdir / "blob_driver"
    gcc(f"-I{REPO / 'include'}", src, obj, "-o", exe)
    return exe, src, obj


@pytest.fixture(scope="module", autouse=True)
def report_counts():
    yield
    print("\nemit properties (target: checked, refused as predicted): "
          + ", ".join(f"{t}: {c[0]}, {c[1]}" for t, c in sorted(COUNTS.items())))


# --- random valid trees ---------------------------------------------------------------------------

TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="\x7f"),
               min_size=1, max_size=12)
# category labels: no white space, so `collsel query --points` takes them as one field
WORD = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zs", "Zl", "Zp")),
               min_size=1, max_size=12)
HOSTILE = st.sampled_from(["*/", "/*", "*/int/**/evil;/*", "??/", "a\\", "\"", "#", "é", "%s",
                           "}", "ppn", "?", "*"])
HOSTILE_NAME = st.sampled_from(["*/ int evil; /*", "map by", "??/", "z\\"])
P_VALUES = st.lists(st.one_of(st.integers(1, 40), st.integers(INT_MAX - 40, INT_MAX),
                              st.integers(1, INT_MAX)), min_size=1, max_size=9, unique=True)
M_VALUES = st.lists(st.one_of(st.integers(0, 70), st.integers(SIZE_MAX - 70, SIZE_MAX),
                              st.integers(0, SIZE_MAX),
                              st.integers(0, 63).map(lambda k: 1 << k)),
                    min_size=1, max_size=9, unique=True)
Z_VALUES = st.lists(st.one_of(st.integers(-I64, -I64 + 40), st.integers(I64 - 41, I64 - 1),
                              st.integers(-50, 50), st.integers(-I64, I64 - 1)),
                    min_size=1, max_size=4, unique=True)

# the other collectives collsel knows: a tree.json naming any other is refused when it loads
# (tests/hostile/cases.txt: tree-collective-unknown-*)
OTHER_COLLECTIVES = ["allreduce", "gather"]
LARGE = [65535, 65536, INT_MAX]      # beyond the blob's 16 bits


# Rare choices come from a random.Random the example's seed makes: hypothesis draws small
# integer ranges far from uniformly (0 about as often as everything else together).
@st.composite
def methods_of(draw, collective, rng):
    known = algorithms.ALGORITHMS.get(collective)
    candidates = sorted(set(known) - {algorithms.BASELINE_ALGORITHM}) if known else None
    if rng.random() < 0.1:     # many methods: more than a byte indexes them
        first = candidates[0] if candidates else 1
        return sorted(algorithms.Method(first, 1024 * k, k % 3)
                      for k in range(rng.randint(257, 300)))
    sizes = st.one_of(st.just(0), st.sampled_from([1024, 8192, 65536]),
                      st.integers(0, INT_MAX), st.just(INT_MAX))
    found = set()
    for _ in range(rng.randint(1, 6)):
        # ids and fan-in/out beyond 16 bits are rare, or few trees would reach the blob
        alg = (rng.choice(candidates) if candidates else
               rng.choice(LARGE) if rng.random() < 0.05 else rng.randint(1, 12))
        fan = rng.choice(LARGE) if rng.random() < 0.05 else rng.randint(0, 8) * (
            rng.random() < 0.5)
        found.add(algorithms.Method(alg, draw(sizes), fan))
    return sorted(found)


@st.composite
def decision_maps(draw, three_d):
    seed = draw(st.integers(0, 2**32 - 1))
    rng, pick = np.random.default_rng(seed), random.Random(seed)
    # mostly bcast and reduce, which every target takes
    roll = pick.random()
    collective = ("bcast" if roll < 0.45 else "reduce" if roll < 0.7 else
                  pick.choice(OTHER_COLLECTIVES))
    axes = [decision_map.make_axis("comm_size", decision_map.LINEAR, draw(P_VALUES)),
            decision_map.make_axis("msg_size", decision_map.LOG2, draw(M_VALUES))]
    if three_d:
        name = draw(st.one_of(HOSTILE, HOSTILE_NAME, TEXT))
        if draw(st.booleans()):
            labels = draw(st.lists(st.one_of(HOSTILE, WORD), min_size=1, max_size=4,
                                   unique=True))
            axes.append(decision_map.make_axis(name, decision_map.CATEGORY, labels))
        else:
            axes.append(decision_map.make_axis(name, decision_map.LINEAR, draw(Z_VALUES)))
    methods = draw(methods_of(collective, pick))
    shape = tuple(len(a.values) for a in axes)
    # a few regions of methods, so trees have structure, plus noise
    n = len(methods)
    best = rng.integers(0, min(n, pick.randint(1, 4)), shape)
    if pick.random() < 0.5:
        best = rng.integers(0, n, shape)
    times = rng.uniform(1, 100, shape + (n,))
    times[rng.random(times.shape) < 0.2] = np.nan
    times[np.unravel_index(np.arange(best.size), shape) + (best.ravel(),)] = 0.5
    measured = np.ones(shape, dtype=bool)
    return decision_map.DecisionMap(collective, axes, methods, times, measured, best,
                                    np.full(shape, 0.5), np.full(shape, np.nan))


OPTIONS = st.builds(
    treemod.BuildOptions, st.sampled_from(treemod.SPLITS), st.sampled_from(treemod.LEAF_RULES),
    st.one_of(st.none(), st.integers(0, 4)),
    st.one_of(st.none(), st.floats(1, 100, allow_nan=False)))


def build_tree_file(dmap, options, directory, beyond=None):
    """tree.json of the map as `collsel build` writes it, and the tree loaded back from it;
    `beyond` (an offset past the largest P, or None) adds tree.json's `beyond` when it fits."""
    t = treemod.build_tree(dmap, options)
    above = None if beyond is None else int(dmap.axes[0].values[-1]) + beyond
    document = treefile.tree_document(
        dmap, t, options, treefile.Beyond(above) if above is not None and above < INT_MAX
        else None)
    path = directory / "tree.json"
    path.write_text(treefile.dumps(document))
    return path, treefile.load(path)


# --- the points and what `collsel query` answers --------------------------------------------------

def axis_points(axis, low, high):
    if axis.kind == "category":
        return list(range(len(axis.values)))
    near = set(axis.values) | {low, high}
    for c in axis.cuts:
        near |= {c, c - 1}
    return sorted(v for v in near if low <= v <= high)


def points_of(loaded):
    bounds = [(1, INT_MAX), (0, SIZE_MAX), (-I64, I64 - 1)]
    per_axis = [axis_points(a, *b) for a, b in zip(loaded.axes, bounds)]
    if loaded.beyond is not None:     # the tree's choice at above, the defer past it
        per_axis[0] = sorted(set(per_axis[0]) | {loaded.beyond.above, loaded.beyond.above + 1})
    grids = np.meshgrid(*[np.arange(len(v)) for v in per_axis], indexing="ij")
    return [tuple(per_axis[d][i] for d, i in enumerate(idx))
            for idx in zip(*(g.ravel().tolist() for g in grids))]


def query(path, loaded, points):
    """`collsel query TREE --points -` in this process: its output lines. A category z is
    given by its label (query also reads an index, but a label that reads as a number wins)."""
    labels = loaded.axes[2].labels if len(loaded.axes) == 3 and \
        loaded.axes[2].kind == "category" else None
    text = "".join(" ".join(map(str, pt[:2] + ((labels[pt[2]],) if labels else pt[2:])))
                   + "\n" for pt in points)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()), \
            _stdin(text):
        assert cli.main(["query", str(path), "--ids", "--points", "-"]) == 0
    return out.getvalue().splitlines()


@contextlib.contextmanager
def _stdin(text):
    import sys
    saved = sys.stdin
    sys.stdin = io.StringIO(text)
    try:
        yield
    finally:
        sys.stdin = saved


def assert_same(points, got, want, what):
    assert len(got) == len(want) == len(points), what
    bad = [(pt, g, w) for pt, g, w in zip(points, got, want) if g != w]
    assert not bad, f"{what}: {len(bad)} of {len(points)} points differ, first: {bad[:3]}"


# --- what each target must refuse (predicted independently of the emitters) -----------------------

def refusal(target, loaded):
    """The reason `target` refuses this tree, or None when it must emit it; a reason ending
    in '?' is a refusal that may happen (mpich-json leaves out cuts between cells it maps to
    the same MPICH algorithm, so a cut beyond an int32 need not be written)."""
    d2, coll = len(loaded.axes) == 2, loaded.collective
    # the Open MPI targets take one third axis: a numeric ppn (test_ompi_ppn.py)
    ppn = d2 or (loaded.axes[2].name == "ppn" and loaded.axes[2].kind != "category")
    if target == "c-fast" and not d2:
        return "2-axis"
    if target == "ompi-dec-fixed" and coll not in algorithms.TUNED_ALGORITHMS:
        return "no Open MPI dec_fixed"
    if target in ("ompi-dec-fixed", "ompi-rules", "ompi-json") and not ppn:
        return "numeric 'ppn'"
    if target == "ompi-dec-fixed" and coll == "allreduce" and not d2:
        return "an allreduce tree cannot split on ppn"   # it counts nodes with an allreduce
    if target in ("blob", "c-array"):
        if any(m.algorithm > 0xFFFF or m.faninout > 0xFFFF for m in loaded.methods):
            return "out of range (u16, int, u16)"
    if target in ("ompi-rules", "ompi-json"):
        if coll not in ompi_rules_reader.COLLECTIVE_IDS:
            return "is not an Open MPI collective"
        if loaded.axes[1].cuts and loaded.axes[1].cuts[-1] > 2**63 - 1:
            return "msg_size cut"
    if target == "mpich-json":
        if not d2 and (loaded.axes[2].name != "ppn" or loaded.axes[2].kind != "linear"):
            return "MPICH's selection can test only processes per node"
        if not d2 and not all(2 <= c <= INT_MAX for c in loaded.axes[2].cuts):
            return "comm_avg_ppn<=N, N >= 1"
        message = mpich_csel.MESSAGE[coll]
        scale = min(int(max(loaded.axes[0].values)), mpich_json.EXACT_P_LIMIT) \
            if message and message[1] == mpich_csel.TIMES_P else 1
        if any(c - 1 > INT_MAX for c in loaded.axes[0].cuts) or (message and any(
                scale * c - 1 > INT_MAX for c in loaded.axes[1].cuts)):
            return "32-bit int?"
    return None


def emit_or_refuse(target, loaded, options=EmitOptions()):
    """The target's files, or None after checking it refused with the predicted reason."""
    reason = refusal(target, loaded)
    try:
        result = emit(target, [loaded], options)
    except InputError as e:
        assert reason is not None, f"{target} refused a tree it must emit: {e}"
        assert reason.rstrip("?") in str(e) and "\n" not in str(e), (reason, str(e))
        _count(target, refused=True)
        return None
    assert reason is None or reason.endswith("?"), f"{target} emitted, expected: {reason}"
    _count(target)
    return result.files


# --- the checks per target -----------------------------------------------------------------------

def write(directory, files):
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (directory / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def check_c(target, loaded, d, points, want, prefix):
    files = emit_or_refuse(target, loaded, EmitOptions(prefix=prefix))
    if files is None:
        return
    out = d / target
    write(out, files)
    (out / "driver.c").write_text(DECISION_DRIVER)
    three = len(loaded.axes) == 3
    macro = f"-DDECIDE3={prefix}_decide3" if three else f"-DDECIDE={prefix}_decide"
    gcc(macro, f"-I{out}", out / "driver.c", out / "decision.c", "-o", out / "decide")
    text = "".join(" ".join(map(str, pt)) + "\n" for pt in points)
    assert_same(points, run_program([out / "decide"], text), want, target)


def check_dec_fixed(loaded, d, points, want):
    files = emit_or_refuse("ompi-dec-fixed", loaded)
    if files is None or len(loaded.axes) == 3:    # ppn trees: test_ompi_ppn.py
        return
    out = d / "dec_fixed"
    write(out, files)
    (name,) = files
    (out / "driver.c").write_text(DEC_FIXED_DRIVER)
    gcc("-DCOLLSEL_TRACE", f'-DDEC_FIXED_FILE="{name}"',
        f"-DTREE_DECIDE=collsel_{loaded.collective}_tree_decide", f"-I{out}", out / "driver.c",
        "-o", out / "decide")
    text = "".join(f"{p} {m}\n" for p, m in points)
    assert_same(points, run_program([out / "decide"], text), want, "ompi-dec-fixed")


def check_blob(loaded, d, points, want, width, runner, array_name):
    exe, src, obj = runner
    files = emit_or_refuse("blob", loaded, EmitOptions(node_width=width))
    array = emit_or_refuse("c-array", loaded, EmitOptions(node_width=width,
                                                          array_name=array_name))
    if files is None:
        return
    out = d / "blob"
    write(out, {**files, **array})
    text = "".join(" ".join(map(str, pt)) + "\n" for pt in points)
    three = ["3"] if len(loaded.axes) == 3 else []
    assert_same(points, run_program([exe, out / "tree.bin", *three], text), want, "blob")
    # the C array holds the same bytes, compiles and decides the same through the runtime
    (c_name,) = array
    listed = bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})",
                                                  array[c_name].split("{", 1)[1]))
    assert listed == files["tree.bin"]
    name = c_name[:-2]
    gcc(f"-I{REPO / 'include'}", f"-I{out}", f'-DARRAY_FILE="{c_name}"', f"-DARRAY_NAME={name}",
        src, obj, "-o", out / "array")
    assert_same(points, run_program([out / "array", "-", *three], text), want, "c-array")


def check_rules(loaded, points, want):
    """ompi-rules read back by Open MPI's reader, and ompi-json, decide as the tree (a ppn
    tree's projections: tests/unit/sinks/emit/test_ompi_ppn.py)."""
    want3 = [tuple(map(int, w.split())) for w in want]
    files = emit_or_refuse("ompi-rules", loaded)
    if len(loaded.axes) == 3:
        emit_or_refuse("ompi-json", loaded)
        return
    coll_id = ompi_rules_reader.COLLECTIVE_IDS[loaded.collective]
    if rules_size.relation(loaded.collective) == rules_size.TIMES_P:
        # exact up to the largest measured P (at most EXACT_P_LIMIT), as the emitter's notes
        # say: a block's P-scaled thresholds cannot hold for every larger P it covers
        last = min(int(max(loaded.axes[0].values)), ompi_rules.EXACT_P_LIMIT)
        # and only calls whose P x m is at most a long, as the emitter's notes say too: Open MPI
        # reads a rules file's thresholds as longs, so none can lie above (no real call does:
        # 8 EiB)
        kept = [k for k, (p, m) in enumerate(points)
                if p <= last and p * m <= ompi_rules.MAX_LONG]
        points, want3 = [points[k] for k in kept], [want3[k] for k in kept]
    if files is not None:
        rules = ompi_rules_reader.read("rules.conf", files["rules.conf"].encode("ascii"))
        assert not rules.errors and not rules.rejected, rules.errors[:3]
        got = [rules.decide(coll_id, p, m)[:3] for p, m in points]   # at Open MPI's rule size
        assert_same(points, got, want3, "ompi-rules")
    files = emit_or_refuse("ompi-json", loaded)
    if files is not None:
        document = json.loads(files["rules.json"])
        got = [ompi_rules.json_lookup(document, loaded.collective, p,
                                      ompi_rules_reader.rule_size_of(coll_id, p, m))
               for p, m in points]
        assert_same(points, got, want3, "ompi-json")


def mpich_base():
    def entry(coll):
        return {"comm_type=intra": {"avg_msg_size=any": {f"algorithm=MPIR_{coll}_x": {}}},
                "comm_type=inter": {f"algorithm=MPIR_{coll}_inter_y": {}}}
    return {**{f"collective={c}": entry(c.capitalize()) for c in algorithms.MPICH_ALGORITHMS},
            "odd \"key\\": {"a": [1, 2.5, None]}}


def mpich_walk(node, p, m, ppn=None, total=None):
    """MPICH's first-match walk over the keys the generated subtree uses (comm_avg_ppn<=N on
    nodes of `ppn` ranks each: P <= N x P / ppn; total_msg_size = `total`)."""
    while True:
        for key, child in node.items():
            if key.startswith("algorithm="):
                return key.split("=", 1)[1]
            name, op, value = (key.partition("<=") if "<=" in key else key.partition("="))
            x = {"comm_size": p, "avg_msg_size": m, "comm_type": None, "comm_avg_ppn": ppn,
                 "total_msg_size": total}[name]
            if value == "any" or (name == "comm_type" and value == "intra") or (
                    op == "<=" and x <= int(value)):
                node = child
                break
        else:
            raise AssertionError(f"no match at P={p} m={m} in {list(node)}")


def check_mpich(loaded, points, want):
    coll = loaded.collective.capitalize()
    mapping = {loaded.collective: {m.algorithm: f"MPIR_{coll}_alg{m.algorithm}"
                                   for m in loaded.methods}}
    options = EmitOptions(mpich_base=mpich_base(), mpich_base_name="base.json",
                          mpich_map=mapping)
    files = emit_or_refuse("mpich-json", loaded, options)
    if files is None:
        return
    document = json.loads(files["mpich_selection.json"])
    assert list(document) == list(mpich_base())     # every base entry kept, in order
    assert document["odd \"key\\"] == mpich_base()["odd \"key\\"]
    tree = document[f"collective={loaded.collective}"]
    message = mpich_csel.MESSAGE[loaded.collective]
    times_p = message is not None and message[1] == mpich_csel.TIMES_P
    if times_p:     # exact up to the largest measured P, as the emitter's notes say
        last = min(int(max(loaded.axes[0].values)), mpich_json.EXACT_P_LIMIT)
        kept = [k for k, point in enumerate(points) if point[0] <= last]
        points, want = [points[k] for k in kept], [want[k] for k in kept]
    got = [mpich_walk(tree, p, m, *rest, total=p * m if times_p else m)
           for p, m, *rest in points]
    # past tree.json's `beyond`, MPICH's own decision (the base's), whatever --mpich-map says
    above = loaded.beyond.above if loaded.beyond is not None else INT_MAX
    names = [f"MPIR_{coll}_x" if point[0] > above else f"MPIR_{coll}_alg{w.split()[0]}"
             for point, w in zip(points, want)]
    if message is None:     # one method per P: one the tree picks at that P (and ppn)
        for point, name in zip(points, got):
            assert name in {n for q, n in zip(points, names)
                            if q[0] == point[0] and q[2:] == point[2:]}, (point, name)
        return
    assert_same(points, got, names, "mpich-json")


# --- the properties ------------------------------------------------------------------------------

PREFIX = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True)
# c-array names that cannot clash with the driver's own identifiers
ARRAY_NAME = st.one_of(st.none(), st.from_regex(r"tree_[A-Za-z0-9_]{0,20}", fullmatch=True))
# tree.json's `beyond`: none, or above = the largest P + this offset
BEYOND = st.one_of(st.none(), st.integers(0, 3), st.integers(0, INT_MAX))
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                      HealthCheck.too_slow,
                                                      HealthCheck.data_too_large])


def check_every_target(dmap, options, prefix, width, array_name, workdir, blob_runner,
                       beyond=None):
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        d = pathlib.Path(tmp)
        path, loaded = build_tree_file(dmap, options, d, beyond)
        points = points_of(loaded)
        want = query(path, loaded, points)
        check_c("c", loaded, d, points, want, prefix)
        check_c("c-fast", loaded, d, points, want, prefix)
        check_dec_fixed(loaded, d, points, want)
        check_blob(loaded, d, points, want, width, blob_runner, array_name)
        check_rules(loaded, points, want)
        check_mpich(loaded, points, want)


@settings(max_examples=EXAMPLES_2D, **SETTINGS)
@given(dmap=decision_maps(three_d=False), options=OPTIONS, prefix=PREFIX,
       width=st.sampled_from([None, 4]), array_name=ARRAY_NAME, beyond=BEYOND)
@pytest.mark.slow
def test_every_target_on_random_2d_trees(dmap, options, prefix, width, array_name, workdir,
                                         blob_runner, beyond):
    check_every_target(dmap, options, prefix, width, array_name, workdir, blob_runner, beyond)


@settings(max_examples=EXAMPLES_3D, **SETTINGS)
@given(dmap=decision_maps(three_d=True), options=OPTIONS, prefix=PREFIX,
       width=st.sampled_from([None, 4]), array_name=ARRAY_NAME, beyond=BEYOND)
def test_every_target_on_random_3d_trees(dmap, options, prefix, width, array_name, workdir,
                                         blob_runner, beyond):
    check_every_target(dmap, options, prefix, width, array_name, workdir, blob_runner, beyond)


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_escaped_text_cannot_leave_a_comment(value):
    from collsel.sinks.emit import text
    c = text.c_comment(value)
    assert all(0x20 <= ord(ch) < 0x7f for ch in c), c
    assert "*/" not in c and "/*" not in c and "??" not in c
    line = text.line_comment(value)
    assert all(0x20 <= ord(ch) < 0x7f for ch in line)
    # plain text stays as it is
    if all(0x20 <= ord(ch) < 0x7f for ch in value) and not re.search(r"[\\*?]", value):
        assert c == value and line == value
    assert json.loads(text.json_string(value)) == value
