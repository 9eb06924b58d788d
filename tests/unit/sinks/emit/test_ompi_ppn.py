"""The third axis ppn in the Open MPI targets (sinks.emit.ompi_ppn, issue 18 item 4).

- ompi-dec-fixed of a ppn tree compiles (gcc -std=c99 -Wall -Wextra -Werror -pedantic) against
  stand-ins of the Open MPI 4.1 internals it uses (attribute cache, group and proc locality, the
  communicator's allreduce); a driver plays every rank of a communicator mapped over nodes, so
  the node count, the ppn every rank computes (even and uneven mappings), the decisions (equal to
  `collsel query ... --z PPN`), the error path and the caching (one allreduce per communicator
  over any number of bcast and reduce calls, both functions in one source file as splice.py
  puts them) are checked; a copy with the caching removed must fail the check. With the patched
  build present it also compiles inside Open MPI's real tree (mpi-builds/ompi-patched/component.py).
- ompi-rules writes the projection and ompi-json the comm_rank_distribution blocks; both are
  compared with an independent computation from `collsel query` at every ppn value, on the
  hand-made table tests/data/ppn-test.csv and on random maps with three ppn values.
- Other third axes are refused by all three targets; check-rules --table gives the penalty of
  the projected file, checked against the table's own times.
"""
import contextlib
import csv
import io
import json
import os
import pathlib
import subprocess
from collections import Counter

import numpy as np
import pytest

from collsel import cli
from collsel.core.maps import decision_map
from collsel.core.mpi import algorithms
from collsel.core.trees import tree as treemod, treefile
from collsel.errors import InputError
from collsel.sinks.emit import ompi_rules, ompi_rules_reader
from collsel.sinks.emit.targets import EmitOptions, emit

REPO = pathlib.Path(__file__).resolve().parents[4]
TABLE = REPO / "tests" / "data" / "ppn-test.csv"
PATCHED = REPO / "build" / "ompi-patched"
CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O0", "-pthread"]


def run(*args, stdin=None):
    """`collsel ARGS` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    saved = None
    if stdin is not None:
        import sys
        saved, sys.stdin = sys.stdin, io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main([str(a) for a in args])
            except SystemExit as e:
                code = e.code
    finally:
        if saved is not None:
            import sys
            sys.stdin = saved
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    """{collective: tree.json} built from the hand-made ppn table with --z ppn."""
    d = tmp_path_factory.mktemp("ppn_trees")
    out = {}
    for c in ("bcast", "reduce"):
        code, _, err = run("build", TABLE, "--collective", c, "--z", "ppn", "--out", d / c)
        assert code == 0, err
        out[c] = d / c / "tree.json"
    return out


def query(tree, points):
    """`collsel query TREE --points -` on (P, m, ppn) points: [(alg, seg, fan)]."""
    code, out, err = run("query", tree, "--ids", "--points", "-",
                         stdin="".join(f"{p} {m} {z}\n" for p, m, z in points))
    assert code == 0, err
    return [tuple(map(int, line.split())) for line in out.splitlines()]


# --- ompi-dec-fixed against stand-ins of Open MPI's internals ------------------------------------

# What the generated code includes, reduced to what it uses (names and signatures as in Open MPI
# 4.1.4's ompi/attribute/attribute.h, ompi/group/group.h, ompi/proc/proc.h).
MOCK_HEADERS = {
    "ompi/attribute/attribute.h": r"""
#ifndef MOCK_ATTRIBUTE_H
#define MOCK_ATTRIBUTE_H
#include <stdbool.h>
typedef int (MPI_Comm_internal_copy_attr_function)(MPI_Comm, int, void *, void *, void *, int *,
                                                   MPI_Comm);
typedef int (MPI_Comm_delete_attr_function)(MPI_Comm, int, void *, void *);
typedef union {
    MPI_Comm_delete_attr_function *attr_communicator_delete_fn;
    MPI_Comm_internal_copy_attr_function *attr_communicator_copy_fn;
} ompi_attribute_fn_ptr_union_t;
typedef enum { COMM_ATTR = 1, TYPE_ATTR, WIN_ATTR } ompi_attribute_type_t;
int ompi_attr_create_keyval(ompi_attribute_type_t type, ompi_attribute_fn_ptr_union_t copy_fn,
                            ompi_attribute_fn_ptr_union_t delete_fn, int *key,
                            void *extra_state, int flags, void *bindings_extra_state);
int ompi_attr_get_c(opal_hash_table_t *attr_hash, int key, void **attribute, int *flag);
int ompi_attr_set_c(ompi_attribute_type_t type, void *object, opal_hash_table_t **attr_hash,
                    int key, void *attribute, bool predefined);
int mock_null_delete_fn(MPI_Comm comm, int key, void *attribute, void *extra_state);
#define MPI_COMM_NULL_DELETE_FN mock_null_delete_fn
#endif
""",
    "ompi/group/group.h": r"""
#ifndef MOCK_GROUP_H
#define MOCK_GROUP_H
typedef struct { int grp_proc_count; ompi_proc_t *procs; } ompi_group_t;
#define OMPI_GROUP_SPARSE 0
ompi_proc_t *ompi_group_get_proc_ptr_raw(ompi_group_t *group, int rank);
#endif
""",
    "ompi/proc/proc.h": r"""
#ifndef MOCK_PROC_H
#define MOCK_PROC_H
int ompi_proc_is_sentinel(ompi_proc_t *proc);
#endif
""",
}

# The driver: stand-ins first (the rest of coll_tuned_decision_fixed.c's context), then the
# generated bcast and reduce files in one translation unit, as splice.py puts them.
#   driver NODE_OF_RANK_0 NODE_OF_RANK_1 ... < lines "bcast M" / "reduce M"
# Phase 1: every rank computes ppn while the allreduce fails: the error must come back and
# nothing be cached. Phase 2: every rank computes ppn with a working allreduce (the sum of the
# flags the ranks gave in phase 1). Phase 3: rank 0 makes the given calls on two communicators;
# every decision is printed, then how many allreduces and keyvals that took.
DRIVER = r"""
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define OMPI_SUCCESS 0
#define MPI_SUCCESS 0
#define MPI_KEYVAL_INVALID (-1)
#define MOCK_FAILURE (-99)
struct ompi_datatype_t { size_t size; };
struct ompi_op_t { int commute; };
typedef struct ompi_datatype_t *MPI_Datatype;
typedef struct ompi_op_t *MPI_Op;
typedef struct mca_coll_base_module_t mca_coll_base_module_t;
struct ompi_communicator_t;
typedef struct ompi_communicator_t *MPI_Comm;
typedef struct { int n; int keys[4]; void *values[4]; } opal_hash_table_t;
typedef struct { struct { unsigned proc_flags; } super; int sentinel; } ompi_proc_t;
#define OPAL_PROC_ON_LOCAL_NODE(flags) (((flags) & 1u) != 0)
typedef int (*mock_allreduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op,
                                 struct ompi_communicator_t *, mca_coll_base_module_t *);
typedef struct {
    mock_allreduce_fn coll_allreduce;
    mca_coll_base_module_t *coll_allreduce_module;
} mca_coll_base_comm_coll_t;
static struct ompi_datatype_t mock_int = {4}, mock_byte = {1};
static struct ompi_op_t mock_sum = {1};
#define MPI_IN_PLACE ((void *) 1)
#define MPI_INT (&mock_int)
#define MPI_SUM (&mock_sum)
#include "ompi/attribute/attribute.h"
#include "ompi/group/group.h"
#include "ompi/proc/proc.h"
struct ompi_communicator_t {
    int rank, size;
    opal_hash_table_t *c_keyhash;
    ompi_group_t *c_local_group;
    mca_coll_base_comm_coll_t *c_coll;
};

static int last_alg = -1, last_seg = -1, last_fan = -1;
int ompi_datatype_type_size(struct ompi_datatype_t *t, size_t *s) { *s = t->size; return 0; }
int ompi_comm_size(struct ompi_communicator_t *c) { return c->size; }
int ompi_comm_rank(struct ompi_communicator_t *c) { return c->rank; }
int ompi_op_is_commute(struct ompi_op_t *o) { return o->commute; }
static int record(int a, int f, int s) { last_alg = a; last_fan = f; last_seg = s; return 0; }
int ompi_coll_tuned_bcast_intra_do_this(void *b, int n, struct ompi_datatype_t *t, int r,
    struct ompi_communicator_t *c, mca_coll_base_module_t *m, int a, int f, int s)
{ (void)b; (void)n; (void)t; (void)r; (void)c; (void)m; return record(a, f, s); }
int ompi_coll_tuned_reduce_intra_do_this(const void *sb, void *rb, int n,
    struct ompi_datatype_t *t, struct ompi_op_t *o, int r, struct ompi_communicator_t *c,
    mca_coll_base_module_t *m, int a, int f, int s, int q)
{ (void)sb; (void)rb; (void)n; (void)t; (void)o; (void)r; (void)c; (void)m; (void)q;
  return record(a, f, s); }
int collsel_ompi_original_bcast_intra_dec_fixed(void *b, int n, struct ompi_datatype_t *t,
    int r, struct ompi_communicator_t *c, mca_coll_base_module_t *m)
{ (void)b; (void)n; (void)t; (void)r; (void)c; (void)m; return record(0, 0, 0); }
int collsel_ompi_original_reduce_intra_dec_fixed(const void *sb, void *rb, int n,
    struct ompi_datatype_t *t, struct ompi_op_t *o, int r, struct ompi_communicator_t *c,
    mca_coll_base_module_t *m)
{ (void)sb; (void)rb; (void)n; (void)t; (void)o; (void)r; (void)c; (void)m;
  return record(0, 0, 0); }

/* locality: rank i of a communicator is on node node_of[i] */
static int node_of[64], n_ranks;
ompi_proc_t *ompi_group_get_proc_ptr_raw(ompi_group_t *g, int i) { return &g->procs[i]; }
int ompi_proc_is_sentinel(ompi_proc_t *p) { return p->sentinel; }

/* the attribute cache */
static int keyvals_created, copy_flag = -1;
int ompi_attr_create_keyval(ompi_attribute_type_t type, ompi_attribute_fn_ptr_union_t copy_fn,
                            ompi_attribute_fn_ptr_union_t delete_fn, int *key,
                            void *extra_state, int flags, void *bindings_extra_state)
{
    int flag = 1;
    (void)delete_fn; (void)extra_state; (void)flags; (void)bindings_extra_state;
    if (type != COMM_ATTR) return MOCK_FAILURE;
    copy_fn.attr_communicator_copy_fn(NULL, 7, NULL, NULL, NULL, &flag, NULL);
    copy_flag = flag;
    keyvals_created++;
    *key = 7;
    return OMPI_SUCCESS;
}
int ompi_attr_get_c(opal_hash_table_t *h, int key, void **attribute, int *flag)
{
    int i;
    *flag = 0;
    for (i = 0; h && i < h->n; i++) {
        if (h->keys[i] == key) { *attribute = h->values[i]; *flag = 1; }
    }
    return OMPI_SUCCESS;
}
int ompi_attr_set_c(ompi_attribute_type_t type, void *object, opal_hash_table_t **h, int key,
                    void *attribute, bool predefined)
{
    (void)object; (void)predefined;
    if (type != COMM_ATTR || key != 7) return MOCK_FAILURE;
    if (!*h) *h = calloc(1, sizeof(**h));
    (*h)->keys[(*h)->n] = key;
    (*h)->values[(*h)->n++] = attribute;
    return OMPI_SUCCESS;
}
int mock_null_delete_fn(MPI_Comm comm, int key, void *attribute, void *extra_state)
{ (void)comm; (void)key; (void)attribute; (void)extra_state; return OMPI_SUCCESS; }
/* what a mutation swaps in for ompi_attr_set_c: caches nothing */
int collsel_mock_forget(ompi_attribute_type_t type, void *object, opal_hash_table_t **h,
                        int key, void *attribute, bool predefined)
{ (void)type; (void)object; (void)h; (void)key; (void)attribute; (void)predefined; return 0; }

/* the communicator's allreduce: phase 1 records each rank's flag and fails */
static int phase, flag_of[64], sum_of_flags, allreduce_calls;
static int mock_allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
                          struct ompi_communicator_t *c, mca_coll_base_module_t *m)
{
    (void)m;
    allreduce_calls++;
    if (s != MPI_IN_PLACE || n != 1 || t != MPI_INT || op != MPI_SUM) abort();
    if (phase == 1) { flag_of[c->rank] = *(int *)r; return MOCK_FAILURE; }
    *(int *)r = sum_of_flags;
    return OMPI_SUCCESS;
}
static mca_coll_base_comm_coll_t mock_coll = {mock_allreduce, NULL};

/* rank's view of a communicator over node_of[]: other ranks on its node are local; a remote
 * one of odd rank is a not-yet-instantiated process (a sentinel) */
static struct ompi_communicator_t *make_comm(int rank)
{
    struct ompi_communicator_t *c = calloc(1, sizeof(*c));
    ompi_group_t *g = calloc(1, sizeof(*g));
    int i;
    g->grp_proc_count = n_ranks;
    g->procs = calloc((size_t)n_ranks, sizeof(ompi_proc_t));
    for (i = 0; i < n_ranks; i++) {
        int local = node_of[i] == node_of[rank];
        g->procs[i].super.proc_flags = local ? 1u : 0u;
        g->procs[i].sentinel = !local && i % 2 == 1;
    }
    c->rank = rank;
    c->size = n_ranks;
    c->c_local_group = g;
    c->c_coll = &mock_coll;
    return c;
}

#include "bcast.c"
#include "reduce.c"

int main(int argc, char **argv)
{
    int r, i, flag;
    int64_t ppn;
    char coll[16];
    unsigned long m;
    struct ompi_communicator_t *comm[2];
    if (argc == 2 && strcmp(argv[1], "points") == 0) {   /* "P M Z" lines: bcast's tree */
        long long p, z;
        unsigned long long msg;
        int seg, fan, alg;
        while (scanf("%lld %llu %lld", &p, &msg, &z) == 3) {
            alg = collsel_bcast_tree_decide((int)p, (size_t)msg, (int64_t)z, &seg, &fan);
            printf("%d %d %d\n", alg, seg, fan);
        }
        return 0;
    }
    n_ranks = argc - 1;
    for (r = 0; r < n_ranks; r++) node_of[r] = atoi(argv[r + 1]);
    phase = 1;
    for (r = 0; r < n_ranks; r++) {
        struct ompi_communicator_t *c = make_comm(r);
        void *cached;
        int rc = collsel_comm_ppn(c, &ppn);
        ompi_attr_get_c(c->c_keyhash, 7, &cached, &flag);
        printf("failed rank=%d rc=%d cached=%d\n", r, rc, flag);
    }
    phase = 2;
    for (r = 0; r < n_ranks; r++) sum_of_flags += flag_of[r];
    for (r = 0; r < n_ranks; r++) {
        int rc = collsel_comm_ppn(make_comm(r), &ppn);
        printf("ppn rank=%d rc=%d nodes=%d ppn=%lld\n", r, rc, sum_of_flags, (long long)ppn);
    }
    allreduce_calls = 0;
    comm[0] = make_comm(0);
    comm[1] = make_comm(0);
    for (i = 0; scanf("%15s %lu", coll, &m) == 2; i++) {
        struct ompi_communicator_t *c = comm[i % 2];
        if (strcmp(coll, "bcast") == 0) {
            ompi_coll_tuned_bcast_intra_dec_fixed(NULL, (int)m, &mock_byte, 0, c, NULL);
        } else {
            ompi_coll_tuned_reduce_intra_dec_fixed(NULL, NULL, (int)(m / 4), &mock_int,
                                                   &mock_sum, 0, c, NULL);
        }
        printf("decision %s %lu %d %d %d\n", coll, m, last_alg, last_seg, last_fan);
    }
    printf("calls=%d allreduces=%d keyvals=%d copy_flag=%d\n", i, allreduce_calls,
           keyvals_created, copy_flag);
    return 0;
}
"""


def dec_fixed_sources(trees, directory):
    for c, tree in trees.items():
        code, _, err = run("emit", "--target", "ompi-dec-fixed", tree, "--out",
                           directory / f"{c}.c")
        assert code == 0, err
    return {c: (directory / f"{c}.c").read_text() for c in trees}


def compile_driver(directory, sources):
    for path, text in MOCK_HEADERS.items():
        (directory / path).parent.mkdir(parents=True, exist_ok=True)
        (directory / path).write_text(text)
    for c, text in sources.items():
        (directory / f"{c}.c").write_text(text)
    (directory / "driver.c").write_text(DRIVER)
    r = subprocess.run(["gcc", *CFLAGS, "-DCOLLSEL_TRACE", f"-I{directory}",
                        str(directory / "driver.c"), "-o", str(directory / "driver")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    return directory / "driver"


SIZES = (4, 64, 256, 260, 1024, 16384, 262144)
MAPPINGS = {            # rank -> node; P, nodes, ppn = P // nodes
    "2 ranks on one node": (0, 0),
    "2 nodes, 1 each": (0, 1),
    "3 ranks, 2 + 1 (uneven)": (0, 0, 1),
    "4 ranks, 1 + 3 (uneven)": (0, 1, 1, 1),
    "4 ranks, 2 + 2, interleaved": (0, 1, 0, 1),
    "6 ranks, 3 nodes of 2": (0, 0, 1, 1, 2, 2),
    "6 ranks, one per node": (0, 1, 2, 3, 4, 5),
}


def check_driver(driver, trees, nodes):
    """Run the driver on one mapping; every check of the module docstring. Returns the ppn."""
    calls = [(c, m) for m in SIZES for c in ("bcast", "reduce")] * 3
    r = subprocess.run([str(driver), *map(str, nodes)], capture_output=True, text=True,
                       input="".join(f"{c} {m}\n" for c, m in calls), timeout=60,
                       env=dict(os.environ, COLLSEL_TRACE="1"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    p, n_nodes = len(nodes), len(set(nodes))
    want_ppn = p // n_nodes
    # a failing allreduce: its error comes back and nothing is cached
    assert [ln for ln in lines if ln.startswith("failed")] == \
        [f"failed rank={k} rc=-99 cached=0" for k in range(p)]
    # every rank counts the same nodes and gets the same ppn, uneven mappings too
    got = [ln for ln in lines if ln.startswith("ppn")]
    assert got == [f"ppn rank={k} rc=0 nodes={n_nodes} ppn={want_ppn}" for k in range(p)], \
        f"ranks disagree or miscount: {got}"
    # the ppn trace line: once per rank and communicator (phase 2: P, phase 3: 2)
    computed = r.stderr.count("collsel-trace-ppn ")
    assert computed == p + 2, f"ppn computed {computed} times, not once per communicator"
    decisions = [ln.split()[1:] for ln in lines if ln.startswith("decision")]
    assert [(c, int(m)) for c, m, *_ in decisions] == calls
    for c in trees:
        got = [tuple(map(int, d[2:])) for d in decisions if d[0] == c]
        ms = [int(d[1]) for d in decisions if d[0] == c]
        assert got == query(trees[c], [(p, m, want_ppn) for m in ms]), (c, nodes)
    # once per communicator: 2 communicators, 42 calls over both collectives, 2 allreduces
    assert lines[-1] == f"calls={len(calls)} allreduces=2 keyvals=1 copy_flag=0", lines[-1]
    return want_ppn


@pytest.fixture(scope="module")
def driver(trees, tmp_path_factory):
    d = tmp_path_factory.mktemp("dec_fixed_ppn")
    return compile_driver(d, dec_fixed_sources(trees, d))


@pytest.mark.parametrize("mapping", sorted(MAPPINGS))
def test_dec_fixed_counts_nodes_once_per_communicator_and_decides_as_query(driver, trees,
                                                                           mapping):
    check_driver(driver, trees, MAPPINGS[mapping])


def test_the_mappings_reach_both_ppn_values_and_different_decisions(trees):
    """The checks above would prove little if ppn did not change the decisions there."""
    ppns = {len(n) // len(set(n)) for n in MAPPINGS.values()}
    assert {1, 2} <= ppns
    for c, tree in trees.items():
        by_ppn = [query(tree, [(2, m, z) for m in SIZES]) for z in (1, 2)]
        assert sum(a != b for a, b in zip(*by_ppn)) >= 4, (c, by_ppn)


def test_caching_check_can_fail(trees, tmp_path):
    """With ompi_attr_set_c swapped for a function that caches nothing, every call runs the
    allreduce again: the check above must catch it."""
    sources = dec_fixed_sources(trees, tmp_path)
    assert all("return ompi_attr_set_c(COMM_ATTR" in s for s in sources.values())
    mutated = {c: s.replace("return ompi_attr_set_c(", "return collsel_mock_forget(")
               for c, s in sources.items()}
    driver = compile_driver(tmp_path, mutated)
    with pytest.raises(AssertionError, match="ppn computed 44 times, not once per"):
        check_driver(driver, trees, MAPPINGS["2 nodes, 1 each"])


def test_a_local_count_would_differ_between_ranks(trees, tmp_path):
    """Why the node count is collective: a copy that takes each rank's own local count as ppn
    (no allreduce) gives the ranks of an uneven mapping different ppn, which the check sees."""
    sources = dec_fixed_sources(trees, tmp_path)
    old = "    *ppn = ompi_comm_size(comm) / (nodes > 0 ? nodes : 1);\n"
    local = ("    { int i; *ppn = 0; for (i = 0; i < ompi_comm_size(comm); i++) *ppn += "
             "OPAL_PROC_ON_LOCAL_NODE(comm->c_local_group->procs[i].super.proc_flags); }\n")
    assert all(old in s for s in sources.values())
    driver = compile_driver(tmp_path, {c: s.replace(old, local) for c, s in sources.items()})
    with pytest.raises(AssertionError, match="ranks disagree or miscount"):
        check_driver(driver, trees, MAPPINGS["3 ranks, 2 + 1 (uneven)"])


@pytest.mark.skipif(not (PATCHED / ".installed").exists(),
                    reason="build/ompi-patched is not built (make ompi-patched)")
def test_dec_fixed_compiles_in_open_mpis_own_tree(trees, tmp_path):
    """The same files spliced into Open MPI 4.1.4's coll_tuned_decision_fixed.c, compiled with
    the build's own command (-Wall -Wextra added) and linked into mca_coll_tuned.so."""
    dec_fixed_sources(trees, tmp_path)
    r = subprocess.run(["python3", str(REPO / "mpi-builds/ompi-patched/component.py"),
                        str(PATCHED), str(tmp_path / "component"),
                        f"ompi_coll_tuned_bcast_intra_dec_fixed={tmp_path / 'bcast.c'}",
                        f"ompi_coll_tuned_reduce_intra_dec_fixed={tmp_path / 'reduce.c'}"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "component" / "components" / "mca_coll_tuned.so").exists()
    spliced = (tmp_path / "component" / "coll_tuned_decision_fixed.c").read_text()
    assert spliced.count("#define COLLSEL_COMM_PPN_V1") == 2      # one copy compiled
    assert "collsel_ompi_original_bcast_intra_dec_fixed" in spliced


@pytest.mark.parametrize("seed", range(3))
def test_dec_fixed_tree_function_at_every_cut_and_extreme(seed, trees, tmp_path):
    """The generated ppn ladder at every grid value, cut, cut - 1 and the extremes of its C
    types (ppn as int64_t, so cuts near -2^63 and 2^63 - 1 too), equal to collsel query."""
    i64 = 2**63
    tree = random_ppn_tree(seed, tmp_path, (-i64, -5, 1, 2, 3, 40, i64 - 2, i64 - 1),
                           (2, 3, 7, 2**31 - 1), (0, 1, 4096, 2**64 - 1))
    sources = dec_fixed_sources({"bcast": tree, "reduce": trees["reduce"]}, tmp_path)
    driver = compile_driver(tmp_path, sources)
    loaded = treefile.load(tree)
    bounds = [(1, 2**31 - 1), (0, 2**64 - 1), (-i64, i64 - 1)]
    per_axis = []
    for axis, (low, high) in zip(loaded.axes, bounds):
        near = set(axis.values) | {low, high} | {c for c in axis.cuts} | {c - 1 for c in axis.cuts}
        per_axis.append(sorted(v for v in near if low <= v <= high))
    points = [(p, m, z) for p in per_axis[0] for m in per_axis[1] for z in per_axis[2]]
    r = subprocess.run([str(driver), "points"], capture_output=True, text=True, timeout=60,
                       input="".join(f"{p} {m} {z}\n" for p, m, z in points))
    assert r.returncode == 0, r.stderr
    got = [tuple(map(int, line.split())) for line in r.stdout.splitlines()]
    assert got == query(tree, points)
    assert len(set(got)) >= 2 and len(points) > 300


def test_2d_dec_fixed_is_unchanged(tmp_path):
    """A 2-axis tree gets no ppn code at all."""
    table = tmp_path / "t.csv"
    with open(TABLE) as f:
        rows = [ln for ln in f if not ln.startswith("#")]
    head = rows[0].strip().split(",")
    keep = [",".join(r.strip().split(",")[:-1]) for r in rows[1:]
            if r.strip().split(",")[head.index("ppn")] == "1"]
    table.write_text(",".join(head[:-1]) + "\n" + "\n".join(keep) + "\n")
    code, _, err = run("build", table, "--collective", "bcast", "--out", tmp_path / "b")
    assert code == 0, err
    code, _, err = run("emit", "--target", "ompi-dec-fixed", tmp_path / "b" / "tree.json",
                       "--out", tmp_path / "b.c")
    assert code == 0, err
    text = (tmp_path / "b.c").read_text()
    assert "ppn" not in text and "int64_t z" not in text and "collsel_comm_ppn" not in text


# --- refusals ------------------------------------------------------------------------------------

def _tree_with_z(tmp_path, name, values):
    rows = ["collective,comm_size,msg_size,algorithm,segsize,time_us," + name]
    for z in values:
        for p in (2, 4):
            for m in (1, 1024):
                for a in (1, 6):
                    rows.append(f"bcast,{p},{m},{a},0,{1 + a * (z == values[0])},{z}")
    (tmp_path / "z.csv").write_text("\n".join(rows) + "\n")
    code, _, err = run("build", tmp_path / "z.csv", "--collective", "bcast", "--z", name,
                       "--out", tmp_path / "zt")
    assert code == 0, err
    return tmp_path / "zt" / "tree.json"


@pytest.mark.parametrize("name, values, what", [
    ("nodes", [1, 2], "a third axis ('nodes')"),
    ("ppn", ["bynode", "byslot"], "a category third axis 'ppn'"),
])
@pytest.mark.parametrize("target", ["ompi-dec-fixed", "ompi-rules", "ompi-json"])
def test_other_third_axes_are_refused(tmp_path, name, values, what, target):
    tree = _tree_with_z(tmp_path, name, values)
    code, out, err = run("emit", "--target", target, tree, "--out", tmp_path / "out")
    assert code == 2 and len(err.splitlines()) == 1, (code, err)
    assert what in err and "numeric 'ppn'" in err, err
    assert not (tmp_path / "out").exists()


# --- rules files: projection and comm_rank_distribution -----------------------------------------

def projection_by_query(tree_path, loaded, region=lambda p, z: 1 <= z <= p):
    """{(P, m): (alg, seg, fan)} the projection rule gives, computed from `collsel query` at
    every grid point: the method picked at the most ppn values the region allows (none: every
    feasible, else every one), ties to the largest such ppn."""
    p_values, m_values, z_values = (a.values for a in loaded.axes)
    pts = [(p, m, z) for p in p_values for m in m_values for z in z_values]
    answer = dict(zip(pts, query(tree_path, pts)))
    out = {}
    for p in p_values:
        zs = ([z for z in z_values if region(p, z) and 1 <= z <= p]
              or [z for z in z_values if 1 <= z <= p] or list(z_values))
        for m in m_values:
            votes = Counter(answer[(p, m, z)] for z in zs)
            top = max(votes.values())
            out[(p, m)] = next(answer[(p, m, z)] for z in sorted(zs, reverse=True)
                               if votes[answer[(p, m, z)]] == top)
    return out, answer


def _emit(target, tree_path, tmp_path):
    code, out, err = run("emit", "--target", target, tree_path, "--out", tmp_path / target)
    assert code == 0, err
    return (tmp_path / target).read_text(), out


def check_rules_of_tree(tree_path, tmp_path):
    loaded = treefile.load(tree_path)
    coll_id = ompi_rules_reader.COLLECTIVE_IDS[loaded.collective]
    want, answer = projection_by_query(tree_path, loaded)
    feasible = [k for k in answer if 1 <= k[2] <= k[0]]
    # classic: reads clean, decides the projection at every (P, m), and counts what it loses
    conf, notes = _emit("ompi-rules", tree_path, tmp_path)
    rules = ompi_rules_reader.read("rules.conf", conf.encode("ascii"))
    assert not rules.errors
    for (p, m), w in want.items():
        assert rules.lookup(coll_id, p, m)[:3] == w, (p, m)
    lost = sum(want[k[:2]] != answer[k] for k in feasible)
    assert f"decides differently from the tree on {lost} of {len(feasible)} (P, m, ppn) grid" \
        in notes, notes
    # JSON: exact where ppn = P or 1, the projection over 2 <= ppn <= P/2 elsewhere
    text, notes = _emit("ompi-json", tree_path, tmp_path)
    document = json.loads(text)
    rest, _ = projection_by_query(tree_path, loaded, lambda p, z: 2 <= z and 2 * z <= p)
    lost_json = 0
    for (p, m, z) in feasible:
        got = ompi_rules.json_lookup(document, loaded.collective, p, m, z)
        if z == p or z == 1:
            assert got == answer[(p, m, z)], (p, m, z)
        else:
            assert got == rest[(p, m)], (p, m, z)
            lost_json += got != answer[(p, m, z)]
    assert f"differently from the tree on {lost_json} of {len(feasible)}" in notes, notes
    return lost, lost_json, len(feasible)


def test_rules_files_of_the_ppn_table(trees, tmp_path):
    for c, tree in trees.items():
        lost, lost_json, total = check_rules_of_tree(tree, tmp_path)
        # on this table ppn changes every decision: the classic file loses half the points,
        # the JSON file none (ppn 1 and 2 are one-per-node, single-node or the only ppn of
        # its range)
        assert (lost, lost_json, total) == (20, 0, 40), (c, lost, lost_json, total)


def random_ppn_tree(seed, directory, ppn_values=(1, 2, 3), p_values=(2, 3, 4, 6, 8, 12),
                    m_values=(1, 64, 1024, 8192, 65536)):
    """tree.json of a random map over P 2..12, 5 sizes and ppn 1, 2, 3 (by default)."""
    rng = np.random.default_rng(seed)
    axes = [decision_map.make_axis("comm_size", decision_map.LINEAR, list(p_values)),
            decision_map.make_axis("msg_size", decision_map.LOG2, list(m_values)),
            decision_map.make_axis("ppn", decision_map.LINEAR, list(ppn_values))]
    methods = [algorithms.Method(a, s, 0) for a, s in ((1, 0), (3, 8192), (6, 0), (7, 0))]
    shape = tuple(len(a.values) for a in axes)
    best = rng.integers(0, len(methods), shape)
    times = rng.uniform(2, 100, shape + (len(methods),))
    np.put_along_axis(times, best[..., None], 1.0, axis=-1)
    dmap = decision_map.DecisionMap("bcast", axes, methods, times, np.ones(shape, bool), best,
                                    np.ones(shape), np.full(shape, np.nan))
    options = treemod.BuildOptions("balanced", "majority", None, None)
    document = treefile.tree_document(dmap, treemod.build_tree(dmap, options), options)
    path = directory / f"tree{seed}.json"
    path.write_text(treefile.dumps(document))
    return path


@pytest.mark.parametrize("seed", range(4))
def test_rules_files_of_random_ppn_trees(seed, tmp_path):
    lost, lost_json, total = check_rules_of_tree(random_ppn_tree(seed, tmp_path), tmp_path)
    assert lost_json < lost <= total      # random decisions: both lose, JSON less


def test_rules_files_of_a_ppn_tree_with_extreme_values(tmp_path):
    """ppn values no communicator has (below 1, near 2^63) and P near 2^31: no overflow, the
    same agreement."""
    i64 = 2**63
    tree = random_ppn_tree(7, tmp_path, (-i64, 0, 1, 2, 3, 2**62 + 1, i64 - 1),
                           (2, 3, 6, 2**31 - 2, 2**31 - 1))
    lost, lost_json, total = check_rules_of_tree(tree, tmp_path)
    assert lost_json < lost <= total


def test_projection_ties_go_to_the_largest_ppn(trees):
    """On the table every (P, m) is a 1-1 tie between ppn 1 and 2: the file takes ppn 2's."""
    loaded = treefile.load(trees["bcast"])
    projected = ompi_rules.cell_decisions(loaded)
    at_2 = loaded.tree.method_grid(tuple(len(a.values) for a in loaded.axes))[:, :, 1]
    assert (projected == at_2).all()


def test_check_rules_table_penalty_equals_the_tables_own_times(trees, tmp_path):
    """check-rules --table --z ppn on the projected file: the mean penalty per ppn, computed
    here from the CSV rows and the file's lookups."""
    conf, _ = _emit("ompi-rules", trees["bcast"], tmp_path)
    rules = ompi_rules_reader.read("rules.conf", conf.encode("ascii"))
    with open(TABLE) as f:
        rows = list(csv.DictReader(ln for ln in f if not ln.startswith("#")))
    cells = {}
    for r in rows:
        if r["collective"] == "bcast":
            key = (int(r["comm_size"]), int(r["msg_size"]), int(r["ppn"]))
            cells.setdefault(key, {})[(int(r["algorithm"]), int(r["segsize"]), 0)] = \
                float(r["time_us"])
    pen = {1: [], 2: []}
    for (p, m, z), t in cells.items():
        pen[z].append(100 * (t[tuple(rules.lookup(7, p, m)[:3])] / min(t.values()) - 1))
    code, out, err = run("check-rules", tmp_path / "ompi-rules", "--table", TABLE,
                         "--collective", "bcast", "--z", "ppn")
    assert code == 0, err
    for z in (1, 2):
        assert f"this file at ppn={z}: penalty mean {np.mean(pen[z]):.2f}%" in out, out
    both = pen[1] + pen[2]
    assert f"this file: penalty mean {np.mean(both):.2f}%, median {np.median(both):.2f}%" in out
    assert np.mean(pen[1]) > 10 and np.mean(pen[2]) == 0      # the lost half is ppn 1's


def random_ppn_table(seed, path):
    """A CSV table (invented times) over P 2..12, 4 sizes and ppn 1, 2, 3, best methods random."""
    rng = np.random.default_rng(seed)
    methods = [(1, 0), (3, 8192), (6, 0), (7, 0)]
    rows = ["collective,comm_size,msg_size,algorithm,segsize,time_us,ppn"]
    for p in (2, 3, 4, 6, 8, 12):
        for m in (1, 1024, 8192, 65536):
            for z in (1, 2, 3):
                for (alg, seg), t in zip(methods, rng.uniform(1, 3, len(methods))):
                    rows.append(f"bcast,{p},{m},{alg},{seg},{t:.4f},{z}")
    path.write_text("\n".join(rows) + "\n")
    return path


def penalties_by_hand(table, decide):
    """{ppn: [penalty % per cell]} of `decide(P, m, ppn)` on the CSV's own rows."""
    with open(table) as f:
        rows = list(csv.DictReader(ln for ln in f if not ln.startswith("#")))
    cells = {}
    for r in rows:
        if r["collective"] == "bcast":
            key = (int(r["comm_size"]), int(r["msg_size"]), int(r["ppn"]))
            cells.setdefault(key, {})[(int(r["algorithm"]), int(r["segsize"]), 0)] = \
                float(r["time_us"])
    out = {}
    for (p, m, z), t in cells.items():
        out.setdefault(z, []).append(100 * (t[tuple(decide(p, m, z))] / min(t.values()) - 1))
    return out


@pytest.mark.parametrize("seed", range(2))
def test_check_rules_gives_the_time_both_formats_lose(seed, tmp_path):
    """On a table with ppn 1, 2, 3 and random best methods: check-rules --table --z ppn on the
    classic file and on the JSON file, each equal to the penalty computed here from the CSV
    rows and the file's own lookup; the JSON file (exact at ppn 1 and ppn = P) loses less."""
    table = random_ppn_table(seed, tmp_path / "t.csv")
    code, _, err = run("build", table, "--collective", "bcast", "--z", "ppn", "--out",
                       tmp_path / "tree")
    assert code == 0, err
    tree = tmp_path / "tree" / "tree.json"
    conf, _ = _emit("ompi-rules", tree, tmp_path)
    text, _ = _emit("ompi-json", tree, tmp_path)
    classic = ompi_rules_reader.read("rules.conf", conf.encode("ascii"))
    document = json.loads(text)
    means = {}
    for name, decide in (("ompi-rules", lambda p, m, z: classic.lookup(7, p, m)[:3]),
                         ("ompi-json", lambda p, m, z: ompi_rules.json_lookup(
                             document, "bcast", p, m, z))):
        pen = penalties_by_hand(table, decide)
        code, out, err = run("check-rules", tmp_path / name, "--table", table, "--z", "ppn")
        assert code == 0, err
        for z, values in pen.items():
            assert f"this file at ppn={z}: penalty mean {np.mean(values):.2f}%" in out, out
        means[name] = np.mean([v for values in pen.values() for v in values])
        assert f"this file: penalty mean {means[name]:.2f}%" in out, out
    assert 0 < means["ompi-json"] < means["ompi-rules"], means


@pytest.mark.parametrize("edit, expected", [
    (lambda d: d.pop("module"), '"module": "tuned"'),
    (lambda d: d["collectives"].__setitem__("bcst", []), "collectives.bcst: not an Open MPI"),
    (lambda d: d["collectives"]["bcast"][0].__setitem__("comm_rank_distribution", "two"),
     "collectives.bcast[0].comm_rank_distribution: not one of"),
    (lambda d: d["collectives"]["bcast"][1]["rules"][0].__setitem__("alg", "knomial"),
     "collectives.bcast[1].rules[0].alg (collsel reads ids, not names): 'knomial'"),
    (lambda d: d["collectives"]["bcast"][0]["rules"][1].__setitem__("msg_size_max", "big"),
     "rules[1].msg_size_max: 'big' is not an integer in [0, 18446744073709551615] or \"inf\""),
    (lambda d: d["collectives"]["bcast"][2].__setitem__("comm_size_min", -1),
     "collectives.bcast[2].comm_size_min: '-1' is not an integer in [0, 2147483647]"),
])
def test_check_rules_refuses_bad_json_rules(trees, tmp_path, edit, expected):
    text, _ = _emit("ompi-json", trees["bcast"], tmp_path)
    code, out, err = run("check-rules", tmp_path / "ompi-json")
    assert code == 0 and "valid JSON rules file (Open MPI 6 / main" in out, (out, err)
    document = json.loads(text)
    edit(document)
    (tmp_path / "bad.json").write_text(json.dumps(document))
    code, out, err = run("check-rules", tmp_path / "bad.json")
    assert code == 2 and len(err.splitlines()) == 1 and expected in err, err


def test_check_rules_table_bad_input(trees, tmp_path):
    conf, _ = _emit("ompi-rules", trees["bcast"], tmp_path)
    for args, text in [(["--z", "ppn"], "--z needs --table"),
                       (["--table", TABLE], "several collectives"),
                       (["--table", TABLE, "--collective", "bcast", "--z", "nope"], "nope")]:
        code, out, err = run("check-rules", tmp_path / "ompi-rules", *args)
        assert code == 2 and len(err.splitlines()) == 1 and text in err, (args, err)


def test_emit_refuses_in_memory_ppn_tree_with_category_axis(trees):
    loaded = treefile.load(trees["bcast"])
    loaded.axes[2] = decision_map.Axis("ppn", decision_map.CATEGORY, [0, 1], ["a", "b"], [1])
    with pytest.raises(InputError, match="category third axis"):
        emit("ompi-rules", [loaded], EmitOptions())
