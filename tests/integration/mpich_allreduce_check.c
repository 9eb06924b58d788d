/* mpich_allreduce_check M [M ...]: MPI_Allreduce (MPI_CHAR, MPI_SUM, every rank 1) of each M
 * bytes on MPI_COMM_WORLD, three times, checked (the sum is P). One line per size on rank 0:
 *   check allreduce m=<bytes> ok|FAIL
 * Exit 0 when every check passed, 1 otherwise. Run by test_mpich5_algorithms.py under MPICH 5
 * with MPIR_CVAR_COLL_TREE_DUMP=1, which makes MPICH's tree algorithms announce their trees. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, a, failed = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (a = 1; a < argc; a++) {
        long m = atol(argv[a]), i;
        int it, bad = 0, any = 0;
        char *in = malloc((size_t)m + 1), *out = malloc((size_t)m + 1);
        for (it = 0; it < 3; it++) {
            for (i = 0; i < m; i++)
                in[i] = 1, out[i] = 0;
            MPI_Allreduce(in, out, (int)m, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD);
            for (i = 0; i < m; i++)
                bad |= out[i] != size;
        }
        MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0)
            printf("check allreduce m=%ld %s\n", m, any ? "FAIL" : "ok");
        failed |= any;
        free(in);
        free(out);
    }
    MPI_Finalize();
    return failed;
}
