/* A collective-heavy MPI program for `collsel profile` (tests/integration/test_profile_mpis.py)
 * and the census overhead (speed/census/bench.sh):
 *     profile_app [N]
 * N rounds (default 1000) of: allreduce of 1 double on MPI_COMM_WORLD, allreduce of 1,024
 * doubles, and every tenth round bcast of 64 KiB from rank 0 and a barrier; once, on two
 * halves of the world (MPI_Comm_split by rank parity), allgather of 16 ints per rank. Exit 0 and
 * "profile_app ok N in S s" from rank 0 when every result is right, S the time of the N rounds
 * (MPI_Wtime, rank 0, after a barrier). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG 1024
#define BCAST_BYTES 65536
#define BLOCK 16

int main(int argc, char **argv)
{
    static double big_in[BIG], big_out[BIG];
    static char buf[BCAST_BYTES];
    int rank, size, i, k, n = argc > 1 ? atoi(argv[1]) : 1000, bad = 0, any_bad = 0, half_size;
    int block[BLOCK], *all;
    double one, sum, start;
    MPI_Comm half;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (k = 0; k < BIG; k++)
        big_in[k] = rank + k;
    MPI_Barrier(MPI_COMM_WORLD);
    start = MPI_Wtime();
    for (i = 0; i < n; i++) {
        one = rank + 1;
        MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        bad |= sum != size * (size + 1) / 2.0;
        MPI_Allreduce(big_in, big_out, BIG, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        bad |= big_out[BIG - 1] != size * (BIG - 1.0) + size * (size - 1) / 2.0;
        if (i % 10 == 0) {
            memset(buf, rank == 0 ? 7 : 0, sizeof buf);
            MPI_Bcast(buf, BCAST_BYTES, MPI_CHAR, 0, MPI_COMM_WORLD);
            bad |= buf[BCAST_BYTES - 1] != 7;
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    start = MPI_Wtime() - start;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Comm_size(half, &half_size);
    all = malloc(sizeof *all * BLOCK * half_size);
    for (k = 0; k < BLOCK; k++)
        block[k] = rank;
    MPI_Allgather(block, BLOCK, MPI_INT, all, BLOCK, MPI_INT, half);
    for (k = 0; k < half_size; k++)
        bad |= all[k * BLOCK] != 2 * k + rank % 2;
    free(all);
    MPI_Comm_free(&half);
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf(any_bad ? "profile_app FAIL\n" : "profile_app ok %d in %.6f s\n", n, start);
    MPI_Finalize();
    return any_bad;
}
