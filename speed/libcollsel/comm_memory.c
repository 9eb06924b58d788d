/* Memory libcollsel holds per communicator: N communicators dup'ed from MPI_COMM_WORLD, each
 * used once by MPI_Bcast and MPI_Reduce (so both collectives are resolved), then the library's
 * counts (collsel_pmpi_counts_get, found with dlsym) before and after, per communicator:
 *   memory comms=N state_bytes_per_comm=X shadows_per_comm=Y
 * Usage: comm_memory [N] (default 100). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "collsel_pmpi.h"

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100, k, rank, x = 1, y = 0;
    void (*get)(collsel_pmpi_counts *);
    collsel_pmpi_counts before, after;
    MPI_Comm *comms;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    *(void **)&get = dlsym(RTLD_DEFAULT, "collsel_pmpi_counts_get");
    if (!get || n < 1) {
        if (rank == 0)
            fprintf(stderr, "comm_memory: libcollsel is not loaded\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    comms = malloc((size_t)n * sizeof *comms);
    get(&before);
    for (k = 0; k < n; k++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[k]);
        MPI_Bcast(&x, 1, MPI_INT, 0, comms[k]);
        MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, 0, comms[k]);
    }
    get(&after);
    if (rank == 0)
        printf("memory comms=%d state_bytes_per_comm=%.1f shadows_per_comm=%.2f\n", n,
               (double)(after.state_bytes - before.state_bytes) / n,
               (double)(after.shadows_live - before.shadows_live) / n);
    for (k = 0; k < n; k++)
        MPI_Comm_free(&comms[k]);
    free(comms);
    MPI_Finalize();
    return 0;
}
