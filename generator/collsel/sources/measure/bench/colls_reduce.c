/* Reductions: reduce, allreduce, reduce_scatter(_block), scan, exscan; MPI_SUM on
 * MPI_UNSIGNED_CHAR, every rank the same input vector (reduce_input). */
#include "colls.h"

#define UC MPI_UNSIGNED_CHAR

int call_reduce(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c)
{
    return MPI_Reduce(s, r, sh->count, UC, MPI_SUM, 0, c);
}

int call_allreduce(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c)
{
    return MPI_Allreduce(s, r, sh->count, UC, MPI_SUM, c);
}

int call_exscan(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c)
{
    return MPI_Exscan(s, r, sh->count, UC, MPI_SUM, c);
}

int call_reduce_scatter(unsigned char *s, unsigned char *r, const struct call_shape *sh,
                        MPI_Comm c)
{
    return MPI_Reduce_scatter(s, r, sh->counts, UC, MPI_SUM, c);
}

int call_reduce_scatter_block(unsigned char *s, unsigned char *r, const struct call_shape *sh,
                              MPI_Comm c)
{
    return MPI_Reduce_scatter_block(s, r, sh->count, UC, MPI_SUM, c);
}

int call_scan(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c)
{
    return MPI_Scan(s, r, sh->count, UC, MPI_SUM, c);
}

#undef UC

/* Kept small enough that the sum over ranks never exceeds 255: Open MPI 4.1.4's vectorised
 * MPI_SUM on MPI_UNSIGNED_CHAR saturates at 255 instead of wrapping (seen on this machine for
 * 4 KiB messages), so results that overflow are not portable. */
unsigned char reduce_input(size_t j, unsigned long long m, int nprocs)
{
    return nprocs > 255 ? 0 : (unsigned char)(coll_pattern(j, m) % (255 / nprocs + 1));
}

int reduce_expected(const struct coll_spec *c, size_t j, const struct call_shape *sh, int rank,
                    int nprocs, unsigned long long m)
{
    switch (c->data) {
    case D_REDUCE: return reduce_input(j, m, nprocs) * nprocs;
    case D_REDUCE_SCATTER: return reduce_input((size_t)sh->displs[rank] + j, m, nprocs) * nprocs;
    case D_SCAN: return reduce_input(j, m, nprocs) * (rank + 1);
    case D_EXSCAN: return rank == 0 ? -1 : reduce_input(j, m, nprocs) * rank;
    default: return -1;
    }
}
