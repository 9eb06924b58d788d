/* The collectives the benchmark runs (--collective): COLLS[] (colls.c), their calls and
 * reference data by family, data movement (colls_move.c) and reductions (colls_reduce.c).
 * Adding a collective = one COLLS[] entry and its call function in its family's file.
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
#ifndef COLLS_H
#define COLLS_H

#include <mpi.h>
#include <stddef.h>

enum m_kind { M_TOTAL, M_BLOCK, M_SUM, M_NONE };

/* How a collective's buffers are laid out and what its result must be (reference check). */
enum data_kind {
    /* data movement (colls_move.c) */
    D_BCAST,        /* one buffer, the root's blocks everywhere */
    D_GATHER,       /* each rank's block to the result's block of its rank (allgather, gather) */
    D_SCATTER,      /* the root's block r to rank r */
    D_ALLTOALL,     /* rank s's block d to rank d's block s */
    /* reductions (colls_reduce.c) */
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

/* One measured call: its MPI error code (MPI_*, the calls an interposed library sees). */
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
    coll_call call;
};

#define ALL (-1)    /* send_blocks / recv_blocks: one block per rank */

extern const struct coll_spec COLLS[];
extern const int NCOLLECTIVES;
/* COLLS[] indices the experiments and hierarchical methods name; COLL_NONE: an LMO experiment */
enum { COLL_NONE = -1, COLL_BCAST = 0, COLL_REDUCE = 1, COLL_ALLREDUCE = 2 };

/* COLLS[coll].name, "none" for COLL_NONE. */
const char *coll_name(int coll);
/* 1 for a reduction (MPI_SUM on MPI_UNSIGNED_CHAR), 0 for data movement and barrier. */
int coll_is_reduction(const struct coll_spec *c);
/* Byte i of the root's data for a message of m bytes (the experiments' data too). */
unsigned char coll_pattern(size_t i, unsigned long long m);
/* Elements per block at size m on P ranks (M_SUM: the largest); -1 when the size has no call
 * (M_SUM, m < P). */
long long coll_count(const struct coll_spec *c, unsigned long long m, int nprocs);
/* Blocks of the send (recv = 0) or receive buffer on `rank`. */
size_t coll_blocks(const struct coll_spec *c, int recv, int rank, int nprocs);
/* The call's arguments at size m; counts/displs point to P ints each (v-variants). */
void coll_shape(const struct coll_spec *c, unsigned long long m, int nprocs,
                struct call_shape *sh);
/* Bytes of `rank`'s result. */
size_t coll_result_bytes(const struct coll_spec *c, const struct call_shape *sh, int rank,
                         int nprocs);
/* Fill the send buffer (bcast: the root's data) and clear the result, so the previous
 * method's (correct) result cannot pass the next method's check. */
void coll_prepare(const struct coll_spec *c, unsigned char *send, unsigned char *recv,
                  const struct call_shape *sh, int rank, int nprocs, unsigned long long m);
/* The expected result byte j of `rank`'s result, -1 = not checked. */
int coll_expected(const struct coll_spec *c, size_t j, const struct call_shape *sh, int rank,
                  int nprocs, unsigned long long m);
/* The rank whose result --fault corrupt@M damages: the root where only the root has one. */
int coll_fault_rank(const struct coll_spec *c, int nprocs);

/* ---- colls_move.c: bcast, gather, scatter, allgather(v), alltoall(v), barrier ---- */
int call_bcast(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c);
int call_allgather(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c);
int call_allgatherv(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c);
int call_alltoall(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c);
int call_alltoallv(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c);
int call_barrier(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c);
int call_gather(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c);
int call_scatter(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c);
/* Element i of block b of `rank`'s send buffer, and byte (b, i) of its expected result. */
unsigned char move_input(const struct coll_spec *c, int rank, size_t b, size_t i,
                         unsigned long long m);
int move_expected(const struct coll_spec *c, size_t j, size_t b, size_t i, int rank,
                  unsigned long long m);

/* ---- colls_reduce.c: reduce, allreduce, reduce_scatter(_block), scan, exscan ---- */
int call_reduce(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c);
int call_allreduce(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c);
int call_exscan(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c);
int call_reduce_scatter(unsigned char *s, unsigned char *r, const struct call_shape *sh,
                        MPI_Comm c);
int call_reduce_scatter_block(unsigned char *s, unsigned char *r, const struct call_shape *sh,
                              MPI_Comm c);
int call_scan(unsigned char *s, unsigned char *r, const struct call_shape *sh, MPI_Comm c);
/* Element j of every rank's input vector (kept small: no sum over ranks exceeds 255). */
unsigned char reduce_input(size_t j, unsigned long long m, int nprocs);
/* Byte j of `rank`'s expected result, -1 = not checked. */
int reduce_expected(const struct coll_spec *c, size_t j, const struct call_shape *sh, int rank,
                    int nprocs, unsigned long long m);

#endif
