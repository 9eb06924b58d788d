/* intel_algorithm_trace COLL BYTES [REPS]: MPI_Bcast (root 0) or MPI_Allreduce (MPI_SUM) of
 * BYTES bytes of MPI_INT (BYTES a multiple of 4, else of MPI_UNSIGNED_CHAR: every size a byte
 * apart, as the by-size sweep measures), REPS times (default 1), under Intel MPI. Run under gdb with a
 * breakpoint on each coll algorithm function of libmpi.so (test_intel_in_intel.py), it shows
 * which one Intel MPI ran; with REPS it times them (rank 0 prints the mean seconds per call). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, bytes = argc > 2 ? atoi(argv[2]) : 4;
    MPI_Datatype type = bytes % 4 ? MPI_UNSIGNED_CHAR : MPI_INT;
    int count = bytes % 4 ? bytes : bytes / 4;
    long reps = argc > 3 ? atol(argv[3]) : 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3 || count < 1 || reps < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: %s bcast|allreduce BYTES [REPS]\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int *a = calloc((size_t)count, sizeof *a), *b = calloc((size_t)count, sizeof *b);
    int bcast = strcmp(argv[1], "bcast") == 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long r = 0; r < reps; r++) {
        if (bcast)
            MPI_Bcast(a, count, type, 0, MPI_COMM_WORLD);
        else
            MPI_Allreduce(a, b, count, type, MPI_SUM, MPI_COMM_WORLD);
    }
    double per_call = (MPI_Wtime() - t0) / (double)reps;
    if (rank == 0 && argc > 3)
        printf("seconds_per_call=%.9f\n", per_call);
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
