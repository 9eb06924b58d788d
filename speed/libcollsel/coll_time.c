/* Time of MPI_Bcast (MPI_BYTE) or MPI_Reduce (MPI_INT, MPI_SUM) from root 0, MPI_Allreduce
 * (MPI_UNSIGNED_CHAR, MPI_SUM, as collsel_bench) or MPI_Alltoall (MPI_BYTE, M bytes to each rank:
 * collsel's m, one rank's block) on MPI_COMM_WORLD, an unmodified program for runs with and
 * without libcollsel or a rules file: per size, 2 warm-up calls, then REPS calls each after a
 * barrier, the slowest rank's time per call; rank 0 prints the median:
 *   time <collective> P=<size> m=<bytes> us=<median>
 * Usage: coll_time {bcast|reduce|allreduce|alltoall} REPS M [M ...] (reduce: M a multiple of 4). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum coll { BCAST, REDUCE, ALLREDUCE, ALLTOALL, NCOLL };
static const char *const names[NCOLL] = {"bcast", "reduce", "allreduce", "alltoall"};

static void call(enum coll c, void *a, void *b, long m)
{
    switch (c) {
    case BCAST:
        MPI_Bcast(a, (int)m, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case REDUCE:
        MPI_Reduce(a, b, (int)(m / 4), MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        break;
    case ALLREDUCE:
        MPI_Allreduce(a, b, (int)m, MPI_UNSIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD);
        break;
    default:
        MPI_Alltoall(a, (int)m, MPI_BYTE, b, (int)m, MPI_BYTE, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    int rank, size, reps = 0, i, r;
    enum coll c = NCOLL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (i = 0; argc > 1 && i < NCOLL; i++)
        if (strcmp(argv[1], names[i]) == 0)
            c = (enum coll)i;
    if (argc < 4 || c == NCOLL || (reps = atoi(argv[2])) < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: coll_time {bcast|reduce|allreduce|alltoall} REPS M [M ...]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (i = 3; i < argc; i++) {
        long m = atol(argv[i]);
        /* alltoall: a block for every rank */
        size_t bytes = (size_t)m * (c == ALLTOALL ? (size_t)size : 1) + 4;
        char *a = calloc(bytes, 1), *b = calloc(bytes, 1);
        double *t = malloc((size_t)reps * sizeof *t), *slowest = malloc((size_t)reps * sizeof *t);
        call(c, a, b, m);
        call(c, a, b, m);
        for (r = 0; r < reps; r++) {
            double t0;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            call(c, a, b, m);
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
