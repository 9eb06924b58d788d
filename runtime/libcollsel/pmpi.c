/* The interposed MPI functions (include/collsel_pmpi.h): MPI_Init and MPI_Init_thread load the
 * trees and agree across ranks, the 14 collectives (and MPI-4's large-count MPI_<Coll>_c) run
 * each call on its method, and MPI_Finalize frees what is left. Everything else of the program
 * is untouched. */
#include "lc_mpi.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LC_EXPORT __attribute__((visibility("default")))

static struct {
    int active;        /* serve calls */
    int trace;
    int census;        /* COLLSEL_CENSUS: time every call (census.c) */
    int mpit;          /* MPI_T_init_thread done here */
    collsel_treeset trees;
} g;

LC_EXPORT int collsel_pmpi_active(void)
{
    return g.active;
}

/* Nonzero while this thread runs the library's own collectives (agreeing at MPI_Init, making
 * a communicator's state and shadows on its first call): `collsel verify`'s probe leaves them
 * out, they are not the program's calls and no tree decides them. */
static __thread int own;

LC_EXPORT int collsel_pmpi_own(void)
{
    return own;
}

LC_EXPORT void collsel_pmpi_counts_get(collsel_pmpi_counts *counts)
{
    if (counts)
        lc_comm_counts(counts);
}

/* ---- MPI_Init: load, check, agree ---- */

/* setup_local's verdicts: fine, wrong (msg says what; agree() adds the consequence), a
 * refusal whose msg is the whole sentence, or nothing to serve and nothing to say (a census
 * without trees) */
enum { SETUP_OK, SETUP_FAILED, SETUP_FAILED_SAID, SETUP_NO_TREES_CENSUS };

/* COLLSEL_SERIAL_COLLECTIVES=1: the user's word that no two threads of a process are ever
 * inside collectives at once (a Python program calling MPI from one thread), which makes
 * MPICH's process-global algorithm variable safe to write per call at MPI_THREAD_MULTIPLE. */
static int serial_collectives(void)
{
    const char *word = getenv("COLLSEL_SERIAL_COLLECTIVES");
    return word && strcmp(word, "1") == 0;
}

/* Everything one rank can find wrong, in order; SETUP_OK, or a failure with msg. */
static int setup_local(int provided, char *msg, size_t msg_size)
{
    const char *spec = getenv("COLLSEL_TREES");
    int level, c;
    if (!spec || !*spec) {
        snprintf(msg, msg_size, "COLLSEL_TREES is not set");
        return g.census ? SETUP_NO_TREES_CENSUS : SETUP_FAILED;
    }
    /* MPIR_CVAR_<COLL>_INTRA_ALGORITHM, written around each call, is read by every thread's
     * collectives and by MPICH's internal ones: another thread's call at the same time could
     * run a different algorithm than its peers on other ranks */
    if (provided == MPI_THREAD_MULTIPLE && LC_FAMILY == COLLSEL_TREE_FAMILY_MPICH
        && !serial_collectives()) {
        snprintf(msg, msg_size, "MPICH at MPI_THREAD_MULTIPLE: every collective passes through "
                 "to MPICH's own choice; set COLLSEL_SERIAL_COLLECTIVES=1 if no two threads run "
                 "collectives at once");
        return SETUP_FAILED_SAID;
    }
    if (lc_trees_load(spec, &g.trees, msg, msg_size))
        return SETUP_FAILED;
    /* format 2 says whose algorithm ids the tree holds */
    for (c = 0; c < COLLSEL_MPI_NCOLL; c++) {
        int family = g.trees.tree[c] ? collsel_tree_family(g.trees.tree[c])
                                     : COLLSEL_TREE_FAMILY_UNKNOWN;
        if (family != COLLSEL_TREE_FAMILY_UNKNOWN && family != LC_FAMILY) {
            snprintf(msg, msg_size, "the %s tree holds %s algorithm ids, this library serves %s",
                     collsel_mpi_coll_names[c],
                     family == COLLSEL_TREE_FAMILY_MPICH ? "MPICH" : "Open MPI",
                     LC_FAMILY == COLLSEL_TREE_FAMILY_MPICH ? "MPICH" : "Open MPI");
            return SETUP_FAILED;
        }
    }
    if (!g.mpit && MPI_T_init_thread(provided, &level) != MPI_SUCCESS) {
        snprintf(msg, msg_size, "MPI_T_init_thread failed");
        return SETUP_FAILED;
    }
    g.mpit = 1;
    if (lc_force_init(&g.trees, msg, msg_size))
        return SETUP_FAILED;
    if (lc_comm_init(provided == MPI_THREAD_MULTIPLE) != MPI_SUCCESS) {
        snprintf(msg, msg_size, "cannot create a communicator attribute key");
        return SETUP_FAILED;
    }
    return SETUP_OK;
}

/* All ranks serve, or none: every rank's verdict and trees (CRC-32, -1 for none) compared. */
static int agree(int failed, const char *msg, int rank)
{
    long long mine[1 + COLLSEL_MPI_NCOLL], low[1 + COLLSEL_MPI_NCOLL], high[1 + COLLSEL_MPI_NCOLL];
    int c, who = failed ? rank : INT_MAX, first = INT_MAX, same = 1;
    mine[0] = failed;
    for (c = 0; c < COLLSEL_MPI_NCOLL; c++)
        mine[1 + c] = g.trees.tree[c] ? (long long)g.trees.crc[c] : -1;
    PMPI_Allreduce(mine, low, 1 + COLLSEL_MPI_NCOLL, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    PMPI_Allreduce(mine, high, 1 + COLLSEL_MPI_NCOLL, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    PMPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    for (c = 1; c <= COLLSEL_MPI_NCOLL; c++)
        same &= low[c] == high[c];
    if (high[0] && rank == first && failed != SETUP_NO_TREES_CENSUS)
        fprintf(stderr, "libcollsel: %s%s\n", msg,
                failed == SETUP_FAILED_SAID ? "" : "; passing every collective through");
    else if (!high[0] && !same && rank == 0)
        fprintf(stderr, "libcollsel: the ranks loaded different trees (COLLSEL_TREES differs "
                        "between nodes?); passing every collective through\n");
    return !high[0] && same;
}

static void shutdown_library(void)
{
    lc_comm_finalize();
    lc_force_finalize();
    if (g.mpit)
        MPI_T_finalize();
    collsel_treeset_free(&g.trees);
    g.active = g.mpit = 0;
}

static void setup(int provided)
{
    char msg[1024] = "";
    int rank = 0, failed;
    const char *trace = getenv("COLLSEL_TRACE");
    g.trace = trace && strcmp(trace, "1") == 0;
    g.census = lc_census_on();
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    own++;
    failed = setup_local(provided, msg, sizeof msg);
    g.active = agree(failed, msg, rank);
    own--;
    if (!g.active)
        shutdown_library();
}

void lc_pmpi_started(int rc)
{
    int provided = MPI_THREAD_SINGLE;
    lc_census_started(rc);
    if (rc == MPI_SUCCESS) {
        PMPI_Query_thread(&provided);
        setup(provided);
    } else {
        shutdown_library();   /* MPI_T, if lc_mpit_before_init started it */
    }
}

void lc_pmpi_finishing(void)
{
    lc_census_finish();
    g.census = 0;
    shutdown_library();
}

/* Open MPI 4.1: MPI_T_init_thread registers every framework's parameters; done after MPI_Init,
 * that leaves every later collective of the launch slower (P = 8 oversubscribed on one node,
 * allreduce 1 B - 4 KiB: 1.23-1.53x, whether or not libcollsel decides it), done before it
 * costs nothing (0.88-0.94x, noise). So the library starts MPI_T before the MPI when it may
 * serve (setup_local keeps it, shutdown_library ends it), in the C and the Fortran bindings
 * (fortran.c). MPICH: at setup, as before. */
void lc_mpit_before_init(int required)
{
    lc_census_begin();   /* the program's wall time starts before the MPI's init too */
#if defined(OPEN_MPI)
    const char *spec = getenv("COLLSEL_TREES");
    int level;
    if (spec && *spec && MPI_T_init_thread(required, &level) == MPI_SUCCESS)
        g.mpit = 1;
#else
    (void)required;
#endif
}

LC_EXPORT int MPI_Init(int *argc, char ***argv)
{
    int rc;
    lc_mpit_before_init(MPI_THREAD_SINGLE);
    rc = PMPI_Init(argc, argv);
    lc_pmpi_started(rc);
    return rc;
}

LC_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc;
    lc_mpit_before_init(required);
    rc = PMPI_Init_thread(argc, argv, required, provided);
    lc_pmpi_started(rc);
    return rc;
}

LC_EXPORT int MPI_Finalize(void)
{
    lc_pmpi_finishing();
    return PMPI_Finalize();
}

/* ---- the collectives ---- */

static void trace_pass(enum collsel_mpi_coll coll, MPI_Comm comm, uint64_t bytes, const char *why)
{
    int rank = -1, size = -1;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    lc_trace("collsel-trace %s rank=%d comm_size=%d msg_size=%llu pass=%s",
             collsel_mpi_coll_names[coll], rank, size, (unsigned long long)bytes, why);
}

static void trace_decision(enum collsel_mpi_coll coll, const struct lc_comm_state *s,
                           uint64_t bytes, const struct lc_method *m)
{
    char ppn[16] = "-";
    if (s->coll[coll].ppn >= 0)
        snprintf(ppn, sizeof ppn, "%ld", (long)s->coll[coll].ppn);
    lc_trace("collsel-trace %s rank=%ld comm_size=%ld msg_size=%llu ppn=%s alg=%ld "
             "segsize=%ld faninout=%ld", collsel_mpi_coll_names[coll], (long)s->rank, (long)s->size,
             (unsigned long long)bytes, ppn, (long)m->choice.algorithm, (long)m->choice.segsize,
             (long)m->choice.faninout);
}

/* count elements of type, in bytes: the m of the trees (docs/guide/collectives.md) */
static uint64_t bytes_of(MPI_Count count, MPI_Datatype type)
{
    MPI_Count size = 0;
    if (count <= 0 || PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size <= 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

/* LC_NEED_COMMUTATIVE when op is not commutative: what the call lacks */
static unsigned op_lacks(MPI_Op op)
{
    int commutative = 1;
    if (g.active && PMPI_Op_commutative(op, &commutative) != MPI_SUCCESS)
        commutative = 0;
    return commutative ? 0 : LC_NEED_COMMUTATIVE;
}

/* The method of this call, or NULL to pass it through. Every input is the same on every rank
 * of comm (the communicator, the message's byte count, `lacks`: the enum lc_need bits the call
 * cannot offer a method, `shape`: NULL, or why the call's counts are not the ones the tree was
 * measured with), so the ranks choose alike. */
static const struct lc_method *decide(enum collsel_mpi_coll coll, MPI_Comm comm, uint64_t bytes,
                                      unsigned lacks, const char *shape)
{
    const collsel_tree *tree = g.trees.tree[coll];
    struct lc_comm_state *s = NULL;
    struct lc_coll_state *cs;
    struct lc_method *m;
    const char *why = NULL;
    if (!g.active)
        why = "off";
    else if (!tree)
        why = "no-tree";
    else if (lc_force_refusal(coll))
        why = lc_force_refusal(coll);
    else if (comm == MPI_COMM_NULL || !(s = lc_comm_state(comm)))
        why = "invalid";   /* the MPI reports it from the call itself */
    else if (s->inter)
        why = "inter";
    else if (s->size < 2)
        why = "size1";
    else if (shape)
        why = shape;
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
    m = &cs->methods[lc_rules_lookup(&cs->rules, bytes)];
    if (m->ready == 0)   /* its first use: make it (the same call on every rank of comm) */
        lc_comm_make(comm, coll, m);
    if (m->ready < 0) {
        if (g.trace)
            trace_pass(coll, comm, bytes, "unresolved");
        return NULL;
    }
    lacks &= lc_force_needs(coll, &m->choice);
    why = m->kind == LC_METHOD_DEFER && m->choice.algorithm != 0 ? "unusable"
          : lacks & LC_NEED_COMMUTATIVE ? "noncommutative"
          : lacks ? "unequal-counts" : NULL;
    if (why) {
        if (g.trace)
            trace_pass(coll, comm, bytes, why);
        return NULL;
    }
    if (g.trace)
        trace_decision(coll, s, bytes, m);
    return m;
}

/* decide(), the census' clock started last (census.c: the call's time is the MPI's call,
 * with the forcing around it, without the deciding); leave() stops it. */
static const struct lc_method *choose(enum collsel_mpi_coll coll, MPI_Comm comm, uint64_t bytes,
                                      unsigned lacks, const char *shape)
{
    const struct lc_method *m;
    own++;
    m = decide(coll, comm, bytes, lacks, shape);
    own--;
    if (g.census)
        lc_census_enter(coll, comm, bytes);
    return m;
}

/* A flat method's call runs on m->comm between lc_force_enter and lc_force_leave; a deferred
 * one (or a passed call, m NULL) on the user's communicator. Hierarchical methods are bcast's
 * and reduce's only (lc_force_init refuses them elsewhere): run_bcast, run_reduce. */
static MPI_Comm enter(enum collsel_mpi_coll coll, const struct lc_method *m, MPI_Comm comm)
{
    if (!m || m->kind != LC_METHOD_FLAT)
        return comm;
    lc_force_enter(coll, m);
    return m->comm;
}

static int leave(enum collsel_mpi_coll coll, const struct lc_method *m, int rc)
{
    if (m && m->kind == LC_METHOD_FLAT)
        lc_force_leave(coll, m);
    if (g.census)
        lc_census_leave();
    return rc;
}

/* The largest count minus the smallest into `spread`: the trees were measured with equal
 * counts (reduce_scatter: m / P each, one more for the first m mod P ranks). `counts` is the
 * same on every rank of comm (MPI requires it of these collectives). */
#define COUNT_SPREAD(counts, n, spread)                                                            \
    do {                                                                                           \
        MPI_Count low_ = (counts)[0], high_ = (counts)[0];                                         \
        int i_;                                                                                    \
        for (i_ = 1; i_ < (n); i_++) {                                                             \
            low_ = (counts)[i_] < low_ ? (counts)[i_] : low_;                                      \
            high_ = (counts)[i_] > high_ ? (counts)[i_] : high_;                                   \
        }                                                                                          \
        (spread) = high_ - low_;                                                                   \
    } while (0)

static int comm_size_of(MPI_Comm comm)
{
    int size = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return 0;
    return size;
}

static int is_root(MPI_Comm comm, int root)
{
    int rank = -1;
    if (comm != MPI_COMM_NULL)
        PMPI_Comm_rank(comm, &rank);
    return rank == root;
}

/* Each collective is defined once, for int counts (MPI_<Coll>) and, where the MPI has them
 * (MPI 4: MPICH 4.0), for MPI_Count counts and MPI_Aint displacements (MPI_<Coll>_c, what
 * mpi4py calls): SUFFIX, COUNT, DISP. The first line of each: no library, no work. */
#define LC_PLAIN(NAME, ...)                                                                        \
    if (!g.active && !g.trace && !g.census)                                                        \
        return NAME(__VA_ARGS__)

#define DEFINE_BCAST(SUFFIX, COUNT)                                                                \
    LC_EXPORT int MPI_Bcast##SUFFIX(void *buf, COUNT count, MPI_Datatype type, int root,           \
                                    MPI_Comm comm)                                                 \
    {                                                                                              \
        const struct lc_method *m;                                                                 \
        LC_PLAIN(PMPI_Bcast##SUFFIX, buf, count, type, root, comm);                                \
        m = choose(COLLSEL_MPI_BCAST, comm, bytes_of(count, type), 0, NULL);                       \
        if (m && m->kind == LC_METHOD_HIER && count <= INT_MAX)                                    \
            return leave(COLLSEL_MPI_BCAST, m, lc_hier_bcast(m, buf, (int)count, type, root));     \
        return leave(COLLSEL_MPI_BCAST, m,                                                         \
                     PMPI_Bcast##SUFFIX(buf, count, type, root,                                    \
                                        enter(COLLSEL_MPI_BCAST, m, comm)));                       \
    }

#define DEFINE_REDUCE(SUFFIX, COUNT)                                                               \
    LC_EXPORT int MPI_Reduce##SUFFIX(const void *sendbuf, void *recvbuf, COUNT count,              \
                                     MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)        \
    {                                                                                              \
        const struct lc_method *m;                                                                 \
        LC_PLAIN(PMPI_Reduce##SUFFIX, sendbuf, recvbuf, count, type, op, root, comm);              \
        m = choose(COLLSEL_MPI_REDUCE, comm, bytes_of(count, type), op_lacks(op), NULL);           \
        if (m && m->kind == LC_METHOD_HIER && count <= INT_MAX)                                    \
            return leave(COLLSEL_MPI_REDUCE, m,                                                    \
                         lc_hier_reduce(m, sendbuf, recvbuf, (int)count, type, op, root));         \
        return leave(COLLSEL_MPI_REDUCE, m, PMPI_Reduce##SUFFIX(sendbuf, recvbuf, count, type, op, \
                                                       root, enter(COLLSEL_MPI_REDUCE, m, comm))); \
    }

/* allreduce, scan, exscan: one vector, m its bytes */
#define DEFINE_VECTOR_REDUCTION(NAME, COLL, SUFFIX, COUNT)                                         \
    LC_EXPORT int MPI_##NAME##SUFFIX(const void *sendbuf, void *recvbuf, COUNT count,              \
                                     MPI_Datatype type, MPI_Op op, MPI_Comm comm)                  \
    {                                                                                              \
        const struct lc_method *m;                                                                 \
        LC_PLAIN(PMPI_##NAME##SUFFIX, sendbuf, recvbuf, count, type, op, comm);                    \
        m = choose(COLL, comm, bytes_of(count, type), op_lacks(op), NULL);                         \
        return leave(COLL, m, PMPI_##NAME##SUFFIX(sendbuf, recvbuf, count, type, op,               \
                                                  enter(COLL, m, comm)));                          \
    }

/* allgather, alltoall: m = one rank's block, the receive side's (valid on every rank, also
 * with MPI_IN_PLACE) */
#define DEFINE_BLOCK_EXCHANGE(NAME, COLL, SUFFIX, COUNT)                                           \
    LC_EXPORT int MPI_##NAME##SUFFIX(const void *sendbuf, COUNT sendcount,                         \
                                     MPI_Datatype sendtype, void *recvbuf, COUNT recvcount,        \
                                     MPI_Datatype recvtype, MPI_Comm comm)                         \
    {                                                                                              \
        const struct lc_method *m;                                                                 \
        LC_PLAIN(PMPI_##NAME##SUFFIX, sendbuf, sendcount, sendtype, recvbuf, recvcount,            \
                 recvtype, comm);                                                                  \
        m = choose(COLL, comm, bytes_of(recvcount, recvtype), 0, NULL);                            \
        return leave(COLL, m, PMPI_##NAME##SUFFIX(sendbuf, sendcount, sendtype, recvbuf,           \
                                                  recvcount, recvtype, enter(COLL, m, comm)));     \
    }

/* gather, scatter: m = one rank's block, the root's many-block side at the root (its other
 * side may be MPI_IN_PLACE), the single block elsewhere */
#define DEFINE_ROOTED_BLOCK(NAME, COLL, ROOT_SIDE, SUFFIX, COUNT)                                  \
    LC_EXPORT int MPI_##NAME##SUFFIX(const void *sendbuf, COUNT sendcount,                         \
                                     MPI_Datatype sendtype, void *recvbuf, COUNT recvcount,        \
                                     MPI_Datatype recvtype, int root, MPI_Comm comm)               \
    {                                                                                              \
        const struct lc_method *m;                                                                 \
        int at_root, recv_side;                                                                    \
        LC_PLAIN(PMPI_##NAME##SUFFIX, sendbuf, sendcount, sendtype, recvbuf, recvcount,            \
                 recvtype, root, comm);                                                            \
        at_root = is_root(comm, root);                                                             \
        recv_side = (ROOT_SIDE) == 'r' ? at_root : !at_root;                                       \
        m = choose(COLL, comm, recv_side ? bytes_of(recvcount, recvtype)                           \
                                         : bytes_of(sendcount, sendtype), 0, NULL);                \
        return leave(COLL, m, PMPI_##NAME##SUFFIX(sendbuf, sendcount, sendtype, recvbuf,           \
                                                  recvcount, recvtype, root,                       \
                                                  enter(COLL, m, comm)));                          \
    }

/* allgatherv: m = the total over P (Open MPI's per_rank_dsize); unequal counts pass */
#define DEFINE_ALLGATHERV(SUFFIX, COUNT, DISP)                                                     \
    LC_EXPORT int MPI_Allgatherv##SUFFIX(const void *sendbuf, COUNT sendcount,                     \
                                         MPI_Datatype sendtype, void *recvbuf,                     \
                                         const COUNT recvcounts[], const DISP displs[],            \
                                         MPI_Datatype recvtype, MPI_Comm comm)                     \
    {                                                                                              \
        const struct lc_method *m;                                                                 \
        MPI_Count spread = 0;                                                                      \
        int p;                                                                                     \
        LC_PLAIN(PMPI_Allgatherv##SUFFIX, sendbuf, sendcount, sendtype, recvbuf, recvcounts,       \
                 displs, recvtype, comm);                                                          \
        p = comm_size_of(comm);                                                                    \
        if (p > 0)                                                                                 \
            COUNT_SPREAD(recvcounts, p, spread);                                                   \
        m = choose(COLLSEL_MPI_ALLGATHERV, comm, p > 0 ? bytes_of(recvcounts[0], recvtype) : 0, 0, \
                   spread ? "unequal-counts" : NULL);                                              \
        return leave(COLLSEL_MPI_ALLGATHERV, m,                                                    \
                     PMPI_Allgatherv##SUFFIX(sendbuf, sendcount, sendtype, recvbuf,                \
                                             recvcounts, displs, recvtype,                         \
                                             enter(COLLSEL_MPI_ALLGATHERV, m, comm)));             \
    }

/* alltoallv: its tree splits on P alone (m = 0, as Open MPI's decision), so any counts are
 * decided alike on every rank: a rank sees only its own counts, and passing through where
 * they are unequal would leave ranks of one call on different algorithms */
#define DEFINE_ALLTOALLV(SUFFIX, COUNT, DISP)                                                      \
    LC_EXPORT int MPI_Alltoallv##SUFFIX(const void *sendbuf, const COUNT sendcounts[],             \
                                        const DISP sdispls[], MPI_Datatype sendtype,               \
                                        void *recvbuf, const COUNT recvcounts[],                   \
                                        const DISP rdispls[], MPI_Datatype recvtype,               \
                                        MPI_Comm comm)                                             \
    {                                                                                              \
        const struct lc_method *m;                                                                 \
        LC_PLAIN(PMPI_Alltoallv##SUFFIX, sendbuf, sendcounts, sdispls, sendtype, recvbuf,          \
                 recvcounts, rdispls, recvtype, comm);                                             \
        m = choose(COLLSEL_MPI_ALLTOALLV, comm, 0, 0, NULL);                                       \
        return leave(COLLSEL_MPI_ALLTOALLV, m,                                                     \
                     PMPI_Alltoallv##SUFFIX(sendbuf, sendcounts, sdispls, sendtype, recvbuf,       \
                                            recvcounts, rdispls, recvtype,                         \
                                            enter(COLLSEL_MPI_ALLTOALLV, m, comm)));               \
    }

/* reduce_scatter: m = the sum of the counts; counts further apart than one pass, and unequal
 * ones where the method needs equal counts (MPICH's noncommutative) */
#define DEFINE_REDUCE_SCATTER(SUFFIX, COUNT)                                                       \
    LC_EXPORT int MPI_Reduce_scatter##SUFFIX(const void *sendbuf, void *recvbuf,                   \
                                             const COUNT recvcounts[], MPI_Datatype type,          \
                                             MPI_Op op, MPI_Comm comm)                             \
    {                                                                                              \
        const struct lc_method *m;                                                                 \
        MPI_Count total = 0, spread = 0;                                                           \
        int p, i;                                                                                  \
        LC_PLAIN(PMPI_Reduce_scatter##SUFFIX, sendbuf, recvbuf, recvcounts, type, op, comm);       \
        p = comm_size_of(comm);                                                                    \
        for (i = 0; i < p; i++)                                                                    \
            total += recvcounts[i];                                                                \
        if (p > 0)                                                                                 \
            COUNT_SPREAD(recvcounts, p, spread);                                                   \
        m = choose(COLLSEL_MPI_REDUCE_SCATTER, comm, bytes_of(total, type),                        \
                   op_lacks(op) | (spread ? LC_NEED_EQUAL_COUNTS : 0u),                            \
                   spread > 1 ? "unequal-counts" : NULL);                                          \
        return leave(COLLSEL_MPI_REDUCE_SCATTER, m,                                                \
                     PMPI_Reduce_scatter##SUFFIX(sendbuf, recvbuf, recvcounts, type, op,           \
                                                 enter(COLLSEL_MPI_REDUCE_SCATTER, m, comm)));     \
    }

/* reduce_scatter_block: m = one rank's block */
#define DEFINE_REDUCE_SCATTER_BLOCK(SUFFIX, COUNT)                                                 \
    LC_EXPORT int MPI_Reduce_scatter_block##SUFFIX(const void *sendbuf, void *recvbuf,             \
                                                   COUNT recvcount, MPI_Datatype type,             \
                                                   MPI_Op op, MPI_Comm comm)                       \
    {                                                                                              \
        const struct lc_method *m;                                                                 \
        LC_PLAIN(PMPI_Reduce_scatter_block##SUFFIX, sendbuf, recvbuf, recvcount, type, op,         \
                 comm);                                                                            \
        m = choose(COLLSEL_MPI_REDUCE_SCATTER_BLOCK, comm, bytes_of(recvcount, type),              \
                   op_lacks(op), NULL);                                                            \
        return leave(COLLSEL_MPI_REDUCE_SCATTER_BLOCK, m,                                          \
                     PMPI_Reduce_scatter_block##SUFFIX(                                            \
                         sendbuf, recvbuf, recvcount, type, op,                                    \
                         enter(COLLSEL_MPI_REDUCE_SCATTER_BLOCK, m, comm)));                       \
    }

#define DEFINE_ALL(SUFFIX, COUNT, DISP)                                                            \
    DEFINE_BCAST(SUFFIX, COUNT)                                                                    \
    DEFINE_REDUCE(SUFFIX, COUNT)                                                                   \
    DEFINE_VECTOR_REDUCTION(Allreduce, COLLSEL_MPI_ALLREDUCE, SUFFIX, COUNT)                       \
    DEFINE_VECTOR_REDUCTION(Scan, COLLSEL_MPI_SCAN, SUFFIX, COUNT)                                 \
    DEFINE_VECTOR_REDUCTION(Exscan, COLLSEL_MPI_EXSCAN, SUFFIX, COUNT)                             \
    DEFINE_BLOCK_EXCHANGE(Allgather, COLLSEL_MPI_ALLGATHER, SUFFIX, COUNT)                         \
    DEFINE_BLOCK_EXCHANGE(Alltoall, COLLSEL_MPI_ALLTOALL, SUFFIX, COUNT)                           \
    DEFINE_ROOTED_BLOCK(Gather, COLLSEL_MPI_GATHER, 'r', SUFFIX, COUNT)                            \
    DEFINE_ROOTED_BLOCK(Scatter, COLLSEL_MPI_SCATTER, 's', SUFFIX, COUNT)                          \
    DEFINE_ALLGATHERV(SUFFIX, COUNT, DISP)                                                         \
    DEFINE_ALLTOALLV(SUFFIX, COUNT, DISP)                                                          \
    DEFINE_REDUCE_SCATTER(SUFFIX, COUNT)                                                           \
    DEFINE_REDUCE_SCATTER_BLOCK(SUFFIX, COUNT)

DEFINE_ALL(, int, int)
#if MPI_VERSION >= 4
DEFINE_ALL(_c, MPI_Count, MPI_Aint)
#endif

/* barrier: no message (m = 0) */
LC_EXPORT int MPI_Barrier(MPI_Comm comm)
{
    const struct lc_method *m;
    LC_PLAIN(PMPI_Barrier, comm);
    m = choose(COLLSEL_MPI_BARRIER, comm, 0, 0, NULL);
    return leave(COLLSEL_MPI_BARRIER, m, PMPI_Barrier(enter(COLLSEL_MPI_BARRIER, m, comm)));
}
