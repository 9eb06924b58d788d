/* m_probe: an LD_PRELOAD PMPI shim for tests/unit/sources/measure/test_bench_m_axis.py. For
 * every call of the 14 collectives with MPI_BYTE or MPI_UNSIGNED_CHAR data (the benchmark's; its own bookkeeping
 * uses other types), rank 0 of MPI_COMM_WORLD appends "function quantity" to $M_PROBE_OUT, the
 * quantity computed as Open MPI 4.1.4's fixed decision computes it from the same arguments
 * (ompi/mca/coll/tuned/coll_tuned_decision_fixed.c, line numbers below; -1 where it reads no
 * message size). Not part of collsel: a test's independent witness of the benchmark's m. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int ours(MPI_Datatype t)
{
    return t == MPI_BYTE || t == MPI_UNSIGNED_CHAR;
}

static long long dsize(MPI_Datatype t)
{
    int s = 0;
    PMPI_Type_size(t, &s);
    return s;
}

static void note(const char *fn, long long m, MPI_Comm comm)
{
    int wrank = 0;
    (void)comm;
    PMPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    const char *path = getenv("M_PROBE_OUT");
    if (wrank != 0 || !path)
        return;
    FILE *f = fopen(path, "a");
    if (f) {
        fprintf(f, "%s %lld\n", fn, m);
        fclose(f);
    }
}

static int size_of(MPI_Comm c)
{
    int p = 0;
    PMPI_Comm_size(c, &p);
    return p;
}

int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    if (ours(t)) note("MPI_Bcast", dsize(t) * n, c);                          /* :522 */
    return PMPI_Bcast(b, n, t, root, c);
}

int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c)
{
    if (ours(t)) note("MPI_Reduce", dsize(t) * n, c);                         /* :677 */
    return PMPI_Reduce(s, r, n, t, op, root, c);
}

int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    if (ours(t)) note("MPI_Allreduce", dsize(t) * n, c);                      /* :67 */
    return PMPI_Allreduce(s, r, n, t, op, c);
}

int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                  MPI_Comm c)
{
    if (ours(st)) note("MPI_Allgather", dsize(st) * sn, c);                   /* :1107 */
    return PMPI_Allgather(s, sn, st, r, rn, rt, c);
}

int MPI_Allgatherv(const void *s, int sn, MPI_Datatype st, void *r, const int *rn,
                   const int *rd, MPI_Datatype rt, MPI_Comm c)
{
    long long total = 0;
    for (int i = 0, p = size_of(c); i < p; i++)
        total += dsize(rt) * rn[i];
    if (ours(st)) note("MPI_Allgatherv", total / size_of(c), c);              /* :1258-1262 */
    return PMPI_Allgatherv(s, sn, st, r, rn, rd, rt, c);
}

int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                 MPI_Comm c)
{
    if (ours(st)) note("MPI_Alltoall", dsize(st) * sn, c);                    /* :244 */
    return PMPI_Alltoall(s, sn, st, r, rn, rt, c);
}

int MPI_Alltoallv(const void *s, const int *sn, const int *sd, MPI_Datatype st, void *r,
                  const int *rn, const int *rd, MPI_Datatype rt, MPI_Comm c)
{
    if (ours(st)) note("MPI_Alltoallv", -1, c);                               /* :418-450: P only */
    return PMPI_Alltoallv(s, sn, sd, st, r, rn, rd, rt, c);
}

int MPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
               int root, MPI_Comm c)
{
    int rank = 0;
    PMPI_Comm_rank(c, &rank);
    if (ours(st)) note("MPI_Gather", rank == root ? dsize(rt) * rn : dsize(st) * sn, c); /* :1399 */
    return PMPI_Gather(s, sn, st, r, rn, rt, root, c);
}

int MPI_Scatter(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                int root, MPI_Comm c)
{
    int rank = 0;
    PMPI_Comm_rank(c, &rank);
    if (ours(rt)) note("MPI_Scatter", rank == root ? dsize(st) * sn : dsize(rt) * rn, c); /* :1486 */
    return PMPI_Scatter(s, sn, st, r, rn, rt, root, c);
}

int MPI_Reduce_scatter(const void *s, void *r, const int *rn, MPI_Datatype t, MPI_Op op,
                       MPI_Comm c)
{
    long long total = 0;
    for (int i = 0, p = size_of(c); i < p; i++)
        total += rn[i];
    if (ours(t)) note("MPI_Reduce_scatter", total * dsize(t), c);             /* :838-842 */
    return PMPI_Reduce_scatter(s, r, rn, t, op, c);
}

int MPI_Reduce_scatter_block(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
                             MPI_Comm c)
{
    if (ours(t)) note("MPI_Reduce_scatter_block", dsize(t) * n, c);           /* :986 */
    return PMPI_Reduce_scatter_block(s, r, n, t, op, c);
}

/* scan, exscan: no fixed decision in 4.1.4 (coll_tuned_decision_dynamic.c:709/752 run the
 * linear algorithm); each rank's vector, as collsel defines their m */
int MPI_Scan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    if (ours(t)) note("MPI_Scan", dsize(t) * n, c);
    return PMPI_Scan(s, r, n, t, op, c);
}

int MPI_Exscan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    if (ours(t)) note("MPI_Exscan", dsize(t) * n, c);
    return PMPI_Exscan(s, r, n, t, op, c);
}
