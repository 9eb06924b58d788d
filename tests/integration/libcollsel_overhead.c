/* Cost of a tiny MPI_Bcast (or MPI_Allreduce) through an interposition library: in one launch,
 * rounds of K back-to-back calls of M bytes (bcast from rank 0; allreduce: MPI_SUM of unsigned
 * chars) on MPI_COMM_WORLD, alternating MPI_<Coll> (through libcollsel when it is preloaded)
 * and PMPI_<Coll> (straight to the MPI, on the same communicator), timed on rank 0 after a
 * warm-up round of each; rank 0 prints the medians over rounds of the time per call and their
 * ratio:
 *   overhead coll=COLL m=M calls=K rounds=R mpi_ns=X pmpi_ns=Y ratio=X/Y
 * Where the library's tree defers (algorithm 0) both run the same algorithm on the same
 * communicator, so the difference is the interposition itself; without the library the ratio
 * is 1 up to noise. test_libcollsel.py prints it (nothing is asserted on times).
 * Usage: libcollsel_overhead [M [K [R [bcast|allreduce]]]], defaults 1 20000 9 bcast. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int allreduce;   /* else bcast */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static char result[4096];

static double round_ns(int direct, char *buf, int m, int calls)
{
    double t0;
    int k;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (k = 0; k < calls; k++) {
        if (allreduce && direct)
            PMPI_Allreduce(buf, result, m, MPI_UNSIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD);
        else if (allreduce)
            MPI_Allreduce(buf, result, m, MPI_UNSIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD);
        else if (direct)
            PMPI_Bcast(buf, m, MPI_BYTE, 0, MPI_COMM_WORLD);
        else
            MPI_Bcast(buf, m, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
    return (MPI_Wtime() - t0) / calls * 1e9;
}

int main(int argc, char **argv)
{
    int m, calls, rounds, rank, r;
    char buf[4096] = {0};
    double *t[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    m = argc > 1 ? atoi(argv[1]) : 1;
    calls = argc > 2 ? atoi(argv[2]) : 20000;
    rounds = argc > 3 ? atoi(argv[3]) : 9;
    allreduce = argc > 4 && strcmp(argv[4], "allreduce") == 0;
    if (m < 0 || m > (int)sizeof buf || calls < 1 || rounds < 1)
        MPI_Abort(MPI_COMM_WORLD, 2);
    t[0] = malloc((size_t)rounds * sizeof *t[0]);
    t[1] = malloc((size_t)rounds * sizeof *t[1]);
    round_ns(0, buf, m, calls);   /* warm-up, and libcollsel's first use of the communicator */
    round_ns(1, buf, m, calls);
    for (r = 0; r < rounds; r++) {   /* alternating, starting side by round */
        t[r % 2][r] = round_ns(r % 2, buf, m, calls);
        t[1 - r % 2][r] = round_ns(1 - r % 2, buf, m, calls);
    }
    qsort(t[0], (size_t)rounds, sizeof *t[0], cmp_double);
    qsort(t[1], (size_t)rounds, sizeof *t[1], cmp_double);
    if (rank == 0)
        printf("overhead coll=%s m=%d calls=%d rounds=%d mpi_ns=%.1f pmpi_ns=%.1f ratio=%.3f\n",
               allreduce ? "allreduce" : "bcast", m, calls, rounds, t[0][rounds / 2],
               t[1][rounds / 2], t[0][rounds / 2] / t[1][rounds / 2]);
    free(t[0]);
    free(t[1]);
    MPI_Finalize();
    return 0;
}
