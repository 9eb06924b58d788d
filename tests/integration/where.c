/* Every rank's MPI_Get_processor_name, printed by rank 0 as "hosts=h0,h1,..." after an
   allreduce whose result is checked: the emulated cluster's tests see where ranks ran. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    int rank, size, len;
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    char *all = rank == 0 ? calloc((size_t)size, MPI_MAX_PROCESSOR_NAME) : NULL;
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
               MPI_COMM_WORLD);
    if (rank == 0) {
        printf("sum=%s hosts=", sum == size * (size - 1) / 2 ? "ok" : "WRONG");
        for (int r = 0; r < size; r++)
            printf("%s%s", r ? "," : "", all + (size_t)r * MPI_MAX_PROCESSOR_NAME);
        printf("\n");
        free(all);
    }
    MPI_Finalize();
    return 0;
}
