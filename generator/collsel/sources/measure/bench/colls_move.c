/* Data movement: bcast, gather, scatter, allgather(v), alltoall(v), and barrier, which moves
 * none. MPI_BYTE; the data of rank s for rank d, element i, at size m is datum(s, d, i, m). */
#include "colls.h"

/* Rank s's datum for rank d, element i, at size m (bcast: the root's pattern). */
static unsigned char datum(int s, int d, size_t i, unsigned long long m)
{
    return coll_pattern(i + (size_t)s * 61u + (size_t)d * 29u, m);
}

int call_bcast(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c)
{
    (void)r;
    return MPI_Bcast(s, sh->count, MPI_BYTE, 0, c);
}

int call_allgather(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c)
{
    return MPI_Allgather(s, sh->count, MPI_BYTE, r, sh->count, MPI_BYTE, c);
}

int call_allgatherv(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c)
{
    return MPI_Allgatherv(s, sh->count, MPI_BYTE, r, sh->counts, sh->displs, MPI_BYTE, c);
}

int call_alltoall(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c)
{
    return MPI_Alltoall(s, sh->count, MPI_BYTE, r, sh->count, MPI_BYTE, c);
}

int call_alltoallv(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c)
{
    return MPI_Alltoallv(s, sh->counts, sh->displs, MPI_BYTE, r, sh->counts, sh->displs,
                         MPI_BYTE, c);
}

int call_barrier(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c)
{
    (void)s, (void)r, (void)sh;
    return MPI_Barrier(c);
}

int call_gather(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c)
{
    return MPI_Gather(s, sh->count, MPI_BYTE, r, sh->count, MPI_BYTE, 0, c);
}

int call_scatter(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c)
{
    return MPI_Scatter(s, sh->count, MPI_BYTE, r, sh->count, MPI_BYTE, 0, c);
}

unsigned char move_input(const struct coll_spec *c, int rank, size_t b, size_t i,
                         unsigned long long m)
{
    switch (c->data) {
    case D_BCAST: return rank == 0 ? datum(0, 0, i, m) : 0;
    case D_GATHER: return datum(rank, 0, i, m);
    case D_SCATTER: case D_ALLTOALL: return datum(rank, (int)b, i, m);
    default: return 0;
    }
}

int move_expected(const struct coll_spec *c, size_t j, size_t b, size_t i, int rank,
                  unsigned long long m)
{
    switch (c->data) {
    case D_BCAST: return datum(0, 0, j, m);
    case D_GATHER: return datum((int)b, 0, i, m);
    case D_SCATTER: return datum(0, rank, i, m);
    case D_ALLTOALL: return datum((int)b, rank, i, m);
    default: return -1;
    }
}
