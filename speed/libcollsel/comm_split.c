/* The cost of making communicators: N times MPI_Comm_split of MPI_COMM_WORLD and MPI_Comm_free,
 * first alone, then with one 1-int MPI_Bcast and MPI_Reduce on each new communicator (its first
 * calls: libcollsel resolves the two trees and makes the shadows those calls use). The mean
 * microseconds per communicator, the slowest rank's:
 *   comm_split n=N split_free_us=X split_bcast_reduce_free_us=Y
 * Usage: comm_split [N] (default 1000). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double per_comm_us(int n, int use, int rank)
{
    int k, x = 1, y = 0;
    double t, slowest;
    MPI_Comm c;
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    for (k = 0; k < n; k++) {
        MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &c);
        if (use) {
            MPI_Bcast(&x, 1, MPI_INT, 0, c);
            MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, 0, c);
        }
        MPI_Comm_free(&c);
    }
    t = (MPI_Wtime() - t) / n * 1e6;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000, rank;
    double alone, used;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    per_comm_us(n / 10 + 1, 1, rank);   /* warm-up */
    alone = per_comm_us(n, 0, rank);
    used = per_comm_us(n, 1, rank);
    if (rank == 0)
        printf("comm_split n=%d split_free_us=%.1f split_bcast_reduce_free_us=%.1f\n", n, alone,
               used);
    MPI_Finalize();
    return 0;
}
