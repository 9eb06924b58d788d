/* collsel_bench_colls.c: what is particular to each collective the benchmark runs (included by
 * collsel_bench.c; collsel reads the `.name = "..."` entries of COLLS[] as the benchmark's
 * --collective names, benchmark_program.py: capabilities). Adding a collective = one COLLS[]
 * entry and its call function.
 *
 * m (--sizes) is what Open MPI's fixed decision computes for the call (4.1.4,
 * ompi/mca/coll/tuned/coll_tuned_decision_fixed.c; v5.0.x has the same file, same lines), with
 * MPI_BYTE / MPI_UNSIGNED_CHAR (1-byte) elements, so counts follow from m and P:
 *   M_TOTAL  the whole vector (count = m)            bcast :522, reduce :677, allreduce :67
 *   M_BLOCK  one rank's block (count = m per block)  allgather :1107, alltoall :244,
 *            gather :1399 (root's rcount), scatter :1486 (root's scount),
 *            reduce_scatter_block :986 (rcount), allgatherv :1258-1262 (sum of counts / P,
 *            equal counts: the block), alltoallv (equal counts: the block; its decision :418-450
 *            reads P only), scan / exscan (each rank's vector; 4.1.4 has no fixed decision for
 *            them: coll_tuned_decision_dynamic.c:709/752 run the linear algorithm)
 *   M_SUM    the sum of the receive counts (:838-842): m / P each, one more for the first
 *            m mod P ranks, so they sum to m exactly; m < P (a rank would get nothing) is
 *            skipped for every method (`#@skipped=` header)                   reduce_scatter
 *   M_NONE   no message: --sizes 0 only                                       barrier (:464-500)
 * v-variants run with equal counts. Reductions are MPI_SUM on MPI_UNSIGNED_CHAR, their inputs
 * kept small enough that no sum exceeds 255 (reduce_input). */

enum m_kind { M_TOTAL, M_BLOCK, M_SUM, M_NONE };

/* How a collective's buffers are laid out and what its result must be (reference check). */
enum data_kind {
    D_BCAST,        /* one buffer, the root's blocks everywhere */
    D_GATHER,       /* each rank's block to the result's block of its rank (allgather, gather) */
    D_SCATTER,      /* the root's block r to rank r */
    D_ALLTOALL,     /* rank s's block d to rank d's block s */
    D_REDUCE,       /* the sum over ranks (reduce: at the root; allreduce: everywhere) */
    D_REDUCE_SCATTER,   /* the sum of block r to rank r */
    D_SCAN,         /* rank r: the sum over ranks 0..r */
    D_EXSCAN,       /* rank r: the sum over ranks 0..r-1 (rank 0: undefined, not checked) */
    D_NONE
};

/* One call's arguments for message size m on P ranks. */
struct call_shape {
    int count;              /* elements per block (bcast, reduce, allreduce: the vector; M_SUM:
                             * the largest block) */
    int *counts, *displs;   /* v-variants, reduce_scatter: P counts and their displacements */
};

typedef int (*coll_call)(unsigned char *send, unsigned char *recv, const struct call_shape *sh,
                         MPI_Comm comm);

struct coll_spec {
    const char *name;       /* --collective */
    const char *function;   /* the MPI function (raw lines) */
    enum m_kind m;
    enum data_kind data;
    int send_blocks, recv_blocks;   /* blocks of `count` elements: 1, or P (ALL) */
    int root_only;          /* send (scatter) or result (gather, reduce) has P blocks / exists
                             * on the root only */
    const char *fan_vars;   /* coll_tuned_<name>_algorithm_<var> that F writes, ',' apart */
    coll_call call;
};

#define ALL (-1)    /* send_blocks / recv_blocks: one block per rank */

#define UC MPI_UNSIGNED_CHAR
static int call_bcast(unsigned char *s, unsigned char *r, const struct call_shape *sh,
                      MPI_Comm c)
{
    (void)r;
    return MPI_Bcast(s, sh->count, MPI_BYTE, 0, c);
}
static int call_reduce(unsigned char *s, unsigned char *r, const struct call_shape *sh,
                       MPI_Comm c)
{
    return MPI_Reduce(s, r, sh->count, UC, MPI_SUM, 0, c);
}
static int call_allreduce(unsigned char *s, unsigned char *r, const struct call_shape *sh,
                          MPI_Comm c)
{
    return MPI_Allreduce(s, r, sh->count, UC, MPI_SUM, c);
}
static int call_allgather(unsigned char *s, unsigned char *r, const struct call_shape *sh,
                          MPI_Comm c)
{
    return MPI_Allgather(s, sh->count, MPI_BYTE, r, sh->count, MPI_BYTE, c);
}
static int call_allgatherv(unsigned char *s, unsigned char *r, const struct call_shape *sh,
                           MPI_Comm c)
{
    return MPI_Allgatherv(s, sh->count, MPI_BYTE, r, sh->counts, sh->displs, MPI_BYTE, c);
}
static int call_alltoall(unsigned char *s, unsigned char *r, const struct call_shape *sh,
                         MPI_Comm c)
{
    return MPI_Alltoall(s, sh->count, MPI_BYTE, r, sh->count, MPI_BYTE, c);
}
static int call_alltoallv(unsigned char *s, unsigned char *r, const struct call_shape *sh,
                          MPI_Comm c)
{
    return MPI_Alltoallv(s, sh->counts, sh->displs, MPI_BYTE, r, sh->counts, sh->displs,
                         MPI_BYTE, c);
}
static int call_barrier(unsigned char *s, unsigned char *r, const struct call_shape *sh,
                        MPI_Comm c)
{
    (void)s, (void)r, (void)sh;
    return MPI_Barrier(c);
}
static int call_exscan(unsigned char *s, unsigned char *r, const struct call_shape *sh,
                       MPI_Comm c)
{
    return MPI_Exscan(s, r, sh->count, UC, MPI_SUM, c);
}
static int call_gather(unsigned char *s, unsigned char *r, const struct call_shape *sh,
                       MPI_Comm c)
{
    return MPI_Gather(s, sh->count, MPI_BYTE, r, sh->count, MPI_BYTE, 0, c);
}
static int call_reduce_scatter(unsigned char *s, unsigned char *r, const struct call_shape *sh,
                               MPI_Comm c)
{
    return MPI_Reduce_scatter(s, r, sh->counts, UC, MPI_SUM, c);
}
static int call_reduce_scatter_block(unsigned char *s, unsigned char *r,
                                     const struct call_shape *sh, MPI_Comm c)
{
    return MPI_Reduce_scatter_block(s, r, sh->count, UC, MPI_SUM, c);
}
static int call_scan(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c)
{
    return MPI_Scan(s, r, sh->count, UC, MPI_SUM, c);
}
static int call_scatter(unsigned char *s, unsigned char *r, const struct call_shape *sh,
                        MPI_Comm c)
{
    return MPI_Scatter(s, sh->count, MPI_BYTE, r, sh->count, MPI_BYTE, 0, c);
}
#undef UC

#define FANS "chain_fanout,tree_fanout"
/* bcast, reduce, allreduce first: collsel_bench.c names them COLL_BCAST, COLL_REDUCE,
 * COLL_ALLREDUCE (experiments and hierarchical methods). alltoall's F is its max_requests
 * (linear_sync's limit; no alltoall algorithm reads a fan-out); reduce's max_requests keeps the
 * launch's value (it limits the tree algorithms' requests, whose F is the fan-out). */
static const struct coll_spec COLLS[] = {
    {.name = "bcast", "MPI_Bcast", M_TOTAL, D_BCAST, 1, 1, 0, FANS, call_bcast},
    {.name = "reduce", "MPI_Reduce", M_TOTAL, D_REDUCE, 1, 1, 1, FANS, call_reduce},
    {.name = "allreduce", "MPI_Allreduce", M_TOTAL, D_REDUCE, 1, 1, 0, FANS, call_allreduce},
    {.name = "allgather", "MPI_Allgather", M_BLOCK, D_GATHER, 1, ALL, 0, FANS, call_allgather},
    {.name = "allgatherv", "MPI_Allgatherv", M_BLOCK, D_GATHER, 1, ALL, 0, FANS,
     call_allgatherv},
    {.name = "alltoall", "MPI_Alltoall", M_BLOCK, D_ALLTOALL, ALL, ALL, 0, "max_requests",
     call_alltoall},
    {.name = "alltoallv", "MPI_Alltoallv", M_BLOCK, D_ALLTOALL, ALL, ALL, 0, FANS,
     call_alltoallv},
    {.name = "barrier", "MPI_Barrier", M_NONE, D_NONE, 0, 0, 0, FANS, call_barrier},
    {.name = "exscan", "MPI_Exscan", M_BLOCK, D_EXSCAN, 1, 1, 0, FANS, call_exscan},
    {.name = "gather", "MPI_Gather", M_BLOCK, D_GATHER, 1, ALL, 1, FANS, call_gather},
    {.name = "reduce_scatter", "MPI_Reduce_scatter", M_SUM, D_REDUCE_SCATTER, ALL, 1, 0, FANS,
     call_reduce_scatter},
    {.name = "reduce_scatter_block", "MPI_Reduce_scatter_block", M_BLOCK, D_REDUCE_SCATTER, ALL,
     1, 0, FANS, call_reduce_scatter_block},
    {.name = "scan", "MPI_Scan", M_BLOCK, D_SCAN, 1, 1, 0, FANS, call_scan},
    {.name = "scatter", "MPI_Scatter", M_BLOCK, D_SCATTER, ALL, 1, 1, FANS, call_scatter},
};
#undef FANS
#define NCOLLECTIVES ((int)(sizeof COLLS / sizeof *COLLS))

/* Elements per block at size m on P ranks (M_SUM: the largest); -1 when the size has no call
 * (M_SUM, m < P). */
static long long coll_count(const struct coll_spec *c, unsigned long long m, int nprocs)
{
    if (c->m == M_NONE)
        return 0;
    if (c->m != M_SUM)
        return (long long)m;
    return m < (unsigned long long)nprocs ? -1 : (long long)((m + nprocs - 1) / nprocs);
}

/* Blocks of the send (recv = 0) or receive buffer on `rank`. */
static size_t coll_blocks(const struct coll_spec *c, int recv, int rank, int nprocs)
{
    int b = recv ? c->recv_blocks : c->send_blocks;
    int root_side = c->data == D_SCATTER ? !recv : recv;   /* which buffer is the root's */
    if (b != ALL)
        return (size_t)b;
    return c->root_only && root_side && rank != 0 ? 0 : (size_t)nprocs;
}

/* Rank s's datum for rank d, element i, at size m (bcast: the root's pattern). */
static unsigned char datum(int s, int d, size_t i, unsigned long long m)
{
    return pattern(i + (size_t)s * 61u + (size_t)d * 29u, m);
}

/* The call's arguments at size m; counts/displs point to P ints each (v-variants). */
static void coll_shape(const struct coll_spec *c, unsigned long long m, int nprocs,
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

/* Bytes of `rank`'s result. */
static size_t coll_result_bytes(const struct coll_spec *c, const struct call_shape *sh, int rank,
                                int nprocs)
{
    if (c->m == M_SUM)
        return (size_t)sh->counts[rank];
    return coll_blocks(c, 1, rank, nprocs) * (size_t)sh->count;
}

/* Fill the send buffer (bcast: the root's data) and clear the result, so the previous
 * method's (correct) result cannot pass the next method's check. */
static void coll_prepare(const struct coll_spec *c, unsigned char *send, unsigned char *recv,
                         const struct call_shape *sh, int rank, int nprocs,
                         unsigned long long m)
{
    const size_t n = (size_t)sh->count, sb = coll_blocks(c, 0, rank, nprocs);
    for (size_t b = 0; b < sb; b++)
        for (size_t i = 0; i < n; i++) {
            unsigned char *x = send + b * n + i;
            switch (c->data) {
            case D_BCAST: *x = rank == 0 ? datum(0, 0, i, m) : 0; break;
            case D_GATHER: *x = datum(rank, 0, i, m); break;
            case D_SCATTER: case D_ALLTOALL: *x = datum(rank, (int)b, i, m); break;
            default: *x = reduce_input(b * n + i, m, nprocs);
            }
        }
    if (c->data != D_BCAST)
        memset(recv, 0, coll_blocks(c, 1, rank, nprocs) * n);
}

/* The expected result byte j of `rank`'s result, -1 = not checked. */
static int coll_expected(const struct coll_spec *c, size_t j, const struct call_shape *sh,
                         int rank, int nprocs, unsigned long long m)
{
    const size_t n = (size_t)sh->count, b = n ? j / n : 0, i = n ? j % n : 0;
    switch (c->data) {
    case D_BCAST: return datum(0, 0, j, m);
    case D_GATHER: return datum((int)b, 0, i, m);
    case D_SCATTER: return datum(0, rank, i, m);
    case D_ALLTOALL: return datum((int)b, rank, i, m);
    case D_REDUCE: return reduce_input(j, m, nprocs) * nprocs;
    case D_REDUCE_SCATTER: return reduce_input((size_t)sh->displs[rank] + j, m, nprocs) * nprocs;
    case D_SCAN: return reduce_input(j, m, nprocs) * (rank + 1);
    case D_EXSCAN: return rank == 0 ? -1 : reduce_input(j, m, nprocs) * rank;
    default: return -1;
    }
}

/* The rank whose result --fault corrupt@M damages: the root where only the root has one. */
static int coll_fault_rank(const struct coll_spec *c, int nprocs)
{
    return c->root_only && c->data != D_SCATTER ? 0 : nprocs - 1;
}
