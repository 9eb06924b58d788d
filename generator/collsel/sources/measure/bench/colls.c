/* The collectives' table and what their layouts share (colls.h). */
#include "colls.h"

#include <string.h>

/* bcast, reduce, allreduce first: COLL_BCAST, COLL_REDUCE, COLL_ALLREDUCE (experiments and
 * hierarchical methods). The variables F writes are the MPI table's (forcing.c). */
const struct coll_spec COLLS[] = {
    {.name = "bcast", "MPI_Bcast", M_TOTAL, D_BCAST, 1, 1, 0, call_bcast},
    {.name = "reduce", "MPI_Reduce", M_TOTAL, D_REDUCE, 1, 1, 1, call_reduce},
    {.name = "allreduce", "MPI_Allreduce", M_TOTAL, D_REDUCE, 1, 1, 0, call_allreduce},
    {.name = "allgather", "MPI_Allgather", M_BLOCK, D_GATHER, 1, ALL, 0, call_allgather},
    {.name = "allgatherv", "MPI_Allgatherv", M_BLOCK, D_GATHER, 1, ALL, 0, call_allgatherv},
    {.name = "alltoall", "MPI_Alltoall", M_BLOCK, D_ALLTOALL, ALL, ALL, 0, call_alltoall},
    {.name = "alltoallv", "MPI_Alltoallv", M_BLOCK, D_ALLTOALL, ALL, ALL, 0, call_alltoallv},
    {.name = "barrier", "MPI_Barrier", M_NONE, D_NONE, 0, 0, 0, call_barrier},
    {.name = "exscan", "MPI_Exscan", M_BLOCK, D_EXSCAN, 1, 1, 0, call_exscan},
    {.name = "gather", "MPI_Gather", M_BLOCK, D_GATHER, 1, ALL, 1, call_gather},
    {.name = "reduce_scatter", "MPI_Reduce_scatter", M_SUM, D_REDUCE_SCATTER, ALL, 1, 0,
     call_reduce_scatter},
    {.name = "reduce_scatter_block", "MPI_Reduce_scatter_block", M_BLOCK, D_REDUCE_SCATTER, ALL,
     1, 0, call_reduce_scatter_block},
    {.name = "scan", "MPI_Scan", M_BLOCK, D_SCAN, 1, 1, 0, call_scan},
    {.name = "scatter", "MPI_Scatter", M_BLOCK, D_SCATTER, ALL, 1, 1, call_scatter},
};
const int NCOLLECTIVES = (int)(sizeof COLLS / sizeof *COLLS);

const char *coll_name(int coll)
{
    return coll >= 0 && coll < NCOLLECTIVES ? COLLS[coll].name : "none";
}

int coll_is_reduction(const struct coll_spec *c)
{
    return c->data >= D_REDUCE && c->data <= D_EXSCAN;
}

/* Varies with both i and m, so stale data from an earlier size cannot pass the check. */
unsigned char coll_pattern(size_t i, unsigned long long m)
{
    return (unsigned char)((i * 131u + m * 7u + 1u) & 0xffu);
}

long long coll_count(const struct coll_spec *c, unsigned long long m, int nprocs)
{
    if (c->m == M_NONE)
        return 0;
    if (c->m != M_SUM)
        return (long long)m;
    return m < (unsigned long long)nprocs ? -1 : (long long)((m + nprocs - 1) / nprocs);
}

size_t coll_blocks(const struct coll_spec *c, int recv, int rank, int nprocs)
{
    int b = recv ? c->recv_blocks : c->send_blocks;
    int root_side = c->data == D_SCATTER ? !recv : recv;   /* which buffer is the root's */
    if (b != ALL)
        return (size_t)b;
    return c->root_only && root_side && rank != 0 ? 0 : (size_t)nprocs;
}

void coll_shape(const struct coll_spec *c, unsigned long long m, int nprocs,
                struct call_shape *sh)
{
    long long n = coll_count(c, m, nprocs);
    sh->count = n < 0 ? 0 : (int)n;
    for (int r = 0, at = 0; r < nprocs; at += sh->counts[r++]) {
        sh->counts[r] = c->m != M_SUM ? sh->count
                        : (int)(m / (unsigned)nprocs) + (r < (int)(m % (unsigned)nprocs));
        sh->displs[r] = at;
    }
}

size_t coll_result_bytes(const struct coll_spec *c, const struct call_shape *sh, int rank,
                         int nprocs)
{
    if (c->m == M_SUM)
        return (size_t)sh->counts[rank];
    return coll_blocks(c, 1, rank, nprocs) * (size_t)sh->count;
}

void coll_prepare(const struct coll_spec *c, unsigned char *send, unsigned char *recv,
                  const struct call_shape *sh, int rank, int nprocs, unsigned long long m)
{
    const size_t n = (size_t)sh->count, sb = coll_blocks(c, 0, rank, nprocs);
    const int sum = coll_is_reduction(c);
    for (size_t b = 0; b < sb; b++)
        for (size_t i = 0; i < n; i++)
            send[b * n + i] = sum ? reduce_input(b * n + i, m, nprocs)
                                  : move_input(c, rank, b, i, m);
    if (c->data != D_BCAST)
        memset(recv, 0, coll_blocks(c, 1, rank, nprocs) * n);
}

int coll_expected(const struct coll_spec *c, size_t j, const struct call_shape *sh, int rank,
                  int nprocs, unsigned long long m)
{
    const size_t n = (size_t)sh->count, b = n ? j / n : 0, i = n ? j % n : 0;
    if (coll_is_reduction(c))
        return reduce_expected(c, j, sh, rank, nprocs, m);
    return move_expected(c, j, b, i, rank, m);
}

int coll_fault_rank(const struct coll_spec *c, int nprocs)
{
    return c->root_only && c->data != D_SCATTER ? 0 : nprocs - 1;
}
