/* What every part of the benchmark shares (bench.h). */
#include "bench.h"

#include <limits.h>
#include <stdlib.h>

void *bench_alloc(size_t n, int rank)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "collsel_bench: rank %d: cannot allocate %zu bytes\n", rank, n);
        PMPI_Abort(MPI_COMM_WORLD, 4);
    }
    return p;
}

int bench_agree(int code, const char *msg, int rank)
{
    int worst = 0, who = INT_MAX, first = INT_MAX;
    BENCH_CHECK(PMPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (worst == 0)
        return 0;
    if (code == worst)
        who = rank;
    BENCH_CHECK(PMPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (rank == first)
        fprintf(stderr, "collsel_bench: %s\n", msg);
    return worst;
}
