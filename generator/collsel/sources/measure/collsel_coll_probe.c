/* collsel_coll_probe: an LD_PRELOAD library that records which Open MPI coll/base algorithm
 * each call ran, the message quantity coll/tuned's decisions computed for it, and whether
 * coll/tuned read its rules file: `collsel verify` (commands/verify.py) and the tests that
 * prove forcing (tests/forcing, tests/integration) run programs under it. It only observes:
 * every wrapper forwards its arguments unchanged to the function it replaces, so the algorithm
 * that runs is the one that would run without it.
 *
 * mca_coll_tuned.so calls the ompi_coll_base_<coll>_* functions of libmpi.so.40 through the
 * dynamic linker, so definitions here take their place; each counts the call for its
 * communicator and forwards to the real function (dlsym(RTLD_NEXT)). A base function that
 * silently hands over to another one (a fallback, or a composite such as allreduce
 * basic_linear = reduce + bcast) calls it through the linker too: such calls are counted as
 * nested (depth > 0), so "the function the communicator ran" is the outermost one and a
 * fallback is a nested call. Communicators are named by the order in which the program dup'ed
 * them (MPI_Comm_dup and PMPI_Comm_dup are interposed the same way): collsel_bench dups one
 * communicator per --methods entry, in that order; any other communicator is -1.
 *
 * The recorded bytes are the fixed decision's quantity (coll_tuned_decision_fixed.c of 4.1.4):
 * dsize * count (allreduce :66-67, bcast :521-522, reduce :676-677, reduce_scatter_block
 * :985-986, allgather :1103-1107, alltoall :240-244, gather :1397-1402, scatter :1484-1489),
 * the sum of the counts for reduce_scatter (:837-842), that sum / P for allgatherv
 * (:1258-1262); alltoallv (P only, :418-451), scan and exscan (no fixed decision in 4.1.4)
 * record dsize * count of rank 0's block; barrier records 0.
 *
 * coll/tuned's own steps go through the linker as well (mca_coll_tuned.so calls them through its
 * PLT): ompi_coll_tuned_read_rules_config_file (at MPI_Init, only when dynamic rules are on and a
 * file is named: the name and what it returned, -1 = Open MPI rejected or could not open it) and
 * ompi_coll_tuned_get_target_method_params (per call, only when the file has rules for the
 * communicator: the message size the dynamic decision computed and the algorithm the file gave,
 * kept for the next outermost base call on that communicator). At MPI_Finalize (C and Fortran
 * bindings) the probe reads coll/tuned's settings through MPI_T (there, not earlier: Open MPI 4.1
 * slows every collective after an MPI_T_init_thread that follows MPI_Init; docs/guide/libcollsel.md).
 *
 * At exit each process writes, when $COLL_PROBE_DIR is set:
 *   probe.<pid>: "comm_index function depth bytes calls" lines (the forcing tests read these);
 *   sites.<pid>: what `collsel verify` reads (sources/measure/coll_probe.py parses it): header
 *     lines, then "site comm_size function nested bytes segsize rule_size rule_alg calls";
 *     text fields are last on their line, escaped (\xNN for '\\', controls and non-ASCII).
 * Threads (MPI_THREAD_MULTIPLE) may call: the tables are guarded by a mutex, the depth and the
 * pending rule lookup are per thread.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_COMMS 512
#define MAX_ROWS 8192
#define TEXT_MAX 4096
#define FILE_HASH_MAX (64L << 20) /* bytes of the rules file hashed: far beyond any rules file */

static void *dup_comms[MAX_COMMS];
static int ndups;
/* One row per distinct call: segsize is the base function's own segment argument (-1: it takes
 * none), rule_size/rule_alg what the rules file lookup gave for the call (-1: no lookup). */
static struct row {
    int comm, comm_size;
    const char *fn;
    int nested;
    long bytes, seg, rule_size;
    int rule_alg;
    long calls;
} rows[MAX_ROWS];
static int nrows;
static long dropped;         /* calls not recorded: the row table was full */
static __thread int depth;   /* probed functions active on this thread */
/* the last rules-file lookup on this thread, waiting for the base call it decided */
static __thread struct lookup { long size; int alg, valid; } pending;
static pthread_mutex_t tables = PTHREAD_MUTEX_INITIALIZER;

/* coll/tuned's reading of its rules file (at most one per process) */
static struct {
    int calls, rc, open_errno;
    long bytes;
    uint64_t hash;
    char name[TEXT_MAX];
} rules_read;

static void *forward(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "collsel_coll_probe: %s not found\n", name);
        abort();
    }
    return f;
}

static void record_locked(const char *fn, void *comm, int size, long bytes, long seg,
                          const struct lookup *rule)
{
    int index = -1;
    for (int i = 0; i < ndups; i++)
        if (dup_comms[i] == comm)
            index = i;
    int nested = depth > 0;
    long rule_size = rule ? rule->size : -1;
    int rule_alg = rule ? rule->alg : -1;
    for (int r = 0; r < nrows; r++)
        if (rows[r].comm == index && rows[r].nested == nested && rows[r].bytes == bytes
            && rows[r].comm_size == size && rows[r].seg == seg && rows[r].rule_size == rule_size
            && rows[r].rule_alg == rule_alg && strcmp(rows[r].fn, fn) == 0) {
            rows[r].calls++;
            return;
        }
    if (nrows < MAX_ROWS)
        rows[nrows++] = (struct row){index, size, fn, nested, bytes, seg, rule_size, rule_alg, 1};
    else
        dropped++;
}

static int comm_size(void *comm)
{
    int p = 1;
    MPI_Comm_size((MPI_Comm)comm, &p);
    return p;
}

/* libcollsel's own collectives (collsel_pmpi_own nonzero on this thread) are not the
 * program's: not recorded (absent without libcollsel) */
static int libcollsel_own(void)
{
    static int (*own)(void);
    static int looked;
    if (!looked) {
        *(void **)&own = dlsym(RTLD_DEFAULT, "collsel_pmpi_own");
        looked = 1;
    }
    return own && own();
}

static void record(const char *fn, void *comm, long bytes, long seg)
{
    if (libcollsel_own())
        return;
    /* the outermost call consumes the lookup made for it (its dec_dynamic call looked up the
     * rule, then called it or the fixed decision, on this thread) */
    struct lookup rule = pending, *used = NULL;
    if (depth == 0) {
        used = rule.valid ? &rule : NULL;
        pending.valid = 0;
    }
    int size = comm_size(comm);
    pthread_mutex_lock(&tables);
    record_locked(fn, comm, size, bytes, seg, used);
    pthread_mutex_unlock(&tables);
}

/* Open MPI's MPI_Datatype and MPI_Comm are the ompi_*_t pointers the base functions take. */
static long type_bytes(void *dtype, long count)
{
    int size = 0;
    MPI_Type_size((MPI_Datatype)dtype, &size);
    return (long)size * count;
}

static long sum_counts(const int *counts, void *comm)
{
    int p = 0;
    long sum = 0;
    MPI_Comm_size((MPI_Comm)comm, &p);
    for (int i = 0; i < p; i++)
        sum += counts[i];
    return sum;
}

static int is_root(int root, void *comm)
{
    int rank = -1;
    MPI_Comm_rank((MPI_Comm)comm, &rank);
    return rank == root;
}

typedef int (*dup_fn)(MPI_Comm, MPI_Comm *);

static int dup_and_name(dup_fn next, MPI_Comm comm, MPI_Comm *newcomm)
{
    int rc = next(comm, newcomm);
    pthread_mutex_lock(&tables);
    if (rc == MPI_SUCCESS && ndups < MAX_COMMS)
        dup_comms[ndups++] = (void *)*newcomm;
    pthread_mutex_unlock(&tables);
    return rc;
}

/* --- coll/tuned's rules file ------------------------------------------------------------ */

/* FNV-1a, 64 bits: `collsel verify` hashes its --rules file the same way to tell whether the
 * ranks read that file (a path can name another copy on another node). */
static uint64_t fnv1a(FILE *f, long *bytes)
{
    uint64_t h = 14695981039346656037ULL;
    int c;
    *bytes = 0;
    while (*bytes < FILE_HASH_MAX && (c = getc(f)) != EOF) {
        h = (h ^ (uint64_t)(unsigned char)c) * 1099511628211ULL;
        (*bytes)++;
    }
    return h;
}

/* The pointer types are coll/tuned's own (ompi_coll_alg_rule_t **), passed on untouched. */
int ompi_coll_tuned_read_rules_config_file(char *fname, void **rules, int n_collectives);
int ompi_coll_tuned_read_rules_config_file(char *fname, void **rules, int n_collectives)
{
    static int (*next)(char *, void **, int);
    if (!next)
        *(void **)&next = forward("ompi_coll_tuned_read_rules_config_file");
    int rc = next(fname, rules, n_collectives);
    rules_read.calls++;
    rules_read.rc = rc;
    snprintf(rules_read.name, sizeof rules_read.name, "%s", fname ? fname : "");
    /* the same path, opened again from this process: whether it exists here, and its content */
    FILE *f = fname ? fopen(fname, "rb") : NULL;
    rules_read.open_errno = f ? 0 : (fname ? errno : ENOENT);
    if (f) {
        rules_read.hash = fnv1a(f, &rules_read.bytes);
        fclose(f);
    }
    return rc;
}

int ompi_coll_tuned_get_target_method_params(void *com_rule, size_t msg_size, int *faninout,
                                              int *segsize, int *max_requests);
int ompi_coll_tuned_get_target_method_params(void *com_rule, size_t msg_size, int *faninout,
                                              int *segsize, int *max_requests)
{
    static int (*next)(void *, size_t, int *, int *, int *);
    if (!next)
        *(void **)&next = forward("ompi_coll_tuned_get_target_method_params");
    int alg = next(com_rule, msg_size, faninout, segsize, max_requests);
    /* the base call that follows on this thread is the one it decided (record() takes it) */
    pending = (struct lookup){msg_size > LONG_MAX ? LONG_MAX : (long)msg_size, alg, 1};
    return alg;
}

/* --- settings, read at MPI_Finalize -------------------------------------------------------- */

#define NSETTINGS 19
static const char *const setting_names[NSETTINGS] = {
    "coll_tuned_use_dynamic_rules", "coll_tuned_dynamic_rules_filename", "coll",
    "coll_tuned_priority", "coll_tuned_allgather_algorithm", "coll_tuned_allgatherv_algorithm",
    "coll_tuned_allreduce_algorithm", "coll_tuned_alltoall_algorithm",
    "coll_tuned_alltoallv_algorithm", "coll_tuned_barrier_algorithm", "coll_tuned_bcast_algorithm",
    "coll_tuned_exscan_algorithm", "coll_tuned_gather_algorithm", "coll_tuned_reduce_algorithm",
    "coll_tuned_reduce_scatter_algorithm", "coll_tuned_reduce_scatter_block_algorithm",
    "coll_tuned_scan_algorithm", "coll_tuned_scatter_algorithm", "mpi_yield_when_idle",
};
static struct {
    int captured, rank, size;
    char host[256], cwd[TEXT_MAX], library[TEXT_MAX];
    int found[NSETTINGS];
    char value[NSETTINGS][TEXT_MAX];
} settings;

/* One control variable as text; 0 when this MPI has none of that name. */
static int read_cvar(const char *name, char *out, size_t len)
{
    int index, count, verbosity, bind, scope, name_len = 0, desc_len = 0;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    MPI_T_cvar_handle handle;
    if (MPI_T_cvar_get_index(name, &index) != MPI_SUCCESS)
        return 0;
    if (MPI_T_cvar_get_info(index, NULL, &name_len, &verbosity, &type, &enumtype, NULL,
                            &desc_len, &bind, &scope) != MPI_SUCCESS
        || MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) != MPI_SUCCESS)
        return 0;
    if (type == MPI_CHAR) {
        char *text = calloc((size_t)(count > 0 ? count : 0) + 1, 1);
        if (text && MPI_T_cvar_read(handle, text) == MPI_SUCCESS)
            snprintf(out, len, "%s", text);
        free(text);
    } else {
        union { int i; unsigned u; long l; unsigned long ul; long long ll;
                unsigned long long ull; double d; char pad[64]; } v;
        memset(&v, 0, sizeof v);
        if (count == 1 && MPI_T_cvar_read(handle, &v) == MPI_SUCCESS) {
            if (type == MPI_INT)
                snprintf(out, len, "%d", v.i);
            else if (type == MPI_UNSIGNED)
                snprintf(out, len, "%u", v.u);
            else if (type == MPI_LONG)
                snprintf(out, len, "%ld", v.l);
            else if (type == MPI_UNSIGNED_LONG)
                snprintf(out, len, "%lu", v.ul);
            else if (type == MPI_LONG_LONG)
                snprintf(out, len, "%lld", v.ll);
            else if (type == MPI_UNSIGNED_LONG_LONG)
                snprintf(out, len, "%llu", v.ull);
            else if (type == MPI_DOUBLE)
                snprintf(out, len, "%g", v.d);
            else if (type == MPI_C_BOOL)   /* Open MPI's bool variables */
                snprintf(out, len, "%d", v.pad[0] ? 1 : 0);
        }
    }
    MPI_T_cvar_handle_free(&handle);
    return 1;
}

static void capture_settings(void)
{
    int provided, flag = 0, len = 0;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    if (settings.captured)
        return;
    settings.captured = 1;
    MPI_Initialized(&flag);
    if (flag) {
        PMPI_Comm_rank(MPI_COMM_WORLD, &settings.rank);
        PMPI_Comm_size(MPI_COMM_WORLD, &settings.size);
    }
    if (MPI_Get_library_version(version, &len) == MPI_SUCCESS) {
        version[strcspn(version, "\n")] = '\0';
        snprintf(settings.library, sizeof settings.library, "%s", version);
    }
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS) {
        for (int i = 0; i < NSETTINGS; i++)
            settings.found[i] = read_cvar(setting_names[i], settings.value[i],
                                          sizeof settings.value[i]);
        MPI_T_finalize();
    }
}

int MPI_Finalize(void)
{
    static int (*next)(void);
    if (!next)
        *(void **)&next = forward("MPI_Finalize");
    capture_settings();
    return next();
}

#if defined(OPEN_MPI)
/* Open MPI 4.1's Fortran MPI_FINALIZE calls PMPI_Finalize, below the C wrapper: its bindings
 * are wrapped too (the spellings of libmpi_mpifh.so and libmpi_usempif08.so, as libcollsel's
 * runtime/libcollsel/fortran.c). */
#define FORTRAN_FINALIZE(impl, symbol)                                                    \
    void impl(MPI_Fint *ierr);                                                            \
    void impl(MPI_Fint *ierr)                                                             \
    {                                                                                     \
        void (*next)(MPI_Fint *);                                                         \
        *(void **)&next = forward(symbol);                                                \
        capture_settings();                                                               \
        next(ierr);                                                                       \
    }
FORTRAN_FINALIZE(MPI_FINALIZE, "MPI_FINALIZE")
FORTRAN_FINALIZE(mpi_finalize, "mpi_finalize")
FORTRAN_FINALIZE(mpi_finalize_, "mpi_finalize_")
FORTRAN_FINALIZE(mpi_finalize__, "mpi_finalize__")
FORTRAN_FINALIZE(mpi_finalize_f08_, "mpi_finalize_f08_")
#endif

/* Programs dup through MPI_Comm_dup; collsel_bench's harness through PMPI_Comm_dup (an
 * interposed library sees only its measured calls). Open MPI's MPI_Comm_dup does not call
 * PMPI_Comm_dup through the linker, so no communicator is named twice. */
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    static dup_fn next;
    if (!next)
        *(void **)&next = forward("MPI_Comm_dup");
    return dup_and_name(next, comm, newcomm);
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    static dup_fn next;
    if (!next)
        *(void **)&next = forward("PMPI_Comm_dup");
    return dup_and_name(next, comm, newcomm);
}

/* The parameter lists of coll_base_functions.h (4.1.4) with every pointer as void *, which has
 * the same calling convention; EXTRA is the algorithm's own trailing parameters. */
#define ALLGATHER_A const void *sbuf, int scount, void *sdtype, void *rbuf, int rcount, \
                    void *rdtype, void *comm, void *module
#define ALLGATHER_P sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, module
#define ALLGATHERV_A const void *sbuf, int scount, void *sdtype, void *rbuf, const int *rcounts, \
                     const int *displs, void *rdtype, void *comm, void *module
#define ALLGATHERV_P sbuf, scount, sdtype, rbuf, rcounts, displs, rdtype, comm, module
#define REDUCING_A const void *sbuf, void *rbuf, int count, void *dtype, void *op, void *comm, \
                   void *module
#define REDUCING_P sbuf, rbuf, count, dtype, op, comm, module
#define ALLTOALLV_A const void *sbuf, const int *scounts, const int *sdisps, void *sdtype, \
                    void *rbuf, const int *rcounts, const int *rdisps, void *rdtype, void *comm, \
                    void *module
#define ALLTOALLV_P sbuf, scounts, sdisps, sdtype, rbuf, rcounts, rdisps, rdtype, comm, module
#define BARRIER_A void *comm, void *module
#define BARRIER_P comm, module
#define BCAST_A void *buf, int count, void *dtype, int root, void *comm, void *module
#define BCAST_P buf, count, dtype, root, comm, module
#define ROOTED_A const void *sbuf, int scount, void *sdtype, void *rbuf, int rcount, \
                 void *rdtype, int root, void *comm, void *module
#define ROOTED_P sbuf, scount, sdtype, rbuf, rcount, rdtype, root, comm, module
#define REDUCE_A const void *sbuf, void *rbuf, int count, void *dtype, void *op, int root, \
                 void *comm, void *module
#define REDUCE_P sbuf, rbuf, count, dtype, op, root, comm, module
#define RSCATTER_A const void *sbuf, void *rbuf, const int *rcounts, void *dtype, void *op, \
                   void *comm, void *module
#define RSCATTER_P sbuf, rbuf, rcounts, dtype, op, comm, module

/* The block size the decision sees, per argument list. */
#define ALLGATHER_BYTES type_bytes(sdtype, scount)
#define ALLGATHERV_BYTES (type_bytes(rdtype, sum_counts(rcounts, comm)) / comm_size(comm))
#define REDUCING_BYTES type_bytes(dtype, count)
#define ALLTOALLV_BYTES type_bytes(sdtype, scounts[0])
#define BARRIER_BYTES 0
#define BCAST_BYTES type_bytes(dtype, count)
#define GATHER_BYTES (is_root(root, comm) ? type_bytes(rdtype, rcount) : type_bytes(sdtype, scount))
#define SCATTER_BYTES (is_root(root, comm) ? type_bytes(sdtype, scount) : type_bytes(rdtype, rcount))
#define REDUCE_BYTES type_bytes(dtype, count)
#define RSCATTER_BYTES type_bytes(dtype, sum_counts(rcounts, comm))

/* PROBE(function, (parameters), (arguments), bytes, segment size argument or -1L) */
#define PROBE(name, params, args, bytes, seg)                \
    int name params                                          \
    {                                                        \
        static int (*next) params;                           \
        if (!next)                                           \
            *(void **)&next = forward(#name);                \
        record(#name, comm, bytes, seg);                     \
        depth++;                                             \
        int rc = next args;                                  \
        depth--;                                             \
        return rc;                                           \
    }
#define PLAIN(name, kind) PROBE(name, (kind##_A), (kind##_P), kind##_BYTES, -1L)

PLAIN(ompi_coll_base_allgather_intra_basic_linear, ALLGATHER)
PLAIN(ompi_coll_base_allgather_intra_bruck, ALLGATHER)
PLAIN(ompi_coll_base_allgather_intra_recursivedoubling, ALLGATHER)
PLAIN(ompi_coll_base_allgather_intra_ring, ALLGATHER)
PLAIN(ompi_coll_base_allgather_intra_neighborexchange, ALLGATHER)
PLAIN(ompi_coll_base_allgather_intra_two_procs, ALLGATHER)

PLAIN(ompi_coll_base_allgatherv_intra_basic_default, ALLGATHERV)
PLAIN(ompi_coll_base_allgatherv_intra_bruck, ALLGATHERV)
PLAIN(ompi_coll_base_allgatherv_intra_ring, ALLGATHERV)
PLAIN(ompi_coll_base_allgatherv_intra_neighborexchange, ALLGATHERV)
PLAIN(ompi_coll_base_allgatherv_intra_two_procs, ALLGATHERV)

PLAIN(ompi_coll_base_allreduce_intra_basic_linear, REDUCING)
PLAIN(ompi_coll_base_allreduce_intra_nonoverlapping, REDUCING)
PLAIN(ompi_coll_base_allreduce_intra_recursivedoubling, REDUCING)
PLAIN(ompi_coll_base_allreduce_intra_ring, REDUCING)
PROBE(ompi_coll_base_allreduce_intra_ring_segmented, (REDUCING_A, uint32_t seg),
      (REDUCING_P, seg), REDUCING_BYTES, (long)seg)
PLAIN(ompi_coll_base_allreduce_intra_redscat_allgather, REDUCING)

PLAIN(ompi_coll_base_alltoall_intra_basic_linear, ALLGATHER)
PLAIN(ompi_coll_base_alltoall_intra_pairwise, ALLGATHER)
PLAIN(ompi_coll_base_alltoall_intra_bruck, ALLGATHER)
PROBE(ompi_coll_base_alltoall_intra_linear_sync, (ALLGATHER_A, int maxreq),
      (ALLGATHER_P, maxreq), ALLGATHER_BYTES, -1L)
PLAIN(ompi_coll_base_alltoall_intra_two_procs, ALLGATHER)

PLAIN(ompi_coll_base_alltoallv_intra_basic_linear, ALLTOALLV)
PLAIN(ompi_coll_base_alltoallv_intra_pairwise, ALLTOALLV)

PLAIN(ompi_coll_base_barrier_intra_basic_linear, BARRIER)
PLAIN(ompi_coll_base_barrier_intra_doublering, BARRIER)
PLAIN(ompi_coll_base_barrier_intra_recursivedoubling, BARRIER)
PLAIN(ompi_coll_base_barrier_intra_bruck, BARRIER)
PLAIN(ompi_coll_base_barrier_intra_two_procs, BARRIER)
PLAIN(ompi_coll_base_barrier_intra_tree, BARRIER)

PLAIN(ompi_coll_base_bcast_intra_basic_linear, BCAST)
PROBE(ompi_coll_base_bcast_intra_chain, (BCAST_A, uint32_t seg, int32_t chains),
      (BCAST_P, seg, chains), BCAST_BYTES, (long)seg)
PROBE(ompi_coll_base_bcast_intra_pipeline, (BCAST_A, uint32_t seg), (BCAST_P, seg), BCAST_BYTES, (long)seg)
PROBE(ompi_coll_base_bcast_intra_split_bintree, (BCAST_A, uint32_t seg), (BCAST_P, seg),
      BCAST_BYTES, (long)seg)
PROBE(ompi_coll_base_bcast_intra_bintree, (BCAST_A, uint32_t seg), (BCAST_P, seg), BCAST_BYTES, (long)seg)
PROBE(ompi_coll_base_bcast_intra_binomial, (BCAST_A, uint32_t seg), (BCAST_P, seg), BCAST_BYTES, (long)seg)
PROBE(ompi_coll_base_bcast_intra_knomial, (BCAST_A, uint32_t seg, int radix),
      (BCAST_P, seg, radix), BCAST_BYTES, (long)seg)
PROBE(ompi_coll_base_bcast_intra_scatter_allgather, (BCAST_A, uint32_t seg), (BCAST_P, seg),
      BCAST_BYTES, (long)seg)
PROBE(ompi_coll_base_bcast_intra_scatter_allgather_ring, (BCAST_A, uint32_t seg),
      (BCAST_P, seg), BCAST_BYTES, (long)seg)

PLAIN(ompi_coll_base_exscan_intra_linear, REDUCING)
PLAIN(ompi_coll_base_exscan_intra_recursivedoubling, REDUCING)

PROBE(ompi_coll_base_gather_intra_basic_linear, (ROOTED_A), (ROOTED_P), GATHER_BYTES, -1L)
PROBE(ompi_coll_base_gather_intra_binomial, (ROOTED_A), (ROOTED_P), GATHER_BYTES, -1L)
PROBE(ompi_coll_base_gather_intra_linear_sync, (ROOTED_A, int first_seg),
      (ROOTED_P, first_seg), GATHER_BYTES, (long)first_seg)

PLAIN(ompi_coll_base_reduce_intra_basic_linear, REDUCE)
PROBE(ompi_coll_base_reduce_intra_chain, (REDUCE_A, uint32_t seg, int fanout, int maxreq),
      (REDUCE_P, seg, fanout, maxreq), REDUCE_BYTES, (long)seg)
PROBE(ompi_coll_base_reduce_intra_pipeline, (REDUCE_A, uint32_t seg, int maxreq),
      (REDUCE_P, seg, maxreq), REDUCE_BYTES, (long)seg)
PROBE(ompi_coll_base_reduce_intra_binary, (REDUCE_A, uint32_t seg, int maxreq),
      (REDUCE_P, seg, maxreq), REDUCE_BYTES, (long)seg)
PROBE(ompi_coll_base_reduce_intra_binomial, (REDUCE_A, uint32_t seg, int maxreq),
      (REDUCE_P, seg, maxreq), REDUCE_BYTES, (long)seg)
PROBE(ompi_coll_base_reduce_intra_in_order_binary, (REDUCE_A, uint32_t seg, int maxreq),
      (REDUCE_P, seg, maxreq), REDUCE_BYTES, (long)seg)
PLAIN(ompi_coll_base_reduce_intra_redscat_gather, REDUCE)

PLAIN(ompi_coll_base_reduce_scatter_intra_nonoverlapping, RSCATTER)
PLAIN(ompi_coll_base_reduce_scatter_intra_basic_recursivehalving, RSCATTER)
PLAIN(ompi_coll_base_reduce_scatter_intra_ring, RSCATTER)
PLAIN(ompi_coll_base_reduce_scatter_intra_butterfly, RSCATTER)

PLAIN(ompi_coll_base_reduce_scatter_block_basic_linear, REDUCING)
PLAIN(ompi_coll_base_reduce_scatter_block_intra_recursivedoubling, REDUCING)
PLAIN(ompi_coll_base_reduce_scatter_block_intra_recursivehalving, REDUCING)
PLAIN(ompi_coll_base_reduce_scatter_block_intra_butterfly, REDUCING)

PLAIN(ompi_coll_base_scan_intra_linear, REDUCING)
PLAIN(ompi_coll_base_scan_intra_recursivedoubling, REDUCING)

PROBE(ompi_coll_base_scatter_intra_basic_linear, (ROOTED_A), (ROOTED_P), SCATTER_BYTES, -1L)
PROBE(ompi_coll_base_scatter_intra_binomial, (ROOTED_A), (ROOTED_P), SCATTER_BYTES, -1L)
PROBE(ompi_coll_base_scatter_intra_linear_nb, (ROOTED_A, int max_reqs), (ROOTED_P, max_reqs),
      SCATTER_BYTES, -1L)

/* Text as one line: printable ASCII but '\' as is, everything else as \xNN. */
static void put_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c < 0x7f && c != '\\')
            putc(c, f);
        else
            fprintf(f, "\\x%02x", c);
    }
    putc('\n', f);
}

static void write_sites(const char *dir)
{
    char path[TEXT_MAX + 64];
    const char *env_rank = getenv("OMPI_COMM_WORLD_RANK");
    snprintf(path, sizeof path, "%s/sites.%ld", dir, (long)getpid());
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    if (gethostname(settings.host, sizeof settings.host - 1) != 0)
        snprintf(settings.host, sizeof settings.host, "?");
    if (!getcwd(settings.cwd, sizeof settings.cwd))
        settings.cwd[0] = '\0';
    fprintf(f, "collsel-coll-probe 1\n");
    /* without MPI_Finalize (an abort, a binding not wrapped) the launcher's rank, if any */
    fprintf(f, "rank %d %d\n", settings.captured ? settings.rank : (env_rank ? atoi(env_rank) : -1),
            settings.captured ? settings.size : -1);
    fprintf(f, "finalize %d\n", settings.captured);
    fprintf(f, "host ");
    put_text(f, settings.host);
    fprintf(f, "cwd ");
    put_text(f, settings.cwd);
    fprintf(f, "library ");
    put_text(f, settings.library);
    for (int i = 0; i < NSETTINGS && settings.captured; i++) {
        fprintf(f, "%s %s ", settings.found[i] ? "cvar" : "nocvar", setting_names[i]);
        put_text(f, settings.found[i] ? settings.value[i] : "");
    }
    if (rules_read.calls) {
        fprintf(f, "rules_read %d %d %d %016llx %ld ", rules_read.calls, rules_read.rc,
                rules_read.open_errno, (unsigned long long)rules_read.hash, rules_read.bytes);
        put_text(f, rules_read.name);
        if (rules_read.open_errno) {
            fprintf(f, "rules_open_error ");
            put_text(f, strerror(rules_read.open_errno));
        }
    }
    fprintf(f, "dropped %ld\n", dropped);
    for (int r = 0; r < nrows; r++)
        fprintf(f, "site %d %s %d %ld %ld %ld %d %ld\n", rows[r].comm_size, rows[r].fn,
                rows[r].nested, rows[r].bytes, rows[r].seg, rows[r].rule_size, rows[r].rule_alg,
                rows[r].calls);
    fprintf(f, "end\n");
    fclose(f);
}

__attribute__((destructor)) static void write_counts(void)
{
    const char *dir = getenv("COLL_PROBE_DIR");
    char path[TEXT_MAX + 64];
    if (!dir)
        return;
    snprintf(path, sizeof path, "%s/probe.%ld", dir, (long)getpid());
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    for (int r = 0; r < nrows; r++)
        fprintf(f, "%d %s %d %ld %ld\n", rows[r].comm, rows[r].fn, rows[r].nested,
                rows[r].bytes, rows[r].calls);
    fclose(f);
    write_sites(dir);
}
