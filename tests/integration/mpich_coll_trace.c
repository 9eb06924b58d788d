/* Which MPICH 4.0 algorithm ran each collective call, for all 14 collectives collsel measures,
 * and whether the result is right. Linked against libmpich.a with -Wl,--wrap=<every function of
 * ALGORITHMS below> (Debian's libmpich.so hides them): each __wrap_<function> notes its name when
 * it is the outermost algorithm of the call this program makes, and calls __real_<function>.
 * The wrappers pass their arguments through untouched as eight-byte words: every MPIR_ algorithm
 * takes integers and pointers only (no floating point), at most 10, and on x86-64 these travel
 * in registers and eight-byte stack slots, so forwarding 10 of them is exact.
 * Usage: mpich_coll_trace [--reps N] COLLECTIVE M [M ...]   (barrier: M is ignored, give 0)
 * Output on rank 0, one line per size (m as collsel's m: docs/guide/collectives.md):
 *   ran <collective> m=<m> alg=<outermost algorithm function or none> check=ok|FAIL [us=T]
 * with --reps N: T is the median over N more calls (each after a barrier) of the slowest rank's
 * time in the collective itself (buffers filled and checked outside it).
 * Elements are 1 byte (MPI_BYTE; reductions MPI_UNSIGNED_CHAR with MPI_SUM), root 0, equal
 * counts (reduce_scatter: m bytes in all, split as evenly as possible). Exit 1 if a check failed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALGORITHMS(X)                                                                          \
    X(MPIR_Allgather_allcomm_nb) X(MPIR_Allgather_intra_brucks)                                \
    X(MPIR_Allgather_intra_recursive_doubling) X(MPIR_Allgather_intra_ring)                    \
    X(MPIR_Allgatherv_allcomm_nb) X(MPIR_Allgatherv_intra_brucks)                              \
    X(MPIR_Allgatherv_intra_recursive_doubling) X(MPIR_Allgatherv_intra_ring)                  \
    X(MPIR_Allreduce_allcomm_nb) X(MPIR_Allreduce_intra_recursive_doubling)                    \
    X(MPIR_Allreduce_intra_reduce_scatter_allgather) X(MPIR_Allreduce_intra_smp)               \
    X(MPIR_Alltoall_allcomm_nb) X(MPIR_Alltoall_intra_brucks) X(MPIR_Alltoall_intra_pairwise)  \
    X(MPIR_Alltoall_intra_pairwise_sendrecv_replace) X(MPIR_Alltoall_intra_scattered)          \
    X(MPIR_Alltoallv_allcomm_nb) X(MPIR_Alltoallv_intra_pairwise_sendrecv_replace)             \
    X(MPIR_Alltoallv_intra_scattered)                                                          \
    X(MPIR_Barrier_allcomm_nb) X(MPIR_Barrier_intra_dissemination) X(MPIR_Barrier_intra_smp)   \
    X(MPIR_Bcast_allcomm_nb) X(MPIR_Bcast_intra_binomial)                                      \
    X(MPIR_Bcast_intra_scatter_recursive_doubling_allgather)                                   \
    X(MPIR_Bcast_intra_scatter_ring_allgather) X(MPIR_Bcast_intra_smp)                         \
    X(MPIR_Exscan_allcomm_nb) X(MPIR_Exscan_intra_recursive_doubling)                          \
    X(MPIR_Gather_allcomm_nb) X(MPIR_Gather_intra_binomial)                                    \
    X(MPIR_Reduce_allcomm_nb) X(MPIR_Reduce_intra_binomial)                                    \
    X(MPIR_Reduce_intra_reduce_scatter_gather) X(MPIR_Reduce_intra_smp)                        \
    X(MPIR_Reduce_scatter_allcomm_nb) X(MPIR_Reduce_scatter_intra_noncommutative)              \
    X(MPIR_Reduce_scatter_intra_pairwise) X(MPIR_Reduce_scatter_intra_recursive_doubling)      \
    X(MPIR_Reduce_scatter_intra_recursive_halving)                                             \
    X(MPIR_Reduce_scatter_block_allcomm_nb) X(MPIR_Reduce_scatter_block_intra_noncommutative)  \
    X(MPIR_Reduce_scatter_block_intra_pairwise)                                                \
    X(MPIR_Reduce_scatter_block_intra_recursive_doubling)                                      \
    X(MPIR_Reduce_scatter_block_intra_recursive_halving)                                       \
    X(MPIR_Scan_allcomm_nb) X(MPIR_Scan_intra_recursive_doubling) X(MPIR_Scan_intra_smp)       \
    X(MPIR_Scatter_allcomm_nb) X(MPIR_Scatter_intra_binomial)

static int in_call, depth;
static const char *ran;
static double elapsed;   /* seconds of the last collective call itself */
#define TIMED(...)                                                                             \
    do {                                                                                       \
        double t0_ = MPI_Wtime();                                                              \
        __VA_ARGS__;                                                                           \
        elapsed = MPI_Wtime() - t0_;                                                           \
    } while (0)

#define WORDS long a0, long a1, long a2, long a3, long a4, long a5, long a6, long a7, long a8, \
    long a9
#define PASS a0, a1, a2, a3, a4, a5, a6, a7, a8, a9
#define WRAP(function)                                                                         \
    int __real_##function(WORDS);                                                              \
    int __wrap_##function(WORDS);                                                              \
    int __wrap_##function(WORDS)                                                               \
    {                                                                                          \
        int rc;                                                                                \
        if (in_call && depth++ == 0 && ran == NULL)                                            \
            ran = #function;                                                                   \
        rc = __real_##function(PASS);                                                          \
        if (in_call)                                                                           \
            depth--;                                                                           \
        return rc;                                                                             \
    }
ALGORITHMS(WRAP)

static unsigned char byte_of(int rank, long i)
{
    return (unsigned char)((rank * 37 + i * 11 + 5) & 0xff);
}

static unsigned char sum_upto(int last, long i)   /* sum of byte_of(r, i), r = 0..last */
{
    unsigned s = 0;
    for (int r = 0; r <= last; r++)
        s += byte_of(r, i);
    return (unsigned char)s;
}

/* One call of `coll` with collsel's m; 1 when every checked byte is right. */
static int call(const char *coll, long m, int rank, int p)
{
    long n = m * p, ok = 1, i;
    unsigned char *s = malloc((size_t)(n + 1)), *r = malloc((size_t)(n + 1));
    int *counts = malloc(sizeof(int) * (size_t)p), *displs = malloc(sizeof(int) * (size_t)p);
    for (i = 0; i < p; i++) {
        counts[i] = (int)m;
        displs[i] = (int)(i * m);
    }
    for (i = 0; i < n; i++) {
        s[i] = byte_of(rank, i);
        r[i] = 0;
    }
    MPI_Comm w = MPI_COMM_WORLD;
    in_call = 1;
    depth = 0;
    ran = NULL;
    if (!strcmp(coll, "barrier")) {
        TIMED(MPI_Barrier(w));
    } else if (!strcmp(coll, "bcast")) {
        TIMED(MPI_Bcast(rank == 0 ? s : r, (int)m, MPI_BYTE, 0, w));
        if (rank == 0)
            memcpy(r, s, (size_t)m);
        for (i = 0; i < m; i++)
            ok &= r[i] == byte_of(0, i);
    } else if (!strcmp(coll, "reduce") || !strcmp(coll, "allreduce")) {
        int all = coll[0] == 'a';
        if (all)
            TIMED(MPI_Allreduce(s, r, (int)m, MPI_UNSIGNED_CHAR, MPI_SUM, w));
        else
            TIMED(MPI_Reduce(s, r, (int)m, MPI_UNSIGNED_CHAR, MPI_SUM, 0, w));
        for (i = 0; i < m && (all || rank == 0); i++)
            ok &= r[i] == sum_upto(p - 1, i);
    } else if (!strcmp(coll, "scan") || !strcmp(coll, "exscan")) {
        int ex = coll[0] == 'e';
        if (ex)
            TIMED(MPI_Exscan(s, r, (int)m, MPI_UNSIGNED_CHAR, MPI_SUM, w));
        else
            TIMED(MPI_Scan(s, r, (int)m, MPI_UNSIGNED_CHAR, MPI_SUM, w));
        for (i = 0; i < m && (!ex || rank > 0); i++)
            ok &= r[i] == sum_upto(ex ? rank - 1 : rank, i);
    } else if (!strcmp(coll, "allgather") || !strcmp(coll, "allgatherv") ||
               !strcmp(coll, "gather")) {
        if (coll[0] == 'g')
            TIMED(MPI_Gather(s, (int)m, MPI_BYTE, r, (int)m, MPI_BYTE, 0, w));
        else if (!strcmp(coll, "allgather"))
            TIMED(MPI_Allgather(s, (int)m, MPI_BYTE, r, (int)m, MPI_BYTE, w));
        else
            TIMED(MPI_Allgatherv(s, (int)m, MPI_BYTE, r, counts, displs, MPI_BYTE, w));
        for (i = 0; i < n && (coll[0] != 'g' || rank == 0); i++)
            ok &= r[i] == byte_of((int)(i / m), i % m);
    } else if (!strcmp(coll, "scatter")) {
        TIMED(MPI_Scatter(s, (int)m, MPI_BYTE, r, (int)m, MPI_BYTE, 0, w));
        for (i = 0; i < m; i++)
            ok &= r[i] == byte_of(0, rank * m + i);
    } else if (!strcmp(coll, "alltoall") || !strcmp(coll, "alltoallv")) {
        if (!strcmp(coll, "alltoall"))
            TIMED(MPI_Alltoall(s, (int)m, MPI_BYTE, r, (int)m, MPI_BYTE, w));
        else
            TIMED(MPI_Alltoallv(s, counts, displs, MPI_BYTE, r, counts, displs, MPI_BYTE,
                                w));
        for (i = 0; i < n; i++)   /* block j came from rank j's block `rank` */
            ok &= r[i] == byte_of((int)(i / m), rank * m + i % m);
    } else if (!strcmp(coll, "reduce_scatter_block")) {
        TIMED(MPI_Reduce_scatter_block(s, r, (int)m, MPI_UNSIGNED_CHAR, MPI_SUM, w));
        for (i = 0; i < m; i++)
            ok &= r[i] == sum_upto(p - 1, rank * m + i);
    } else if (!strcmp(coll, "reduce_scatter")) {   /* m in all, split evenly */
        long first = 0;
        for (i = 0; i < p; i++) {
            counts[i] = (int)(m / p + (i < m % p));
            if (i < rank)
                first += counts[i];
        }
        TIMED(MPI_Reduce_scatter(s, r, counts, MPI_UNSIGNED_CHAR, MPI_SUM, w));
        for (i = 0; i < counts[rank]; i++)
            ok &= r[i] == sum_upto(p - 1, first + i);
    } else {
        in_call = 0;
        fprintf(stderr, "unknown collective %s\n", coll);
        MPI_Abort(w, 2);
    }
    in_call = 0;
    free(s);
    free(r);
    free(counts);
    free(displs);
    return (int)ok;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median over `reps` calls of the slowest rank's time (us). */
static double median_us(const char *coll, long m, int rank, int p, int reps)
{
    double *t = malloc(sizeof(double) * (size_t)reps), mid;
    for (int k = 0; k < reps; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        call(coll, m, rank, p);
        MPI_Allreduce(&elapsed, &t[k], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    mid = t[reps / 2] * 1e6;
    free(t);
    return mid;
}

int main(int argc, char **argv)
{
    int rank, p, failed = 0, reps = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc > 2 && !strcmp(argv[1], "--reps")) {
        reps = atoi(argv[2]);
        argv += 2;
        argc -= 2;
    }
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: %s COLLECTIVE M [M ...]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    for (int k = 2; k < argc; k++) {
        long m = atol(argv[k]);
        int ok = call(argv[1], m, rank, p), all = 0;
        const char *first = ran;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        double us = reps > 0 ? median_us(argv[1], m, rank, p, reps) : 0;
        if (rank == 0) {
            printf("ran %s m=%ld alg=%s check=%s", argv[1], m, first ? first : "none",
                   all ? "ok" : "FAIL");
            if (reps > 0)
                printf(" us=%.1f", us);
            printf("\n");
        }
        failed |= !all;
    }
    MPI_Finalize();
    return failed;
}
