/* coll_probe: an LD_PRELOAD library that records which Open MPI 4.1 base algorithm each
 * communicator runs, and the message quantity the coll/tuned fixed decision would compute for
 * that call (tests/forcing/test_forcing.py).
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
 * At exit each process writes "comm_index function depth bytes calls" lines to
 * $COLL_PROBE_DIR/probe.<pid>. Threads (MPI_THREAD_MULTIPLE) may call: the tables are
 * guarded by a mutex, the depth is per thread.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_COMMS 512
#define MAX_ROWS 8192

static void *dup_comms[MAX_COMMS];
static int ndups;
static struct row { int comm; const char *fn; int nested; long bytes; long calls; } rows[MAX_ROWS];
static int nrows;
static __thread int depth;   /* probed functions active on this thread */
static pthread_mutex_t tables = PTHREAD_MUTEX_INITIALIZER;

static void *forward(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "coll_probe: %s not found\n", name);
        abort();
    }
    return f;
}

static void record_locked(const char *fn, void *comm, long bytes)
{
    int index = -1;
    for (int i = 0; i < ndups; i++)
        if (dup_comms[i] == comm)
            index = i;
    int nested = depth > 0;
    for (int r = 0; r < nrows; r++)
        if (rows[r].comm == index && rows[r].nested == nested && rows[r].bytes == bytes
            && strcmp(rows[r].fn, fn) == 0) {
            rows[r].calls++;
            return;
        }
    if (nrows < MAX_ROWS)
        rows[nrows++] = (struct row){index, fn, nested, bytes, 1};
}

static void record(const char *fn, void *comm, long bytes)
{
    pthread_mutex_lock(&tables);
    record_locked(fn, comm, bytes);
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

static int comm_size(void *comm)
{
    int p = 1;
    MPI_Comm_size((MPI_Comm)comm, &p);
    return p;
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

#define PROBE(name, params, args, bytes)                     \
    int name params                                          \
    {                                                        \
        static int (*next) params;                           \
        if (!next)                                           \
            *(void **)&next = forward(#name);                \
        record(#name, comm, bytes);                          \
        depth++;                                             \
        int rc = next args;                                  \
        depth--;                                             \
        return rc;                                           \
    }
#define PLAIN(name, kind) PROBE(name, (kind##_A), (kind##_P), kind##_BYTES)

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
      (REDUCING_P, seg), REDUCING_BYTES)
PLAIN(ompi_coll_base_allreduce_intra_redscat_allgather, REDUCING)

PLAIN(ompi_coll_base_alltoall_intra_basic_linear, ALLGATHER)
PLAIN(ompi_coll_base_alltoall_intra_pairwise, ALLGATHER)
PLAIN(ompi_coll_base_alltoall_intra_bruck, ALLGATHER)
PROBE(ompi_coll_base_alltoall_intra_linear_sync, (ALLGATHER_A, int maxreq),
      (ALLGATHER_P, maxreq), ALLGATHER_BYTES)
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
      (BCAST_P, seg, chains), BCAST_BYTES)
PROBE(ompi_coll_base_bcast_intra_pipeline, (BCAST_A, uint32_t seg), (BCAST_P, seg), BCAST_BYTES)
PROBE(ompi_coll_base_bcast_intra_split_bintree, (BCAST_A, uint32_t seg), (BCAST_P, seg),
      BCAST_BYTES)
PROBE(ompi_coll_base_bcast_intra_bintree, (BCAST_A, uint32_t seg), (BCAST_P, seg), BCAST_BYTES)
PROBE(ompi_coll_base_bcast_intra_binomial, (BCAST_A, uint32_t seg), (BCAST_P, seg), BCAST_BYTES)
PROBE(ompi_coll_base_bcast_intra_knomial, (BCAST_A, uint32_t seg, int radix),
      (BCAST_P, seg, radix), BCAST_BYTES)
PROBE(ompi_coll_base_bcast_intra_scatter_allgather, (BCAST_A, uint32_t seg), (BCAST_P, seg),
      BCAST_BYTES)
PROBE(ompi_coll_base_bcast_intra_scatter_allgather_ring, (BCAST_A, uint32_t seg),
      (BCAST_P, seg), BCAST_BYTES)

PLAIN(ompi_coll_base_exscan_intra_linear, REDUCING)
PLAIN(ompi_coll_base_exscan_intra_recursivedoubling, REDUCING)

PROBE(ompi_coll_base_gather_intra_basic_linear, (ROOTED_A), (ROOTED_P), GATHER_BYTES)
PROBE(ompi_coll_base_gather_intra_binomial, (ROOTED_A), (ROOTED_P), GATHER_BYTES)
PROBE(ompi_coll_base_gather_intra_linear_sync, (ROOTED_A, int first_seg),
      (ROOTED_P, first_seg), GATHER_BYTES)

PLAIN(ompi_coll_base_reduce_intra_basic_linear, REDUCE)
PROBE(ompi_coll_base_reduce_intra_chain, (REDUCE_A, uint32_t seg, int fanout, int maxreq),
      (REDUCE_P, seg, fanout, maxreq), REDUCE_BYTES)
PROBE(ompi_coll_base_reduce_intra_pipeline, (REDUCE_A, uint32_t seg, int maxreq),
      (REDUCE_P, seg, maxreq), REDUCE_BYTES)
PROBE(ompi_coll_base_reduce_intra_binary, (REDUCE_A, uint32_t seg, int maxreq),
      (REDUCE_P, seg, maxreq), REDUCE_BYTES)
PROBE(ompi_coll_base_reduce_intra_binomial, (REDUCE_A, uint32_t seg, int maxreq),
      (REDUCE_P, seg, maxreq), REDUCE_BYTES)
PROBE(ompi_coll_base_reduce_intra_in_order_binary, (REDUCE_A, uint32_t seg, int maxreq),
      (REDUCE_P, seg, maxreq), REDUCE_BYTES)
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

PROBE(ompi_coll_base_scatter_intra_basic_linear, (ROOTED_A), (ROOTED_P), SCATTER_BYTES)
PROBE(ompi_coll_base_scatter_intra_binomial, (ROOTED_A), (ROOTED_P), SCATTER_BYTES)
PROBE(ompi_coll_base_scatter_intra_linear_nb, (ROOTED_A, int max_reqs), (ROOTED_P, max_reqs),
      SCATTER_BYTES)

__attribute__((destructor)) static void write_counts(void)
{
    const char *dir = getenv("COLL_PROBE_DIR");
    char path[4096];
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
}
