/* The interposed MPI functions (include/collsel_pmpi.h): MPI_Init and MPI_Init_thread load the
 * trees and agree across ranks, MPI_Bcast and MPI_Reduce run each call on its method, and
 * MPI_Finalize frees what is left. Everything else of the program is untouched. */
#include "lc_mpi.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LC_EXPORT __attribute__((visibility("default")))

static struct {
    int active;        /* serve calls */
    int trace;
    int mpit;          /* MPI_T_init_thread done here */
    struct lc_trees trees;
} g;

LC_EXPORT int collsel_pmpi_active(void)
{
    return g.active;
}

LC_EXPORT void collsel_pmpi_counts_get(collsel_pmpi_counts *counts)
{
    if (counts)
        lc_comm_counts(counts);
}

/* ---- MPI_Init: load, check, agree ---- */

/* Everything one rank can find wrong, in order; 0 or 1 with msg. */
static int setup_local(int provided, char *msg, size_t msg_size)
{
    const char *spec = getenv("COLLSEL_TREES");
    int level, c;
    if (!spec || !*spec) {
        snprintf(msg, msg_size, "COLLSEL_TREES is not set");
        return 1;
    }
    if (provided == MPI_THREAD_MULTIPLE) {
        snprintf(msg, msg_size, "MPI_THREAD_MULTIPLE: forcing an algorithm is process-global "
                 "state another thread's call would see");
        return 1;
    }
    if (lc_trees_load(spec, &g.trees, msg, msg_size))
        return 1;
    for (c = 0; c < LC_NCOLL; c++) {   /* format 2 says whose algorithm ids the tree holds */
        int family = g.trees.tree[c] ? collsel_tree_family(g.trees.tree[c])
                                     : COLLSEL_TREE_FAMILY_UNKNOWN;
        if (family != COLLSEL_TREE_FAMILY_UNKNOWN && family != LC_FAMILY) {
            snprintf(msg, msg_size, "the %s tree holds %s algorithm ids, this library serves %s",
                     lc_coll_names[c], family == COLLSEL_TREE_FAMILY_MPICH ? "MPICH" : "Open MPI",
                     LC_FAMILY == COLLSEL_TREE_FAMILY_MPICH ? "MPICH" : "Open MPI");
            return 1;
        }
    }
    if (MPI_T_init_thread(provided, &level) != MPI_SUCCESS) {
        snprintf(msg, msg_size, "MPI_T_init_thread failed");
        return 1;
    }
    g.mpit = 1;
    if (lc_force_init(&g.trees, msg, msg_size))
        return 1;
    if (lc_comm_init() != MPI_SUCCESS) {
        snprintf(msg, msg_size, "cannot create a communicator attribute key");
        return 1;
    }
    return 0;
}

/* All ranks serve, or none: every rank's verdict and trees (CRC-32, -1 for none) compared. */
static int agree(int failed, const char *msg, int rank)
{
    long long mine[1 + LC_NCOLL], low[1 + LC_NCOLL], high[1 + LC_NCOLL];
    int c, who = failed ? rank : INT_MAX, first = INT_MAX, same = 1;
    mine[0] = failed;
    for (c = 0; c < LC_NCOLL; c++)
        mine[1 + c] = g.trees.tree[c] ? (long long)g.trees.crc[c] : -1;
    PMPI_Allreduce(mine, low, 1 + LC_NCOLL, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    PMPI_Allreduce(mine, high, 1 + LC_NCOLL, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    PMPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    for (c = 1; c <= LC_NCOLL; c++)
        same &= low[c] == high[c];
    if (high[0] && rank == first)
        fprintf(stderr, "libcollsel: %s; passing every MPI_Bcast and MPI_Reduce through\n",
                msg);
    else if (!high[0] && !same && rank == 0)
        fprintf(stderr, "libcollsel: the ranks loaded different trees (COLLSEL_TREES differs "
                        "between nodes?); passing every MPI_Bcast and MPI_Reduce through\n");
    return !high[0] && same;
}

static void shutdown_library(void)
{
    lc_comm_finalize();
    lc_force_finalize();
    if (g.mpit)
        MPI_T_finalize();
    lc_trees_free(&g.trees);
    g.active = g.mpit = 0;
}

static void setup(int provided)
{
    char msg[1024] = "";
    int rank = 0, failed;
    const char *trace = getenv("COLLSEL_TRACE");
    g.trace = trace && strcmp(trace, "1") == 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    failed = setup_local(provided, msg, sizeof msg);
    g.active = agree(failed, msg, rank);
    if (!g.active)
        shutdown_library();
}

LC_EXPORT int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv), provided = MPI_THREAD_SINGLE;
    if (rc == MPI_SUCCESS) {
        PMPI_Query_thread(&provided);
        setup(provided);
    }
    return rc;
}

LC_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        setup(*provided);
    return rc;
}

LC_EXPORT int MPI_Finalize(void)
{
    shutdown_library();
    return PMPI_Finalize();
}

/* ---- MPI_Bcast, MPI_Reduce ---- */

static void trace_pass(enum lc_coll coll, MPI_Comm comm, uint64_t bytes, const char *why)
{
    int rank = -1, size = -1;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    fprintf(stderr, "collsel-trace %s rank=%d comm_size=%d msg_size=%llu pass=%s\n",
            lc_coll_names[coll], rank, size, (unsigned long long)bytes, why);
}

static void trace_decision(enum lc_coll coll, const struct lc_comm_state *s, uint64_t bytes,
                           const struct lc_method *m)
{
    char ppn[16] = "-";
    if (s->coll[coll].ppn >= 0)
        snprintf(ppn, sizeof ppn, "%ld", (long)s->coll[coll].ppn);
    fprintf(stderr, "collsel-trace %s rank=%ld comm_size=%ld msg_size=%llu ppn=%s alg=%ld "
            "segsize=%ld faninout=%ld\n", lc_coll_names[coll], (long)s->rank, (long)s->size,
            (unsigned long long)bytes, ppn, (long)m->choice.algorithm, (long)m->choice.segsize,
            (long)m->choice.faninout);
}

static uint64_t message_bytes(int count, MPI_Datatype type)
{
    MPI_Count size = 0;
    if (count <= 0 || PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size <= 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

/* The method of this call, or NULL to pass it through. Every input is the same on every rank
 * of comm (the communicator, the message's byte count, the op's commutativity), so the ranks
 * choose alike. */
static const struct lc_method *choose(enum lc_coll coll, MPI_Comm comm, uint64_t bytes,
                                      int commutative)
{
    const collsel_tree *tree = g.trees.tree[coll];
    struct lc_comm_state *s;
    struct lc_coll_state *cs;
    const char *why = NULL;
    if (!g.active)
        why = "off";
    else if (!tree)
        why = "no-tree";
    else if (comm == MPI_COMM_NULL || !(s = lc_comm_state(comm)))
        why = "invalid";   /* the MPI reports it from the call itself */
    else if (s->inter)
        why = "inter";
    else if (s->size < 2)
        why = "size1";
    else if (!commutative)
        why = "noncommutative";
    if (why) {
        if (g.trace)
            trace_pass(coll, comm, bytes, why);
        return NULL;
    }
    cs = &s->coll[coll];
    if (!cs->resolved)
        lc_comm_resolve(s, comm, coll, tree, g.trace);
    if (cs->resolved < 0) {
        if (g.trace)
            trace_pass(coll, comm, bytes, "unresolved");
        return NULL;
    }
    {
        const struct lc_method *m = &cs->methods[lc_rules_lookup(&cs->rules, bytes)];
        if (g.trace)
            trace_decision(coll, s, bytes, m);
        return m;
    }
}

/* The one place a call dispatches on the method's kind. */
static int run_bcast(const struct lc_method *m, void *buf, int count, MPI_Datatype type,
                     int root, MPI_Comm comm)
{
    int rc;
    switch (m ? m->kind : LC_METHOD_DEFER) {
    case LC_METHOD_HIER:
        return lc_hier_bcast(m, buf, count, type, root);
    case LC_METHOD_FLAT:
        lc_force_enter(LC_BCAST, m);
        rc = PMPI_Bcast(buf, count, type, root, m->comm);
        lc_force_leave(LC_BCAST, m);
        return rc;
    case LC_METHOD_DEFER:
    default:
        return PMPI_Bcast(buf, count, type, root, comm);
    }
}

static int run_reduce(const struct lc_method *m, const void *sendbuf, void *recvbuf, int count,
                      MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
    int rc;
    switch (m ? m->kind : LC_METHOD_DEFER) {
    case LC_METHOD_HIER:
        return lc_hier_reduce(m, sendbuf, recvbuf, count, type, op, root);
    case LC_METHOD_FLAT:
        lc_force_enter(LC_REDUCE, m);
        rc = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, m->comm);
        lc_force_leave(LC_REDUCE, m);
        return rc;
    case LC_METHOD_DEFER:
    default:
        return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    }
}

LC_EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    const struct lc_method *m;
    if (!g.active && !g.trace)
        return PMPI_Bcast(buf, count, type, root, comm);
    m = choose(LC_BCAST, comm, message_bytes(count, type), 1);
    return run_bcast(m, buf, count, type, root, comm);
}

LC_EXPORT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                         MPI_Op op, int root, MPI_Comm comm)
{
    int commutative = 1;
    const struct lc_method *m;
    if (!g.active && !g.trace)
        return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    if (g.active && PMPI_Op_commutative(op, &commutative) != MPI_SUCCESS)
        commutative = 0;
    m = choose(LC_REDUCE, comm, message_bytes(count, type), commutative);
    return run_reduce(m, sendbuf, recvbuf, count, type, op, root, comm);
}
