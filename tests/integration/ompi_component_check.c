/* The program tests/integration/test_ompi_component.py runs with and without coll/collsel.
 *   ompi_component_check check COLL M [M ...]   COLL on MPI_COMM_WORLD once per size M (bytes),
 *       checked for content: "check COLL m=M ok|FAIL" per size on rank 0
 *   ompi_component_check threads T   MPI_THREAD_MULTIPLE, T threads, each on its own duplicate of
 *       MPI_COMM_WORLD, bcast, reduce and allreduce of 1 B to 64 KiB concurrently, 5 times,
 *       checked: "threads T ok|FAIL provided=<level>" on rank 0
 *   ompi_component_check splitcall N   MPI_Comm_split, one 1-byte MPI_Bcast on the new
 *       communicator (what a library that sets a communicator up at its first call pays) and
 *       MPI_Comm_free, N times: "splitcall n=N ns=<per split, bcast and free>" on rank 0
 * COLL: bcast (MPI_BYTE, root 0), reduce (root 0) or allreduce (MPI_UNSIGNED_CHAR, MPI_SUM), as
 * collsel's benchmark calls them, so m is the count; allreduce_nc: allreduce with the same sum
 * as a user operation created non-commutative. The checks travel to rank 0 by
 * MPI_Send/MPI_Recv: no collective of their own disturbs the trace. Exit 0 when all passed. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Below 61, so a sum over up to 4 ranks does not wrap: Debian's Open MPI 4.1.4 op/avx adds
 * MPI_UNSIGNED_CHAR with saturation (142 + 149 gives 255, from 64 elements on). */
static unsigned char pattern(long i, int rank)
{
    return (unsigned char)((i * 131 + rank * 7 + 11) % 61);
}

/* The element i of the sum over ranks of pattern(i, rank). */
static unsigned char summed(long i, int size)
{
    unsigned s = 0;
    for (int r = 0; r < size; r++)
        s += pattern(i, r);
    return (unsigned char)(s & 0xff);
}

static void sum_bytes(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++)
        ((unsigned char *)inout)[i] += ((unsigned char *)in)[i];
}

/* 1 when this rank's result of one call of `coll` on m bytes on `comm` is right. */
static int run_on(const char *coll, long m, int rank, int size, MPI_Comm comm)
{
    unsigned char *in = calloc((size_t)m + 1, 1), *out = calloc((size_t)m + 1, 1);
    int ok = 1;
    long i;
    for (i = 0; i < m; i++) {
        in[i] = pattern(i, rank);
        out[i] = 0;
    }
    if (strcmp(coll, "bcast") == 0) {
        MPI_Bcast(in, (int)m, MPI_BYTE, 0, comm);
        for (i = 0; i < m; i++)
            ok &= in[i] == pattern(i, 0);
    } else if (strcmp(coll, "reduce") == 0) {
        MPI_Reduce(in, out, (int)m, MPI_UNSIGNED_CHAR, MPI_SUM, 0, comm);
        for (i = 0; i < m && rank == 0; i++)
            ok &= out[i] == summed(i, size);
    } else if (strcmp(coll, "allreduce") == 0 || strcmp(coll, "allreduce_nc") == 0) {
        MPI_Op op = MPI_SUM;
        if (strcmp(coll, "allreduce_nc") == 0)
            MPI_Op_create(sum_bytes, 0, &op);
        MPI_Allreduce(in, out, (int)m, MPI_UNSIGNED_CHAR, op, comm);
        if (op != MPI_SUM)
            MPI_Op_free(&op);
        for (i = 0; i < m; i++)
            ok &= out[i] == summed(i, size);
    } else {
        fprintf(stderr, "ompi_component_check: unknown collective %s\n", coll);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    free(in);
    free(out);
    return ok;
}

static int run_once(const char *coll, long m, int rank, int size)
{
    return run_on(coll, m, rank, size, MPI_COMM_WORLD);
}

struct job {
    MPI_Comm comm;
    int rank, size, ok;
};

static void *worker(void *arg)
{
    static const char *const colls[] = {"bcast", "reduce", "allreduce"};
    static const long sizes[] = {1, 64, 4096, 65536};
    struct job *j = arg;
    for (int round = 0; round < 5; round++)
        for (int c = 0; c < 3; c++)
            for (int k = 0; k < 4; k++)
                j->ok &= run_on(colls[c], sizes[k], j->rank, j->size, j->comm);
    return NULL;
}

/* T threads at once, each on its own communicator; 1 when every result was right. */
static int run_threads(int threads, int rank, int size)
{
    struct job jobs[16];
    pthread_t ids[16];
    int ok = 1, t;
    for (t = 0; t < threads; t++) {
        jobs[t] = (struct job){MPI_COMM_NULL, rank, size, 1};
        MPI_Comm_dup(MPI_COMM_WORLD, &jobs[t].comm);
    }
    for (t = 0; t < threads; t++)
        pthread_create(&ids[t], NULL, worker, &jobs[t]);
    for (t = 0; t < threads; t++) {
        pthread_join(ids[t], NULL);
        ok &= jobs[t].ok;
        MPI_Comm_free(&jobs[t].comm);
    }
    return ok;
}

/* Every rank's flag, at rank 0 (point to point). */
static int all_ok(int ok, int rank, int size)
{
    if (rank != 0) {
        MPI_Send(&ok, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        return ok;
    }
    for (int r = 1; r < size; r++) {
        int other;
        MPI_Recv(&other, 1, MPI_INT, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        ok &= other;
    }
    return ok;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median over 5 batches of the time per split, bcast and free, in ns. */
static double median_ns(long reps, int rank, int size)
{
    double t[5];
    unsigned char byte = 1;
    for (int b = 0; b < 5; b++) {
        double start;
        MPI_Barrier(MPI_COMM_WORLD);
        start = MPI_Wtime();
        for (long k = 0; k < reps; k++) {
            MPI_Comm c;
            MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &c);   /* all of them, reordered */
            MPI_Bcast(&byte, 1, MPI_BYTE, 0, c);
            MPI_Comm_free(&c);
        }
        t[b] = (MPI_Wtime() - start) / (double)reps * 1e9;
    }
    qsort(t, 5, sizeof t[0], by_value);
    return t[2];
}

int main(int argc, char **argv)
{
    int rank, size, ok = 1, provided = MPI_THREAD_SINGLE;
    if (argc == 3 && strcmp(argv[1], "threads") == 0)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc >= 3 && strcmp(argv[1], "check") == 0) {
        for (int a = 3; a < argc; a++) {
            long m = atol(argv[a]);
            int good = all_ok(run_once(argv[2], m, rank, size), rank, size);
            if (rank == 0)
                printf("check %s m=%ld %s\n", argv[2], m, good ? "ok" : "FAIL");
            ok &= good;
        }
    } else if (argc == 3 && strcmp(argv[1], "threads") == 0) {
        int threads = atoi(argv[2]) < 1 ? 1 : atoi(argv[2]) > 16 ? 16 : atoi(argv[2]);
        ok = provided == MPI_THREAD_MULTIPLE
             && all_ok(run_threads(threads, rank, size), rank, size);
        if (rank == 0)
            printf("threads %d %s provided=%d\n", threads, ok ? "ok" : "FAIL", provided);
    } else if (argc == 3 && strcmp(argv[1], "splitcall") == 0) {
        double ns = median_ns(atol(argv[2]) / 5, rank, size);
        if (rank == 0)
            printf("splitcall n=%ld ns=%.0f\n", atol(argv[2]), ns);
    } else {
        if (rank == 0)
            fprintf(stderr, "usage: ompi_component_check check COLL M... | "
                    "splitcall N | threads T\n");
        ok = 0;
    }
    fflush(stdout);
    MPI_Finalize();
    return ok ? 0 : 1;
}
