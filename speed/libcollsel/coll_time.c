/* Time of MPI_Bcast (MPI_BYTE) or MPI_Reduce (MPI_INT, MPI_SUM) from root 0 on MPI_COMM_WORLD,
 * an unmodified program for runs with and without libcollsel: per size, 2 warm-up calls, then
 * REPS calls each after a barrier, the slowest rank's time per call; rank 0 prints the median:
 *   time <bcast|reduce> P=<size> m=<bytes> us=<median>
 * Usage: coll_time {bcast|reduce} REPS M [M ...] (reduce: M a multiple of 4). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void call(int bcast, void *a, void *b, long m)
{
    if (bcast)
        MPI_Bcast(a, (int)m, MPI_BYTE, 0, MPI_COMM_WORLD);
    else
        MPI_Reduce(a, b, (int)(m / 4), MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int rank, size, bcast, reps = 0, i, r;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4 || (strcmp(argv[1], "bcast") && strcmp(argv[1], "reduce"))
        || (reps = atoi(argv[2])) < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: coll_time {bcast|reduce} REPS M [M ...]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    bcast = strcmp(argv[1], "bcast") == 0;
    for (i = 3; i < argc; i++) {
        long m = atol(argv[i]);
        char *a = calloc((size_t)m + 4, 1), *b = calloc((size_t)m + 4, 1);
        double *t = malloc((size_t)reps * sizeof *t), *slowest = malloc((size_t)reps * sizeof *t);
        call(bcast, a, b, m);
        call(bcast, a, b, m);
        for (r = 0; r < reps; r++) {
            double t0;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            call(bcast, a, b, m);
            t[r] = (MPI_Wtime() - t0) * 1e6;
        }
        MPI_Reduce(t, slowest, reps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            qsort(slowest, (size_t)reps, sizeof *slowest, cmp_double);
            printf("time %s P=%d m=%ld us=%.2f\n", argv[1], size, m, slowest[reps / 2]);
            fflush(stdout);
        }
        free(a);
        free(b);
        free(t);
        free(slowest);
    }
    MPI_Finalize();
    return 0;
}
