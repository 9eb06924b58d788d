/* MPI_Bcast (MPI_BYTE) and MPI_Reduce (MPI_INT, MPI_SUM) on MPI_COMM_WORLD for the given
 * message sizes (bytes), each checked for content. One output line per size on rank 0:
 *   check bcast m=<bytes> ok|FAIL <what>
 *   check reduce m=<bytes> ok|FAIL <what>
 *   time bcast m=<bytes> us=<median of reps>      (with --reps N > 0)
 * Usage: coll_check [--reps N] {bcast|reduce} M [M ...]
 * Reduce sizes must be multiples of sizeof(int). Exit 0 when every check passed, 1 otherwise.
 * Used by the integration tests (patched Open MPI and MPICH runs).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pattern(long i, long m)
{
    return (unsigned char)((i * 131 + m * 7 + 11) & 0xff);
}

static int value(int rank, long i)
{
    return (int)((rank * 7919L + i * 13L) % 100003L);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int check_bcast(long m, int rank, int root)
{
    unsigned char *buf = malloc(m > 0 ? (size_t)m : 1);
    long i, bad = -1;
    for (i = 0; i < m; i++) {
        buf[i] = rank == root ? pattern(i, m) : 0;
    }
    MPI_Bcast(buf, (int)m, MPI_BYTE, root, MPI_COMM_WORLD);
    for (i = 0; i < m && bad < 0; i++) {
        if (buf[i] != pattern(i, m)) {
            bad = i;
        }
    }
    free(buf);
    return bad < 0;
}

static int check_reduce(long m, int rank, int size, int root)
{
    long count = m / (long)sizeof(int), i, bad = -1;
    int *send = malloc((size_t)(count > 0 ? count : 1) * sizeof(int));
    int *recv = malloc((size_t)(count > 0 ? count : 1) * sizeof(int));
    for (i = 0; i < count; i++) {
        send[i] = value(rank, i);
        recv[i] = -1;
    }
    MPI_Reduce(send, recv, (int)count, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    if (rank == root) {
        for (i = 0; i < count && bad < 0; i++) {
            long want = 0;
            int r;
            for (r = 0; r < size; r++) {
                want += value(r, i);
            }
            if (recv[i] != (int)want) {
                bad = i;
            }
        }
    }
    free(send);
    free(recv);
    return bad < 0;
}

static double time_bcast(long m, int reps)
{
    unsigned char *buf = calloc(m > 0 ? (size_t)m : 1, 1);
    double *t = malloc((size_t)reps * sizeof(double)), med;
    int r;
    for (r = 0; r < reps; r++) {
        double t0, local, worst;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_Bcast(buf, (int)m, MPI_BYTE, 0, MPI_COMM_WORLD);
        local = MPI_Wtime() - t0;
        MPI_Allreduce(&local, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t[r] = worst;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    med = t[reps / 2];
    free(t);
    free(buf);
    return med * 1e6;
}

int main(int argc, char **argv)
{
    int rank, size, a = 1, reps = 0, failed = 0, all_failed = 0, is_bcast;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (a + 1 < argc && strcmp(argv[a], "--reps") == 0) {
        reps = atoi(argv[a + 1]);
        a += 2;
    }
    if (a >= argc || (strcmp(argv[a], "bcast") != 0 && strcmp(argv[a], "reduce") != 0)) {
        if (rank == 0) {
            fprintf(stderr, "usage: coll_check [--reps N] {bcast|reduce} M [M ...]\n");
        }
        MPI_Finalize();
        return 2;
    }
    is_bcast = strcmp(argv[a], "bcast") == 0;
    for (a = a + 1; a < argc; a++) {
        long m = atol(argv[a]);
        int ok, all_ok;
        if (!is_bcast && m % (long)sizeof(int) != 0) {
            if (rank == 0) {
                fprintf(stderr, "coll_check: reduce size %ld is not a multiple of %d\n", m,
                        (int)sizeof(int));
            }
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        ok = is_bcast ? check_bcast(m, rank, 0) : check_reduce(m, rank, size, 0);
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("check %s m=%ld %s\n", is_bcast ? "bcast" : "reduce", m,
                   all_ok ? "ok" : "FAIL");
        }
        failed |= !all_ok;
        if (reps > 0 && is_bcast) {
            double us = time_bcast(m, reps);
            if (rank == 0) {
                printf("time bcast m=%ld us=%.3f\n", m, us);
            }
        }
        if (rank == 0) {
            fflush(stdout);
        }
    }
    MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    MPI_Finalize();
    return all_failed ? 1 : 0;
}
