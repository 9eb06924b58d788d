/* The experiments timed like a collective (experiments.h). Everything here is measured: MPI_*. */
#include "experiments.h"

int experiment_root_timed(const struct options *o)
{
    return o->experiment == EXP_NBFT || o->experiment == EXP_BCAST_GATHER;
}

/* The largest power of two below `limit` (0 if none). */
static long top_mask(long limit)
{
    long hi = 0;
    for (long k = 1; k < limit; k <<= 1)
        hi = k;
    return hi;
}

/* One LMO collective: linear or binomial scatter / gather of m bytes per rank (root: tree node
 * 0). The in-order binomial tree (Open MPI's in_order_bmtree for root 0): node v's parent is v
 * with its lowest set bit cleared, its children v + 2^k below that bit (every 2^k < P for the
 * root), the subtree of v + 2^k holding min(2^k, P - v - 2^k) blocks. */
static void run_lmo_collective(const struct options *o, struct bufs *bf, int count, int rank,
                               int nprocs)
{
    const size_t m = (size_t)count;
    if (o->lmo_kind == LMO_LSCATTER || o->lmo_kind == LMO_LGATHER) {
        for (int r = 1; rank == 0 && r < nprocs; r++) {
            if (o->lmo_kind == LMO_LSCATTER)
                BENCH_CHECK(MPI_Send(bf->big + (size_t)r * m, count, MPI_BYTE, r, LMO_TAG,
                                     MPI_COMM_WORLD));
            else
                BENCH_CHECK(MPI_Recv(bf->big + (size_t)r * m, count, MPI_BYTE, r, LMO_TAG,
                                     MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        if (rank != 0 && o->lmo_kind == LMO_LSCATTER)
            BENCH_CHECK(MPI_Recv(bf->b, count, MPI_BYTE, 0, LMO_TAG, MPI_COMM_WORLD,
                                 MPI_STATUS_IGNORE));
        if (rank != 0 && o->lmo_kind == LMO_LGATHER)
            BENCH_CHECK(MPI_Send(bf->a, count, MPI_BYTE, 0, LMO_TAG, MPI_COMM_WORLD));
        return;
    }
    const long v = bf->node, P = nprocs;
    const long lowbit = v & -v, hi = top_mask(v == 0 ? P : lowbit);
    const long own = v == 0 ? P : (lowbit < P - v ? lowbit : P - v);
    const int parent = v == 0 ? -1 : bf->map[v & (v - 1)];
    if (o->lmo_kind == LMO_BSCATTER) {
        if (parent >= 0)
            BENCH_CHECK(MPI_Recv(bf->big, (int)(own * count), MPI_BYTE, parent, LMO_TAG,
                                 MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (long mask = hi; mask >= 1; mask >>= 1)
            if (v + mask < P)
                BENCH_CHECK(MPI_Send(bf->big + (size_t)mask * m,
                                     (int)((mask < P - v - mask ? mask : P - v - mask) * count),
                                     MPI_BYTE, bf->map[v + mask], LMO_TAG, MPI_COMM_WORLD));
        return;
    }
    for (long mask = 1; mask <= hi; mask <<= 1)
        if (v + mask < P)
            BENCH_CHECK(MPI_Recv(bf->big + (size_t)mask * m,
                                 (int)((mask < P - v - mask ? mask : P - v - mask) * count),
                                 MPI_BYTE, bf->map[v + mask], LMO_TAG, MPI_COMM_WORLD,
                                 MPI_STATUS_IGNORE));
    if (parent >= 0)
        BENCH_CHECK(MPI_Send(bf->big, (int)(own * count), MPI_BYTE, parent, LMO_TAG,
                             MPI_COMM_WORLD));
}

void experiment_run(const struct options *o, struct bufs *bf, int count)
{
    int rank = 0, nprocs = 0;
    BENCH_CHECK(PMPI_Comm_rank(MPI_COMM_WORLD, &rank));
    BENCH_CHECK(PMPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    if (o->experiment == EXP_LMO_SCAN || o->experiment == EXP_LMO_BINOMIAL) {
        run_lmo_collective(o, bf, count, rank, nprocs);
        return;
    }
    if (o->experiment == EXP_NBFT) {
        if (rank == 0) {
            for (int r = 1; r < nprocs; r++)
                BENCH_CHECK(MPI_Isend(bf->a, count, MPI_BYTE, r, 77, MPI_COMM_WORLD,
                                      &bf->reqs[r - 1]));
/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which GCC 12 takes for a zero-size
 * array (a false -Wstringop-overflow). */
#if defined(MPICH_VERSION) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
            BENCH_CHECK(MPI_Waitall(nprocs - 1, bf->reqs, MPI_STATUSES_IGNORE));
#if defined(MPICH_VERSION) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
        } else {
            BENCH_CHECK(MPI_Irecv(bf->a, count, MPI_BYTE, 0, 77, MPI_COMM_WORLD, &bf->reqs[0]));
            BENCH_CHECK(MPI_Wait(&bf->reqs[0], MPI_STATUS_IGNORE));
        }
        return;
    }
    /* bcast-gather: the forced MPI_Bcast, a barrier, then a flat gather without synchronisation,
     * all of it measured */
    int g = (unsigned long long)count < o->gather_size ? count : (int)o->gather_size;
    BENCH_CHECK(MPI_Bcast(bf->a, count, MPI_BYTE, 0, MPI_COMM_WORLD));
    BENCH_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        for (int r = 1; r < nprocs; r++)
            BENCH_CHECK(MPI_Recv(bf->gather + (size_t)r * o->gather_size, g, MPI_BYTE, r, 78,
                                 MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        BENCH_CHECK(MPI_Send(bf->a, g, MPI_BYTE, 0, 78, MPI_COMM_WORLD));
    }
}
