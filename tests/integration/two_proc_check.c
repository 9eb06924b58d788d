/* For tests/integration/test_two_proc_rules_in_ompi.py: MPI_Alltoall and MPI_Allgather of m bytes
 * per rank (MPI_BYTE) for each m given, every result checked; rank 0 prints
 * "check <collective> m=<m> ok" per call. Errors return (MPI_ERRORS_RETURN): a failed call
 * (two_proc at P != 2: MPI_ERR_UNSUPPORTED_OPERATION) prints "check <collective> m=<m> failed:
 * <error string>" on the failing rank's stdout and aborts with exit status 7. The program says
 * the error itself because mpirun's own abort message can be lost (ORTE's show_help ran out of
 * resource under load in CI, leaving only the exit status). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void check(int rc, const char *collective, long m)
{
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;

    if (rc == MPI_SUCCESS) {
        return;
    }
    MPI_Error_string(rc, text, &length);
    printf("check %s m=%ld failed: %s\n", collective, m, text);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 7);
}

static unsigned char byte_of(int from, int to, long k)
{
    return (unsigned char)((from * 31 + to * 7 + k) & 0xff);
}

int main(int argc, char **argv)
{
    int rank, size, i;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (i = 1; i < argc; i++) {
        long m = atol(argv[i]), k;
        int j, bad = 0, any_bad = 0;
        unsigned char *send = malloc((size_t)(m * size) + 1);
        unsigned char *recv = malloc((size_t)(m * size) + 1);

        if (send == NULL || recv == NULL) {
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        for (j = 0; j < size; j++) {
            for (k = 0; k < m; k++) {
                send[j * m + k] = byte_of(rank, j, k);
            }
        }
        check(MPI_Alltoall(send, (int)m, MPI_BYTE, recv, (int)m, MPI_BYTE, MPI_COMM_WORLD),
              "alltoall", m);
        for (j = 0; j < size; j++) {
            for (k = 0; k < m; k++) {
                bad |= recv[j * m + k] != byte_of(j, rank, k);
            }
        }
        MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0 && !any_bad) {
            printf("check alltoall m=%ld ok\n", m);
        }
        for (k = 0; k < m; k++) {
            send[k] = byte_of(rank, 0, k);
        }
        check(MPI_Allgather(send, (int)m, MPI_BYTE, recv, (int)m, MPI_BYTE, MPI_COMM_WORLD),
              "allgather", m);
        bad = 0;
        for (j = 0; j < size; j++) {
            for (k = 0; k < m; k++) {
                bad |= recv[j * m + k] != byte_of(j, 0, k);
            }
        }
        MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0 && !any_bad) {
            printf("check allgather m=%ld ok\n", m);
        }
        free(send);
        free(recv);
    }
    MPI_Finalize();
    return 0;
}
